#pragma once
// The clock every stage of an evaluation times itself with (wall time, monotonic).
#include <chrono>

namespace kbench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace kbench
