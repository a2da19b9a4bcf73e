#pragma once
// Summary statistics of timing samples, as the result schema holds them. measure/stats.hpp
// computes them; the type lives in core so that core/result.hpp needs nothing above core.
#include <cstddef>

namespace kbench {

// All values keep the unit of the samples (µs in the result).
struct SampleStats {
  std::size_t n = 0;
  double median = 0, mean = 0, std = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  double noise = 0; // relative standard deviation (std / mean), a fraction, not a percentage
};

} // namespace kbench
