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

} // namespace kbench::measure
