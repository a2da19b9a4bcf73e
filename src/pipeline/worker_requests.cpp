#include "pipeline/worker_requests.hpp"

namespace kbench::requests {

// ---- The evaluation's phases.

// ---- The measurement engine and profiling.

} // namespace kbench::requests
