#pragma once
// The precision of a median: its 95 % confidence interval from order statistics, and the timer
// resolution the samples show. Order statistics assume nothing about the distribution, which
// GPU timings, with their long right tails and quantised clocks, would not satisfy.
#include <cstddef>
#include <optional>
#include <vector>

namespace kbench::measure {

struct MedianInterval {
  double median = 0;
  double low = 0, high = 0; // 95 %
  // The smallest step between two distinct sample values: the timer's resolution as the samples
  // show it (0 when every sample is equal, and so no step is seen).
  double resolution = 0;
  // The interval spans no more than one step of the timer: more samples cannot narrow it, and a
  // zero-width interval would claim a precision the clock does not have.
  bool at_resolution = false;
  std::size_t n = 0;
};

// Empty below 6 samples, where no pair of order statistics covers the median with 95 %.
std::optional<MedianInterval> median_interval(std::vector<double> samples);

// (high - low) / 2 / point: the interval's half-width relative to its point estimate (infinite
// when the point is not positive).
double relative_half_width(double low, double high, double point);

} // namespace kbench::measure
