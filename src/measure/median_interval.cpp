#include "measure/median_interval.hpp"

#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kbench::measure {

std::optional<MedianInterval> median_interval(std::vector<double> samples) {
  const std::size_t n = samples.size();
  if (n < 6) {
    return std::nullopt;
  }
  std::sort(samples.begin(), samples.end());
  // Ranks (1-based) n/2 - z·sqrt(n)/2 and 1 + n/2 + z·sqrt(n)/2, the normal approximation of the
  // binomial that counts the samples below the median (Conover, Practical Nonparametric
  // Statistics, §3.2).
  const double half = 0.5 * 1.959964 * std::sqrt(static_cast<double>(n));
  const auto lower = static_cast<std::size_t>(
      std::clamp(std::floor(static_cast<double>(n) / 2 - half), 1.0, static_cast<double>(n)));
  const auto upper = static_cast<std::size_t>(
      std::clamp(std::ceil(1 + static_cast<double>(n) / 2 + half), 1.0, static_cast<double>(n)));
  MedianInterval out;
  out.n = n;
  out.median = percentile(samples, 0.5);
  out.low = samples[lower - 1];
  out.high = samples[upper - 1];
  double step = std::numeric_limits<double>::infinity();
  for (std::size_t i = 1; i < n; ++i) {
    if (samples[i] > samples[i - 1]) {
      step = std::min(step, samples[i] - samples[i - 1]);
    }
  }
  out.resolution = std::isfinite(step) ? step : 0;
  // A relative slack: a step read from the samples' differences carries their rounding.
  out.at_resolution = out.high - out.low <= out.resolution * (1 + 1e-9);
  return out;
}

double relative_half_width(double low, double high, double point) {
  if (!(point > 0)) {
    return std::numeric_limits<double>::infinity();
  }
  return (high - low) / 2 / point;
}

} // namespace kbench::measure
