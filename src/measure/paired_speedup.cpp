#include "measure/paired_speedup.hpp"

#include "core/seeding.hpp"
#include "measure/stats.hpp"

#include <algorithm>

namespace kbench::measure {
namespace {

std::optional<double> ratio_of_medians(const std::vector<const PairedBlock*>& chosen) {
  std::vector<double> reference, candidate;
  for (const PairedBlock* block : chosen) {
    reference.insert(reference.end(), block->reference_us.begin(), block->reference_us.end());
    candidate.insert(candidate.end(), block->candidate_us.begin(), block->candidate_us.end());
  }
  const double r = percentile(reference, 0.5);
  const double c = percentile(candidate, 0.5);
  if (r <= 0 || c <= 0) {
    return std::nullopt;
  }
  return r / c;
}

} // namespace

std::optional<SpeedupEstimate> paired_speedup(const std::vector<PairedBlock>& blocks, int resamples,
                                              std::uint64_t seed) {
  std::vector<const PairedBlock*> usable;
  for (const auto& block : blocks) {
    if (!block.reference_us.empty() && !block.candidate_us.empty()) {
      usable.push_back(&block);
    }
  }
  if (usable.empty()) {
    return std::nullopt;
  }
  const auto point = ratio_of_medians(usable);
  if (!point) {
    return std::nullopt;
  }
  SpeedupEstimate estimate;
  estimate.speedup = *point;
  estimate.blocks = usable.size();
  estimate.resamples = std::max(resamples, 0);
  std::vector<double> bootstrap;
  bootstrap.reserve(static_cast<std::size_t>(estimate.resamples));
  JitterRng rng(seed);
  std::vector<const PairedBlock*> chosen(usable.size());
  for (int i = 0; i < estimate.resamples; ++i) {
    for (auto& slot : chosen) {
      slot = usable[static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(usable.size()) - 1))];
    }
    if (const auto ratio = ratio_of_medians(chosen)) {
      bootstrap.push_back(*ratio);
    }
  }
  estimate.low = bootstrap.empty() ? *point : percentile(bootstrap, 0.025);
  estimate.high = bootstrap.empty() ? *point : percentile(bootstrap, 0.975);
  return estimate;
}

std::optional<BlockSpread> block_spread(const std::vector<PairedBlock>& blocks) {
  std::vector<double> reference, candidate;
  for (const auto& block : blocks) {
    if (!block.reference_us.empty() && !block.candidate_us.empty()) {
      reference.push_back(summarize(block.reference_us).median);
      candidate.push_back(summarize(block.candidate_us).median);
    }
  }
  if (reference.size() < 2) {
    return std::nullopt;
  }
  const auto [ref_low, ref_high] = std::minmax_element(reference.begin(), reference.end());
  const auto [cand_low, cand_high] = std::minmax_element(candidate.begin(), candidate.end());
  BlockSpread spread{*ref_low, *ref_high, *cand_low, *cand_high, 1};
  if (*ref_low > 0 && *cand_low > 0) {
    spread.worst_ratio = std::max(*ref_high / *ref_low, *cand_high / *cand_low);
  }
  return spread;
}

} // namespace kbench::measure
