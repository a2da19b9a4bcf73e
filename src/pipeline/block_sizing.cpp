#include "pipeline/block_sizing.hpp"

#include <algorithm>

namespace kbench {

int next_block_calls(double slowest_median_device_us, double slowest_wall_per_call_s) {
  // The floor only guards the division: any median under 40 µs gives kMaxBlockCalls anyway.
  double calls = kBlockTargetUs / std::max(slowest_median_device_us, 1.0);
  if (slowest_wall_per_call_s > 0) {
    calls = std::min(calls, kBlockWallTargetS / slowest_wall_per_call_s);
  }
  // Clamped before the conversion: a tiny wall time per call would overflow an int.
  return static_cast<int>(
      std::clamp(calls, static_cast<double>(kMinBlockCalls), static_cast<double>(kMaxBlockCalls)));
}

} // namespace kbench
