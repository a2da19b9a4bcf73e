#pragma once
// Summary statistics of timing samples. All values keep the unit of the samples (µs here).
#include "core/sample_stats.hpp"

#include <cstddef>
#include <vector>

namespace kbench::measure {

// Percentile by linear interpolation between closest ranks (numpy's default), q in [0, 1].
double percentile(std::vector<double> samples, double q);

// numpy's _lerp, as percentile interpolates between neighbours: interpolating from the nearer
// end keeps the result exact at t = 0 and t = 1 and matches numpy.percentile bit for bit.
inline double percentile_lerp(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}
// std is the Bessel-corrected sample standard deviation (0 for n < 2). Empty input gives n = 0.
SampleStats summarize(const std::vector<double>& samples);

} // namespace kbench::measure
