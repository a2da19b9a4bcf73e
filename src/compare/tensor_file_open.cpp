#include "compare/tensor_file_open.hpp"

#include "compare/safetensors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

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
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int stat_error = errno;
  OpenedTensorFile opened;
  if (stat_ok && S_ISREG(st.st_mode)) {
    // The stream reads the descriptor's file itself (/proc/self/fd names the open file, not a
    // path that could be swapped), so what was checked is what is read.
    opened.stream.open("/proc/self/fd/" + std::to_string(fd), std::ios::binary);
    opened.size = static_cast<std::uint64_t>(st.st_size);
  }
  ::close(fd);
  if (!stat_ok) {
    fail(path, std::string("cannot stat file: ") + std::strerror(stat_error));
  }
  // Refusing FIFOs and devices keeps a hostile writer from making the reader block forever.
  if (!S_ISREG(st.st_mode)) {
    fail(path, "not a regular file");
  }
  if (!opened.stream) {
    fail(path, "cannot open file");
  }
  return opened;
}

} // namespace kbench::compare
