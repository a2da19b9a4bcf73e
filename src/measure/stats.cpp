#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>

namespace kbench::measure {

namespace {

// Percentile of already sorted, non-empty samples.
double sorted_percentile(const std::vector<double>& sorted, double q) {
  q = std::clamp(q, 0.0, 1.0);
  const double position = static_cast<double>(sorted.size() - 1) * q;
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return percentile_lerp(sorted[below], sorted[above], position - static_cast<double>(below));
}

} // namespace

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) {
    return 0; // no samples: the same zero summarize reports, rather than an exception
  }
  std::sort(samples.begin(), samples.end());
  return sorted_percentile(samples, q);
}

SampleStats summarize(const std::vector<double>& samples) {
  SampleStats stats;
  stats.n = samples.size();
  if (samples.empty()) {
    return stats;
  }
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.median = sorted_percentile(sorted, 0.5);
  stats.p10 = sorted_percentile(sorted, 0.1);
  stats.p90 = sorted_percentile(sorted, 0.9);

  double sum = 0;
  for (double x : samples) {
    sum += x;
  }
  stats.mean = sum / static_cast<double>(stats.n);
  if (stats.n >= 2) {
    // Two passes (mean first, then squared deviations) to avoid the cancellation of the
    // sum-of-squares formula on samples with a large mean and a small spread.
    double squares = 0;
    for (double x : samples) {
      squares += (x - stats.mean) * (x - stats.mean);
    }
    stats.std = std::sqrt(squares / static_cast<double>(stats.n - 1));
  }
  stats.noise = stats.mean != 0 ? stats.std / stats.mean : 0;
  return stats;
}

} // namespace kbench::measure
