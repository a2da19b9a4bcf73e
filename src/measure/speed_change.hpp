#pragma once
// Whether the GPU's speed changed during timing, told apart from the noise of each side's
// blocks (docs/architecture.md, "Flags": unstable_timing). A change of the GPU's speed (another
// process on it, a memory-clock drop, the power cap) lasts across a reference block and the
// candidate block after it, so it moves both sides' block medians the same way by a similar
// factor. Noise moves each side on its own. Pure logic on PairedBlock values, so it is tested
// with synthetic blocks (tests/unit/test_speed_change.cpp).
//
// The thresholds, from how block medians behave. A block holds about 20 ms of calls (10 to
// 500), so the median of a 5-50 µs kernel's block is a median of 400-500 cold-L2 samples whose
// own spread is several %: its sampling error is well under 1 %, about 3 % for a 10-call block
// of a noisy kernel. Honest blocks still wander more than that on one side at a time: a side's
// block medians spread by over 10 % in 7 of 11 honest GPU results (issue 14), which is why the
// spread of one side says nothing. The step seen on the H200 moved both sides 1.7x
// (ln 1.7 = 0.53). A block counts as run at another speed when both sides moved the same way
// by kSpeedChangeFactor (1.2x, ln 0.18: twice the one-sided wandering, a third of the step) or
// more, the smaller move at least a third of the larger. A change is reported when at least
// kSpeedChangeMinBlocks blocks, and kSpeedChangeMinShare of all blocks, moved: one block alone
// cannot move a median of thousands of samples, nor tell a change from a coincidence.
#include "measure/paired_speedup.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace kbench::measure {

inline constexpr double kSpeedChangeFactor = 1.2;
inline constexpr double kSpeedChangeSimilarity = 1.0 / 3.0;
inline constexpr std::size_t kSpeedChangeMinBlocks = 2;
inline constexpr double kSpeedChangeMinShare = 0.10;

struct SpeedChange {
  std::size_t blocks = 0;         // blocks with samples on both sides
  std::size_t changed_blocks = 0; // both sides moved alike by kSpeedChangeFactor or more
  // The typical block's medians: the block whose two sides' common level (geometric mean) is
  // the median's, the lower one of an even count, so that it is always a level some block ran
  // at. Each side's moves are measured from that level, split between the sides by the median
  // per-block ratio.
  double reference_typical_us = 0, candidate_typical_us = 0;
  // The changed block that moved furthest, and its common factor against the typical block
  // (geometric mean of both sides' factors; above 1: slower). 1 and 0 µs when none changed.
  double reference_changed_us = 0, candidate_changed_us = 0;
  double factor = 1;
  // Median over blocks of reference median / candidate median: a change that hits both sides of
  // a block alike does not move it, where the ratio of medians over all samples can.
  double block_ratio = 0;

  // Enough blocks moved to speak of a change of the GPU's speed.
  bool changed() const;
};

// Empty with fewer than two blocks with samples on both sides, or a block median not positive.
std::optional<SpeedChange> speed_change(const std::vector<PairedBlock>& blocks);

} // namespace kbench::measure
