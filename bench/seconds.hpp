#pragma once
// Wall time of one run of `run`, for the benchmarks that print a ratio against a baseline.
#include <chrono>

namespace kbench::bench {

template <typename F>
double seconds(F&& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace kbench::bench
