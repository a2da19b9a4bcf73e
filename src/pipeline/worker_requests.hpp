#pragma once
// The wire format between kbench and its workers, defined once: every request the pipeline sends
// a worker is built here, and every sender uses these builders, as pygpubench's protocol.h is
// included by both of its sides. python/kbench/worker/handlers.py, the receiving side, points
// here. One JSON object per line each way (src/sandbox/worker_client.hpp).
#include <nlohmann/json.hpp>

namespace kbench::requests {

// ---- The evaluation's phases: hello, static_check, compile, reference, candidate, pool, time,
// ---- problem_check.

// ---- The measurement engine and profiling: time_block, energy, profile.

// One block of paired timing: `calls` timed calls of `target` ("eager" or "compiled") over the
// pool's input sets. The loop's policy (warmup and memory on the first block only) is the
// sender's; the fields are named for the receiver, whose handler reads them by these names.
struct TimeBlock {
  int block = 0;
  int calls = 0;
  std::string target;
  bool warm = false; // no L2 flush before each call
  int pool_size = 0;
  int warmup = 0;
  bool memory = false;            // measure the allocator peak and raw allocations of one call
  bool keep_first_output = false; // write the first timed call's outputs, for a spot check
};
nlohmann::json time_block(const TimeBlock& block);

// Energy per call from NVML's counter, the model called back to back for `seconds`.
nlohmann::json energy(double seconds);

// One call between cudaProfilerStart and Stop, in a worker started under Nsight Compute.
nlohmann::json profile();

} // namespace kbench::requests
