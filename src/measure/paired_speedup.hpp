#pragma once
// Speedup of a candidate over its reference from paired timing blocks (docs/architecture.md, "The
// measurement contract"): the two are timed in alternating blocks (R, C, R, C, ...) so that drift
// in clocks or temperature hits both alike. Speedup = median of all reference samples / median of
// all candidate samples; its 95 % confidence interval comes from a bootstrap over blocks (a block
// keeps its R and C samples together, so what drifted together is resampled together).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kbench::measure {

struct PairedBlock {
  std::vector<double> reference_us;
  std::vector<double> candidate_us;
};

struct SpeedupEstimate {
  double speedup = 0;
  double low = 0;  // 2.5th percentile of the bootstrap distribution
  double high = 0; // 97.5th percentile
  std::size_t blocks = 0;
  int resamples = 0;
};

// Empty when there is no block with samples on both sides, or a median is not positive.
// Deterministic for a given `seed`.
std::optional<SpeedupEstimate> paired_speedup(const std::vector<PairedBlock>& blocks,
                                              int resamples = 2000, std::uint64_t seed = 1);

// How far one side's per-block medians spread: max over min. Alternating blocks protect the
// speedup from slow drift, not from a step: when the GPU's speed changes during timing (another
// process, a memory-clock drop) for longer stretches of one side's blocks than the other's, the
// ratio of medians is wrong, and this spread shows it (a 1.7x step was seen on the H200).
struct BlockSpread {
  double reference_low = 0, reference_high = 0; // the side's lowest and highest block median
  double candidate_low = 0, candidate_high = 0;
  double worst_ratio = 1; // the larger side's high / low
};
// Empty with fewer than two blocks with samples on both sides.
std::optional<BlockSpread> block_spread(const std::vector<PairedBlock>& blocks);

} // namespace kbench::measure
