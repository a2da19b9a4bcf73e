#include "pipeline/worker_requests.hpp"

namespace kbench::requests {

// ---- The evaluation's phases.

// ---- The measurement engine and profiling.

nlohmann::json time_block(const TimeBlock& block) {
  nlohmann::json request = {{"op", "time_block"},     {"block", block.block},
                            {"calls", block.calls},   {"target", block.target},
                            {"warm", block.warm},     {"pool_size", block.pool_size},
                            {"warmup", block.warmup}, {"memory", block.memory}};
  if (block.keep_first_output) {
    request["keep_outputs"] = {0};
  }
  return request;
}

nlohmann::json energy(double seconds) {
  return {{"op", "energy"}, {"seconds", seconds}};
}

nlohmann::json profile() {
  return {{"op", "profile"}};
}

} // namespace kbench::requests
