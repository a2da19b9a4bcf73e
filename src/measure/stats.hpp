#pragma once
// Summary statistics of timing samples. All values keep the unit of the samples (µs here).
#include <cstddef>
#include <vector>

namespace kbench::measure {

struct SampleStats {
  std::size_t n = 0;
  double median = 0, mean = 0, std = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  double noise = 0; // relative standard deviation (std / mean), a fraction, not a percentage
};

// Percentile by linear interpolation between closest ranks (numpy's default), q in [0, 1].
double percentile(std::vector<double> samples, double q);
// std is the Bessel-corrected sample standard deviation (0 for n < 2). Empty input gives n = 0.
SampleStats summarize(const std::vector<double>& samples);

} // namespace kbench::measure
