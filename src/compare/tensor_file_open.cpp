#include "compare/tensor_file_open.hpp"

#include "compare/safetensors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace kbench::compare {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
  throw TensorFileError(path.string() + ": " + problem);
}

} // namespace

OpenedTensorFile open_tensor_file(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO a hostile writer left must not block; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      fail(path, "file does not exist");
    }
    if (error == ELOOP) {
      fail(path, "is a symbolic link; kbench reads tensor files only as the regular files their "
                 "writer made");
    }
    fail(path, std::string("cannot open file: ") + std::strerror(error));
  }
  // The descriptor is what is checked and then read, not a path that could be swapped.
  OpenedTensorFile opened;
  opened.fd = fd;
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int stat_error = errno;
  opened.size = stat_ok ? static_cast<std::uint64_t>(st.st_size) : 0;
  if (!stat_ok) {
    fail(path, std::string("cannot stat file: ") + std::strerror(stat_error));
  }
  // Refusing FIFOs and devices keeps a hostile writer from making the reader block forever.
  if (!S_ISREG(st.st_mode)) {
    fail(path, "not a regular file");
  }
  return opened;
}

OpenedTensorFile::OpenedTensorFile(OpenedTensorFile&& other) noexcept
    : fd(std::exchange(other.fd, -1)), size(other.size) {}

OpenedTensorFile::~OpenedTensorFile() {
  if (fd >= 0) {
    ::close(fd);
  }
}

bool OpenedTensorFile::read_at(void* out, std::uint64_t offset, std::uint64_t size) const {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t got = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return false; // an error, or the file ended (a writer may have truncated it)
    }
    p += got;
    offset += static_cast<std::uint64_t>(got);
    size -= static_cast<std::uint64_t>(got);
  }
  return true;
}

} // namespace kbench::compare
