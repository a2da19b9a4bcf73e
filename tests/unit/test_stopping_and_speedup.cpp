#include "bench/paired_speedup/sorting_bootstrap.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stopping_rule.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace kbench::measure;

TEST(StoppingRule, StopsOnceQuietLongAndManyEnough) {
  StoppingRule rule({.min_samples = 10, .max_noise = 0.005, .min_time_s = 0.001});
  StopReason reason = StopReason::none;
  int calls = 0;
  while (reason == StopReason::none && calls < 1000) {
    reason = rule.add(100.0 + (calls % 2) * 0.1, 0.0); // 100 µs, 0.05 % noise
    ++calls;
  }
  EXPECT_EQ(reason, StopReason::converged);
  EXPECT_EQ(calls, 10); // 10 samples of 100 µs = 1 ms of measured time
}

TEST(StoppingRule, NeedsTheMinimumMeasuredTime) {
  StoppingRule rule({.min_samples = 10, .max_noise = 0.005, .min_time_s = 0.01});
  int calls = 0;
  while (rule.add(1000.0, 0.0) == StopReason::none) {
    ++calls;
  }
  EXPECT_EQ(calls + 1, 10); // 10 x 1 ms = 10 ms
  StoppingRule slow({.min_samples = 10, .max_noise = 0.005, .min_time_s = 1.0});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(slow.add(1000.0, 0.0), StopReason::none); // 20 ms < 1 s
  }
  EXPECT_NE(slow.unmet().find("s of measured time"), std::string::npos) << slow.unmet();
}

TEST(StoppingRule, NoisySamplesPlateau) {
  StoppingRule rule({.min_samples = 10, .max_noise = 0.001, .min_time_s = 0.0});
  StopReason reason = StopReason::none;
  int calls = 0;
  while (reason == StopReason::none && calls < 10000) {
    reason = rule.add(calls % 2 ? 90.0 : 110.0, 0.0); // 10 % noise that never falls
    ++calls;
  }
  EXPECT_EQ(reason, StopReason::plateau);
  EXPECT_GT(rule.noise(), 0.09);
}

TEST(StoppingRule, WallClockCap) {
  StoppingRule rule({.min_samples = 10, .timeout_s = 2.0});
  EXPECT_EQ(rule.add(100.0, 0.5), StopReason::none);
  EXPECT_EQ(rule.add(100.0, 2.5), StopReason::timeout);
  EXPECT_NE(rule.unmet().find("2 samples of the 10 required"), std::string::npos);
}

TEST(PairedSpeedup, EqualSidesGiveOneInsideTheInterval) {
  std::vector<PairedBlock> blocks;
  for (int b = 0; b < 20; ++b) {
    blocks.push_back({{100.0 + b, 101.0 + b, 99.0 + b}, {100.5 + b, 100.0 + b, 99.5 + b}});
  }
  const auto estimate = paired_speedup(blocks);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_NEAR(estimate->speedup, 1.0, 0.01);
  EXPECT_LE(estimate->low, 1.0);
  EXPECT_GE(estimate->high, estimate->speedup);
  EXPECT_EQ(estimate->blocks, 20u);
}

TEST(PairedSpeedup, TwiceAsFastUnderDriftIsTwoWithANarrowInterval) {
  std::vector<PairedBlock> blocks;
  for (int b = 0; b < 20; ++b) {
    const double drift = 1.0 + 0.02 * b; // both sides slow down together
    blocks.push_back({{200.0 * drift}, {100.0 * drift}});
  }
  const auto estimate = paired_speedup(blocks);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_NEAR(estimate->speedup, 2.0, 0.05);
  EXPECT_GT(estimate->low, 1.8);
  EXPECT_LT(estimate->high, 2.2);
}

TEST(PairedSpeedup, DeterministicAndEmptySafe) {
  std::vector<PairedBlock> blocks = {{{10, 12}, {5, 6}}, {{11}, {5}}, {{13}, {7}}};
  const auto a = paired_speedup(blocks, 500, 7);
  const auto b = paired_speedup(blocks, 500, 7);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_FALSE(paired_speedup({}).has_value());
  EXPECT_FALSE(paired_speedup({{{10}, {}}}).has_value());
}

// The engine's weighted scan over one sorted order gives the sorting bootstrap's answer to the
// bit, for uneven blocks, ties and an even or odd number of samples.
TEST(PairedSpeedup, TheWeightedScanMatchesSortingTheResampledUnion) {
  std::mt19937 rng(3);
  for (const int blocks : {1, 2, 7, 40}) {
    std::vector<PairedBlock> data(static_cast<std::size_t>(blocks));
    for (auto& block : data) {
      const int n = 1 + static_cast<int>(rng() % 9);
      for (int i = 0; i < n; ++i) {
        block.reference_us.push_back(1.0 + static_cast<double>(rng() % 50)); // ties on purpose
        block.candidate_us.push_back(1.0 + static_cast<double>(rng() % 20) / 4);
      }
    }
    const auto expected = kbench::bench::sorting_bootstrap(data, 300, 11);
    const auto actual = paired_speedup(data, 300, 11);
    ASSERT_TRUE(expected && actual);
    EXPECT_EQ(actual->speedup, expected->speedup) << blocks << " blocks";
    EXPECT_EQ(actual->low, expected->low) << blocks << " blocks";
    EXPECT_EQ(actual->high, expected->high) << blocks << " blocks";
  }
}
