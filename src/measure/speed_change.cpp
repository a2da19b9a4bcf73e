#include "measure/speed_change.hpp"

#include "measure/stats.hpp"

#include <algorithm>
#include <cmath>

namespace kbench::measure {

bool SpeedChange::changed() const {
  return changed_blocks >= kSpeedChangeMinBlocks &&
         static_cast<double>(changed_blocks) >= kSpeedChangeMinShare * static_cast<double>(blocks);
}

std::optional<SpeedChange> speed_change(const std::vector<PairedBlock>& blocks) {
  // Per block, in logs: each side's median, their common level and their difference.
  std::vector<double> log_reference, log_candidate, common, difference;
  for (const auto& block : blocks) {
    if (block.reference_us.empty() || block.candidate_us.empty()) {
      continue;
    }
    const double r = summarize(block.reference_us).median;
    const double c = summarize(block.candidate_us).median;
    if (!(r > 0) || !(c > 0)) {
      return std::nullopt;
    }
    log_reference.push_back(std::log(r));
    log_candidate.push_back(std::log(c));
    common.push_back((log_reference.back() + log_candidate.back()) / 2);
    difference.push_back(log_reference.back() - log_candidate.back());
  }
  const std::size_t n = common.size();
  if (n < 2) {
    return std::nullopt;
  }
  // The lower median, not the mean of the middle two: with a step over half of the blocks the
  // mean of the middle two lies between the two speeds and neither half would look moved.
  std::vector<double> sorted = common;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>((n - 1) / 2),
                   sorted.end());
  const double typical_common = sorted[(n - 1) / 2];
  const double typical_difference = percentile(difference, 0.5);
  const double reference_base = typical_common + typical_difference / 2;
  const double candidate_base = typical_common - typical_difference / 2;

  SpeedChange change;
  change.blocks = n;
  const auto typical = static_cast<std::size_t>(
      std::find(common.begin(), common.end(), typical_common) - common.begin());
  change.reference_typical_us = std::exp(log_reference[typical]);
  change.candidate_typical_us = std::exp(log_candidate[typical]);
  change.block_ratio = std::exp(typical_difference);
  const double threshold = std::log(kSpeedChangeFactor);
  double furthest = 0;
  for (std::size_t b = 0; b < n; ++b) {
    const double x = log_reference[b] - reference_base;
    const double y = log_candidate[b] - candidate_base;
    const double smaller = std::min(std::abs(x), std::abs(y));
    const double larger = std::max(std::abs(x), std::abs(y));
    if (x * y <= 0 || smaller < threshold || smaller < kSpeedChangeSimilarity * larger) {
      continue;
    }
    ++change.changed_blocks;
    if (const double moved = std::abs(x + y) / 2; moved > furthest) {
      furthest = moved;
      change.reference_changed_us = std::exp(log_reference[b]);
      change.candidate_changed_us = std::exp(log_candidate[b]);
      change.factor = std::exp((x + y) / 2);
    }
  }
  return change;
}

} // namespace kbench::measure
