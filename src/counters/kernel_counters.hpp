#pragma once
// The fields an evaluation reports for each kernel of a profiled call, and for the whole call
// (time-weighted), derived from Nsight Compute's metrics: speed of light, DRAM, FLOP/s per
// precision, roofline position, bottleneck, dominant pipe, SOL score, occupancy, launch shape,
// caches and warp stalls. No field is ever blank: each has a value (or a word, for the
// categorical ones) or the reason it has none. docs/counters.md documents every rule.
// kernel_counters.cpp derives a kernel, call_counters.cpp combines the kernels into the call and
// counters_json.cpp writes the JSON form, which counters_json.hpp declares and this header
// includes: whoever derives counters also stores them.
#include "counters/counters_json.hpp"
#include "counters/gpu_specs.hpp"
#include "counters/ncu_report.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kbench::counters {

struct CounterField {
  std::string id;              // "dram_throughput"
  std::optional<double> value; // numeric fields
  std::string text;            // categorical fields ("memory", "fma")
  std::string unit;            // "%", "GB/s", "FLOP/s", "us", "FLOP/B", "B/block", ...
  std::string detail;          // how it was decided, when that is not obvious
  std::string reason;          // when there is neither value nor text: why
};

struct StallShare {
  std::string reason; // "long_scoreboard", ..., "other"
  double percent = 0; // of all stall cycles; the top five and "other" sum to 100
};

struct KernelCounters {
  std::string name;
  bool own = false; // compiled by the candidate (its __global__ / @triton.jit names)
  std::vector<CounterField> fields;
  std::vector<StallShare> stalls;
  std::string stalls_reason; // when `stalls` is empty
  // Not reported as fields, for the roofline floor and chart (pipeline/profiling): the FLOP of
  // every precision, and the peak table's key of the precision doing most of them ("" when none).
  double flop = 0;
  std::string peak_key;

  const CounterField* field(const std::string& id) const;
  std::optional<double> value(const std::string& id) const;
};

struct CallCounters {
  std::vector<KernelCounters> kernels; // in launch order
  KernelCounters call;                 // all kernels together, time-weighted
};

// `set` is the profile set that was collected ("sol" or "full"): a field whose metrics only the
// other set collects says so. `specs` gives the ridge points (dense peaks at the boost clock).
KernelCounters derive_kernel(const NcuKernel& kernel, const std::string& set,
                             const GpuSpecs& specs);
// Every kernel, and the call: sums of counts and durations, duration-weighted means of rates
// and percentages, the launch shape of the longest kernel; then the same derivation.
CallCounters derive_call(const NcuReport& report, const std::string& set, const GpuSpecs& specs,
                         const std::vector<std::string>& own_kernel_names);

} // namespace kbench::counters
