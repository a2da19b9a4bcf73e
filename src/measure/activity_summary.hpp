#pragma once
// What one timed call did on the GPU, from the CUPTI records of its window (docs/architecture.md,
// "The measurement contract"): device_us over every stream, launches by name, copies, sets,
// allocations, the streams used and whether work on them was left running after the caller's
// stream was done, and the share of GPU time spent in the candidate's own kernels. Pure logic on
// ActivityRecord values, so it is tested on the CPU with synthetic records.
#include "measure/activity_record.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kbench::measure {

struct NameStats {
  std::uint64_t count = 0;
  double total_us = 0;
};

struct CountBytes {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

struct CallActivity {
  // Kernels, copies and sets, on every stream.
  double device_us = 0; // last end - first start; 0 without device work
  double busy_us = 0;   // length of the union of their intervals (gaps excluded)
  double kernel_us = 0; // sum of kernel durations (overlapping kernels count twice)
  double copy_us = 0;
  double set_us = 0;
  std::optional<std::uint64_t> first_start_ns; // empty without device work
  std::optional<std::uint64_t> last_end_ns;
  std::uint64_t kernel_count = 0;
  std::map<std::string, NameStats> kernels_by_name; // demangled name -> launches, time
  std::uint64_t copy_count = 0;
  std::uint64_t copy_bytes = 0;
  std::map<std::string, CountBytes> copies_by_kind; // "HtoD", "DtoD", ...
  std::uint64_t set_count = 0;
  std::uint64_t set_bytes = 0;
  // Memory records (cudaMalloc, cudaFree, cudaMallocAsync ... seen by CUPTI; torch's caching
  // allocator only shows when it grows or releases a segment).
  std::uint64_t allocation_count = 0;
  std::uint64_t free_count = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t freed_bytes = 0;
  std::uint64_t peak_net_allocated_bytes = 0; // highest (allocated - freed) along the window
  std::map<std::string, CountBytes> allocations_by_memory_kind;
  // Streams.
  std::uint32_t caller_stream_id = 0;
  std::set<std::uint32_t> streams; // every stream that ran a kernel, copy or set
  // Some work ran on a stream other than the caller's, joined back or not: a fact (a fork and
  // join to a side stream is ordinary code), not a verdict.
  bool off_caller_stream_work = false;
  // When the caller's stream was done: an event recorded on it right after forward returned,
  // waited for, then CUPTI's clock read (empty when the caller gave none).
  std::optional<std::uint64_t> caller_done_ns;
  // Work on another stream that ended after caller_done_ns: the caller's stream was never made
  // to wait for it, so event timing on the caller's stream would miss it. Without
  // caller_done_ns, measured from the caller stream's last work instead (from the first work
  // when it ran none), which cannot tell a joined side stream whose work ends last from one
  // that was never joined.
  bool unjoined_stream_work = false;
  double unjoined_tail_us = 0; // how long past that point the last such work ended
  std::optional<std::uint32_t> legacy_default_stream_id; // when the caller could resolve it
  bool legacy_default_stream = false; // some work ran on the legacy default stream
  // The candidate's own kernels (is_own_kernel).
  std::uint64_t own_kernel_count = 0;
  double own_kernel_us = 0;
  double own_kernel_share = 0; // own_kernel_us / kernel_us; 0 without kernels
  // Bookkeeping.
  std::uint64_t records_in_window = 0;
  std::uint64_t untimed_records = 0; // no timestamps: flushed before completion; not windowed

  nlohmann::json to_json() const;
};

// Summarises the records that overlap [window_start_ns, window_end_ns] (CUPTI's clock, as read
// by cuptiGetTimestamp): a kernel, copy or set is kept when it ends at or after the start and
// starts at or before the end; an allocation or free when its instant lies in the window.
// Intervals are not clipped to the window: the window only selects which work belongs to the
// call (the caller synchronises the device before opening it).
//
// caller_done_ns: see CallActivity::unjoined_stream_work. Whatever the event on the caller's
// stream waited for (an explicit join, or the legacy default stream's implicit wait for blocking
// streams, those cudaStreamCreate makes; torch's own streams are non-blocking) ended before it,
// so the verdict is the one event timing on that stream would reach.
//
// legacy_default_stream_id: the CUPTI id of the legacy default stream (CU_STREAM_LEGACY, as
// CuptiTracer::stream_id(0, 0x1) resolves it in the caller's context). CUPTI records carry no
// flag for it, only the id, so without this the field stays false.
CallActivity summarize_call(const std::vector<ActivityRecord>& records,
                            std::uint64_t window_start_ns, std::uint64_t window_end_ns,
                            std::uint32_t caller_stream_id,
                            const std::vector<std::string>& own_kernel_names = {},
                            std::optional<std::uint32_t> legacy_default_stream_id = std::nullopt,
                            std::optional<std::uint64_t> caller_done_ns = std::nullopt);

// The function's own identifier in a demangled kernel name: "relu_kernel" for
// "void ns::relu_kernel<float>(float const*, float*, int)", for "relu_kernel(float*)" and for a
// raw "relu_kernel" (Triton, extern "C"). Empty when none can be found.
std::string kernel_base_name(const std::string& demangled);

// True when the kernel's base identifier equals one of own_names (each reduced to its last
// identifier, so "ns::relu_kernel" works too). Exact: "relu_kernel2" is not "relu_kernel".
bool is_own_kernel(const std::string& demangled, const std::vector<std::string>& own_names);

} // namespace kbench::measure
