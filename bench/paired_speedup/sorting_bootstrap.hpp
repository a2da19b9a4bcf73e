#pragma once
// The speedup bootstrap as it was first written: each resample gathers the drawn blocks'
// samples and sorts them. The engine now scans one sorted order with per-block weights
// (src/measure/paired_speedup.cpp); this is the baseline of bench/paired_speedup and the
// oracle of the unit test that the two agree to the bit.
#include "core/seeding.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stats.hpp"

#include <optional>
#include <vector>

namespace kbench::bench {

inline std::optional<measure::SpeedupEstimate>
sorting_bootstrap(const std::vector<measure::PairedBlock>& blocks, int resamples = 2000,
                  std::uint64_t seed = 1) {
  const auto ratio = [](const std::vector<const measure::PairedBlock*>& chosen) {
    std::vector<double> reference, candidate;
    for (const auto* block : chosen) {
      reference.insert(reference.end(), block->reference_us.begin(), block->reference_us.end());
      candidate.insert(candidate.end(), block->candidate_us.begin(), block->candidate_us.end());
    }
    return measure::percentile(reference, 0.5) / measure::percentile(candidate, 0.5);
  };
  std::vector<const measure::PairedBlock*> usable;
  for (const auto& block : blocks) {
    if (!block.reference_us.empty() && !block.candidate_us.empty()) {
      usable.push_back(&block);
    }
  }
  if (usable.empty()) {
    return std::nullopt;
  }
  measure::SpeedupEstimate estimate;
  estimate.speedup = ratio(usable);
  estimate.blocks = usable.size();
  estimate.resamples = resamples;
  std::vector<double> bootstrap;
  JitterRng rng(seed);
  std::vector<const measure::PairedBlock*> chosen(usable.size());
  for (int i = 0; i < resamples; ++i) {
    for (auto& slot : chosen) {
      slot = usable[static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(usable.size()) - 1))];
    }
    bootstrap.push_back(ratio(chosen));
  }
  estimate.low = measure::percentile(bootstrap, 0.025);
  estimate.high = measure::percentile(bootstrap, 0.975);
  return estimate;
}

} // namespace kbench::bench
