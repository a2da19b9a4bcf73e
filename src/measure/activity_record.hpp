#pragma once
// One piece of GPU work seen by CUPTI, in plain C++ types: the tracer converts CUPTI's records
// into these (cupti_records.cpp), and the summary (activity_summary.cpp) reads them, so the summary
// and its tests need neither CUPTI nor a GPU.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kbench::measure {

struct ActivityRecord {
  enum class Kind { kernel, memcpy, memset, memory_alloc, memory_free };
  Kind kind = Kind::kernel;
  // kernel: demangled name (the raw one when it is not a C++ symbol, as with Triton and
  // extern "C" kernels); memcpy: the copy kind ("HtoD", "DtoD", ...); memset: "memset";
  // memory: the memory kind ("device", "pinned", "managed", ...).
  std::string name;
  std::string mangled; // kernels only: the symbol as CUPTI reported it
  // CUPTI's clock (the one cuptiGetTimestamp reads). Memory records are instants: start = end.
  // start = end = 0 means CUPTI could not time the record (flushed before it completed).
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device_id = 0;
  std::uint32_t context_id = 0;
  std::uint32_t stream_id = 0; // 0xFFFFFFFF for synchronous memory operations
  std::uint32_t correlation_id = 0;
  std::uint64_t bytes = 0; // copies, sets, allocations and frees
  // Kernels only.
  std::array<std::int32_t, 3> grid = {0, 0, 0};
  std::array<std::int32_t, 3> block = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t static_shared_bytes = 0;
  std::uint32_t dynamic_shared_bytes = 0;

  bool timed() const { return start_ns != 0 || end_ns != 0; }
  bool is_device_work() const {
    return kind == Kind::kernel || kind == Kind::memcpy || kind == Kind::memset;
  }
};

// "kernel", "memcpy", "memset", "memory_alloc", "memory_free".
std::string_view kind_name(ActivityRecord::Kind kind);

// The demangled C++ name of a symbol, or the symbol itself when it is not a mangled C++ name
// (Triton kernels, extern "C") or the demangler rejects it.
std::string demangle_symbol(const char* symbol);

// demangle_symbol with a memory: a timed loop launches the same few kernels thousands of times,
// and the demangler allocates on every call.
class Demangler {
public:
  const std::string& demangle(const std::string& symbol);

private:
  std::unordered_map<std::string, std::string> m_names; // mangled -> demangled
};

} // namespace kbench::measure
