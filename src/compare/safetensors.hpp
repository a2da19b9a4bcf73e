#pragma once
// Tensor files between processes (docs/architecture.md, "Formats"): the safetensors format.
// Layout: 8-byte little-endian header length N, N bytes of JSON header
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data buffer. Reading validates everything: a file from a candidate process is hostile.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kbench::compare {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

const char* dtype_name(DType dtype);       // the safetensors spelling: "F32", "BF16", ...
const char* dtype_torch_name(DType dtype); // the torch spelling: "float32", "bfloat16", ...
std::size_t dtype_size(DType dtype);
bool dtype_is_floating(DType dtype);
DType dtype_from_name(const std::string& name); // throws std::invalid_argument on unknown names
std::string shape_string(const std::vector<std::int64_t>& shape); // "[4, 8]"

// Bytes whose resize() leaves new bytes as they are: read_safetensors fills a tensor of up to
// 8 GiB straight from the file, and zeroing it first (on one thread) cost as much as the read.
// Whoever resizes writes every byte before reading it.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      ::new (static_cast<void*>(p)) U; // default-initialised: left as it is
    } else {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  }
};
using Bytes = std::vector<std::byte, UninitializedAllocator<std::byte>>;

struct Tensor {
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  Bytes data; // little-endian, row-major, contiguous

  std::size_t numel() const;
  double value(std::size_t flat_index) const; // converted to double (f16/bf16 decoded exactly)
  // Elements [first, first + count) converted to double into `out`, as value() would: one
  // dtype dispatch per run instead of per element (comparing outputs of 100M elements).
  void decode(std::size_t first, std::size_t count, double* out) const;
};

struct TensorFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Thrown with a message naming the file and what is wrong with it.
class TensorFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

TensorFile read_safetensors(const std::filesystem::path& path);
void write_safetensors(const std::filesystem::path& path, const TensorFile& file);

} // namespace kbench::compare
