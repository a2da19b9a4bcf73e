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

} // namespace kbench::requests
