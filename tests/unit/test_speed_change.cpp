// Unit tests for src/measure/speed_change.cpp with synthetic paired blocks: honest noise, which
// moves each side on its own, is no change of speed; a step that moves both sides alike is.
#include "core/seeding.hpp"
#include "measure/speed_change.hpp"
#include "measure/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace kbench::measure {
namespace {

// Samples of `calls` calls around `us`, each off by up to `noise` (uniform, both ways).
std::vector<double> samples(JitterRng& rng, double us, int calls, double noise) {
  std::vector<double> out;
  for (int i = 0; i < calls; ++i) {
    out.push_back(us * (1 + noise * (2 * rng.uniform01() - 1)));
  }
  return out;
}

// Blocks as the engine takes them: 10 calls in the first, about 20 ms of calls after it; each
// side's samples several % apart, and in a tenth of the blocks one side alone off by up to 15 %
// (what made a side's block medians spread by more than 10 % in most honest GPU results).
// `step(b)` multiplies both sides of block b.
template <typename Step>
std::vector<PairedBlock> honest_blocks(std::uint64_t seed, std::size_t count, double reference_us,
                                       double candidate_us, double noise, Step step) {
  JitterRng rng(seed);
  std::vector<PairedBlock> blocks;
  for (std::size_t b = 0; b < count; ++b) {
    const auto calls = [&](double us) {
      return b == 0 ? 10 : std::clamp(static_cast<int>(20000 / us), 10, 500);
    };
    double r = reference_us * step(b), c = candidate_us * step(b);
    if (rng.uniform01() < 0.1) {
      (rng.uniform01() < 0.5 ? r : c) *= 1 + 0.15 * (2 * rng.uniform01() - 1);
    }
    blocks.push_back({samples(rng, r, calls(r), noise), samples(rng, c, calls(c), noise)});
  }
  return blocks;
}

std::vector<PairedBlock> medians(const std::vector<double>& reference_us,
                                 const std::vector<double>& candidate_us) {
  std::vector<PairedBlock> out;
  for (std::size_t i = 0; i < reference_us.size(); ++i) {
    out.push_back({{reference_us[i]}, {candidate_us[i]}});
  }
  return out;
}

// The old rule's figure: the larger side's highest block median over its lowest.
double one_sided_spread(const std::vector<PairedBlock>& blocks) {
  double worst = 1;
  for (auto side : {&PairedBlock::reference_us, &PairedBlock::candidate_us}) {
    std::vector<double> m;
    for (const auto& block : blocks) {
      m.push_back(summarize(block.*side).median);
    }
    const auto [low, high] = std::minmax_element(m.begin(), m.end());
    worst = std::max(worst, *high / *low);
  }
  return worst;
}

const auto kSteady = [](std::size_t) { return 1.0; };

} // namespace

TEST(SpeedChange, HonestNoisyBlocksOfSmallKernelsAreNoChange) {
  // 5, 20 and 50 µs kernels with 8 % sample noise, a candidate a little faster or slower.
  for (const auto& [seed, reference, candidate] :
       {std::tuple{1u, 5.0, 4.2}, std::tuple{2u, 20.0, 23.0}, std::tuple{3u, 50.0, 31.0}}) {
    const auto blocks = honest_blocks(seed, 300, reference, candidate, 0.08, kSteady);
    EXPECT_GT(one_sided_spread(blocks), 1.10) << "the old rule would have fired, seed " << seed;
    const auto change = speed_change(blocks);
    ASSERT_TRUE(change);
    EXPECT_EQ(change->blocks, 300U);
    EXPECT_FALSE(change->changed()) << change->changed_blocks << " blocks, seed " << seed;
    EXPECT_NEAR(change->block_ratio, reference / candidate, 0.02 * reference / candidate);
  }
}

TEST(SpeedChange, A17xStepInBothSidesForPartOfTheRunIsAChange) {
  const auto blocks = honest_blocks(4, 100, 97, 102, 0.02,
                                    [](std::size_t b) { return b >= 40 && b < 70 ? 1.7 : 1.0; });
  const auto change = speed_change(blocks);
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->changed());
  EXPECT_EQ(change->changed_blocks, 30U); // a one-sided wander on top does not hide one
  // The furthest block: the step, give or take a one-sided wander on top (half of 15 %).
  EXPECT_GT(change->factor, 1.7 / 1.08);
  EXPECT_LT(change->factor, 1.7 * 1.08);
  // The typical block may be one of the wandering ones.
  EXPECT_NEAR(change->reference_typical_us, 97, 0.15 * 97);
  EXPECT_NEAR(change->candidate_typical_us, 102, 0.15 * 102);
  EXPECT_NEAR(change->block_ratio, 97.0 / 102.0, 0.02);
}

// With a step over exactly half of an even count, the mean of the middle two common levels
// would lie between the two speeds; the lower median is one of them.
TEST(SpeedChange, AStepOverHalfOfTheBlocksIsStillSeen) {
  const auto change = speed_change(medians({97, 97, 165, 165}, {102, 102, 174, 174}));
  ASSERT_TRUE(change);
  EXPECT_EQ(change->changed_blocks, 2U);
  EXPECT_TRUE(change->changed());
  EXPECT_DOUBLE_EQ(change->reference_typical_us, 97);
  EXPECT_NEAR(change->factor, 1.70, 0.01);
}

TEST(SpeedChange, AFasterStretchIsAChangeToo) {
  const auto change = speed_change(medians({100, 100, 100, 60, 60}, {80, 80, 80, 48, 48}));
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->changed());
  EXPECT_NEAR(change->factor, 0.6, 1e-9);
  EXPECT_DOUBLE_EQ(change->reference_changed_us, 60);
  EXPECT_DOUBLE_EQ(change->candidate_changed_us, 48);
}

TEST(SpeedChange, SidesMovingApartOrUnalikeAreNoChangeOfTheGpusSpeed) {
  // Opposite ways: one side's kernel got slower while the other's got faster.
  EXPECT_EQ(speed_change(medians({100, 100, 100, 150, 150}, {50, 50, 50, 35, 35}))->changed_blocks,
            0U);
  // The same way, but 1.25x against 2.5x: the smaller move is under a third of the larger.
  EXPECT_EQ(
      speed_change(medians({100, 100, 100, 125, 125}, {50, 50, 50, 125, 125}))->changed_blocks, 0U);
  // Both moved, but under 1.2x.
  EXPECT_EQ(speed_change(medians({100, 100, 100, 119, 119}, {50, 50, 50, 59, 59}))->changed_blocks,
            0U);
  EXPECT_EQ(speed_change(medians({100, 100, 100, 121, 121}, {50, 50, 50, 61, 61}))->changed_blocks,
            2U);
}

TEST(SpeedChange, OneBlockOrAFewOfManyAreNoChange) {
  // One block of both sides slowed: a blip, not a change a median of the run would show.
  auto blip = honest_blocks(5, 50, 20, 20, 0.02, [](std::size_t b) { return b == 20 ? 1.7 : 1.0; });
  auto change = speed_change(blip);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->changed_blocks, 1U);
  EXPECT_FALSE(change->changed());
  // Five of a hundred: under a tenth of the blocks.
  auto few = honest_blocks(6, 100, 20, 20, 0.02, [](std::size_t b) { return b < 5 ? 1.7 : 1.0; });
  change = speed_change(few);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->changed_blocks, 5U);
  EXPECT_FALSE(change->changed());
  // Ten of a hundred: a tenth.
  auto tenth =
      honest_blocks(6, 100, 20, 20, 0.02, [](std::size_t b) { return b < 10 ? 1.7 : 1.0; });
  EXPECT_TRUE(speed_change(tenth)->changed());
}

TEST(SpeedChange, NeedsTwoBlocksWithSamplesOnBothSidesAndPositiveTimes) {
  EXPECT_FALSE(speed_change({}));
  EXPECT_FALSE(speed_change(medians({100}, {50})));
  EXPECT_FALSE(speed_change({{{100}, {50}}, {{100}, {}}})); // the second has no candidate side
  EXPECT_FALSE(speed_change(medians({100, 0}, {50, 50})));
  const auto two = speed_change(medians({100, 100}, {50, 50}));
  ASSERT_TRUE(two);
  EXPECT_EQ(two->blocks, 2U);
  EXPECT_FALSE(two->changed());
  EXPECT_DOUBLE_EQ(two->block_ratio, 2.0);
  EXPECT_DOUBLE_EQ(two->factor, 1.0);
}

} // namespace kbench::measure
