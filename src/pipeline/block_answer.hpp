#pragma once
// One answer of the `time_block` request (pipeline/worker_requests.hpp), read once into typed
// fields so that the paired-timing loop (pipeline/paired_timing.cpp) folds facts, not JSON.
// A worker answers `setup` with its first block only. The answer is untrusted: a field of the
// wrong type throws nlohmann's type_error, which `evaluate` reports as a harness error.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct SetupFacts {
  std::string tracing; // "cupti" or why not
  std::optional<double> tracing_overhead_us, default_sm_mhz;
  bool l2_flush = false;
  std::vector<std::string> own_kernels;
  std::string input_generation;     // "device" or "cpu": where get_inputs() drew (timed_inputs.py)
  std::int64_t input_bytes = 0;     // one input set, for the roofline floor
  std::int64_t output_bytes = 0;    // one call's outputs (0 until a call was sampled)
};

// What CUPTI saw in one timed call.
struct CallFacts {
  int kernel_count = 0, copy_count = 0, set_count = 0;
  double kernel_us = 0, own_kernel_us = 0;
  // Work on another stream that ran past the moment the caller's stream was done (an event
  // recorded on it after forward returned), and by how long: what event timing would miss.
  bool unjoined_stream_work = false;
  double unjoined_tail_us = 0;
  std::map<std::string, int> kernels_by_name;
};

// A timed call whose times are valid (a failed reading is negative and is left out).
struct TimedCall {
  double device_us = 0, host_us = 0;
  std::optional<CallFacts> facts; // when the worker reported them for this call
};

struct BlockAnswer {
  std::optional<SetupFacts> setup;
  std::optional<std::int64_t> peak_memory_bytes, raw_allocated_bytes;
  std::optional<double> compile_s; // torch.compile's first calls (the compiled target)
  std::string method;
  nlohmann::json input_fingerprint; // the first call's inputs, summed per tensor
  std::vector<double> sm_mhz, mem_mhz; // NVML's readings before and after the block
  std::vector<std::string> clock_reasons;
  std::size_t timed_calls = 0;  // every call timed, valid or not
  std::vector<TimedCall> calls; // the valid ones, in order
};

BlockAnswer parse_block(const nlohmann::json& body);

} // namespace kbench
