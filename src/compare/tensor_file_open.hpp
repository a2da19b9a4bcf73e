#pragma once
// Opening a tensor file for reading without following a symbolic link. Tensor files lie in
// directories the workers write: a candidate could turn its outputs file into a link to the
// reference's (making a link needs no read right on its target), so the reader opens with
// O_NOFOLLOW and judges what it opened (fstat), not the name.
#include <cstdint>
#include <filesystem>

namespace kbench::compare {

// Owns the descriptor; reads with pread, so several threads can read parts of one file at once.
struct OpenedTensorFile {
  OpenedTensorFile() = default;
  OpenedTensorFile(const OpenedTensorFile&) = delete;
  OpenedTensorFile& operator=(const OpenedTensorFile&) = delete;
  OpenedTensorFile(OpenedTensorFile&& other) noexcept;
  OpenedTensorFile& operator=(OpenedTensorFile&&) = delete;
  ~OpenedTensorFile();

  // Exactly `size` bytes from `offset` into `out`; false when the file ends or a read fails.
  bool read_at(void* out, std::uint64_t offset, std::uint64_t size) const;

  int fd = -1;
  std::uint64_t size = 0;
};

// The regular file at `path`, open; throws TensorFileError naming the path when it is missing,
// a symbolic link, not a regular file (a FIFO would block the reader) or unreadable.
OpenedTensorFile open_tensor_file(const std::filesystem::path& path);

} // namespace kbench::compare
