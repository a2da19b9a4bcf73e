#include "bench/paired_speedup/sorting_bootstrap.hpp"
#include "measure/median_interval.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stopping_rule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kbench::measure;

// Samples spread evenly by `spread` (relative) around 100 µs, in an order that keeps any prefix
// spread alike.
double sample(int i, double spread) {
  return 100.0 * (1 + spread * (((i * 7919) % 101) / 50.0 - 1));
}

TEST(StoppingRule, StopsOnceTheMediansIntervalIsWithinThePrecision) {
  StoppingRule rule({.min_samples = 10, .precision = 0.01});
  for (int i = 0; i < 9; ++i) {
    rule.add(sample(i, 0.005)); // ±0.5 %: any interval lies inside ±1 %
  }
  EXPECT_EQ(rule.judge(0), StopReason::none); // 9 of the 10 samples required
  EXPECT_NE(rule.unmet().find("9 samples of the 10 required"), std::string::npos) << rule.unmet();
  rule.add(sample(9, 0.005));
  EXPECT_EQ(rule.judge(0), StopReason::converged);
  ASSERT_TRUE(rule.interval());
  EXPECT_LE(rule.interval()->low, rule.interval()->median);
  EXPECT_GE(rule.interval()->high, rule.interval()->median);
}

TEST(StoppingRule, NoisySamplesNeedMoreOfThemAndNoiseDoesNotStopIt) {
  // ±20 % spread: the median's interval narrows as 1/sqrt(n), so it takes hundreds of
  // samples to reach ±1 %, where the old rule (relative std under 0.5 %) never converged.
  StoppingRule rule({.min_samples = 10, .precision = 0.01});
  int n = 0;
  StopReason reason = StopReason::none;
  while (reason == StopReason::none && n < 100000) {
    rule.add(sample(n++, 0.2));
    if (n % 50 == 0) {
      reason = rule.judge(0);
    }
  }
  EXPECT_EQ(reason, StopReason::converged);
  EXPECT_GT(n, 200);
  EXPECT_LT(n, 20000);
}

TEST(StoppingRule, AQuantisedTimerStopsAtItsResolution) {
  // A 1.7 µs kernel on a clock with 32 ns steps: the samples take three values, 2 % apart,
  // and the median's interval cannot become narrower than one step.
  StoppingRule rule({.min_samples = 10, .precision = 0.001});
  for (int i = 0; i < 200; ++i) {
    rule.add(i % 4 == 0 ? 1.728 : (i % 4 == 1 ? 1.664 : 1.696));
  }
  EXPECT_EQ(rule.judge(0), StopReason::resolution);
  ASSERT_TRUE(rule.interval());
  EXPECT_NEAR(rule.interval()->resolution, 0.032, 1e-9);
  EXPECT_TRUE(rule.interval()->at_resolution);
}

TEST(StoppingRule, NoMinimumOfMeasuredTimeUnlessAsked) {
  StoppingRule quick({.min_samples = 10, .precision = 0.01});
  StoppingRule slow({.min_samples = 10, .precision = 0.01, .min_time_s = 1.0});
  for (int i = 0; i < 20; ++i) {
    quick.add(1000.0);
    slow.add(1000.0); // 20 ms < 1 s
  }
  EXPECT_NE(quick.judge(0), StopReason::none);
  EXPECT_EQ(slow.judge(0), StopReason::none);
  EXPECT_NE(slow.unmet().find("s of measured time"), std::string::npos) << slow.unmet();
}

TEST(StoppingRule, WallClockCap) {
  StoppingRule rule({.min_samples = 10, .timeout_s = 2.0});
  rule.add(100.0);
  EXPECT_EQ(rule.judge(0.5), StopReason::none);
  rule.add(100.0);
  EXPECT_EQ(rule.judge(2.5), StopReason::timeout);
  EXPECT_NE(rule.unmet().find("2 samples of the 10 required"), std::string::npos);
}

TEST(MedianInterval, CoversTheMedianAndShrinksWithMoreSamples) {
  EXPECT_FALSE(median_interval({1, 2, 3, 4, 5}));
  std::mt19937 rng(7);
  std::lognormal_distribution<double> timing(std::log(100.0), 0.1);
  std::vector<double> samples;
  double previous_width = 1e300;
  for (const int n : {20, 200, 2000}) {
    while (samples.size() < static_cast<std::size_t>(n)) {
      samples.push_back(timing(rng));
    }
    const auto interval = median_interval(samples);
    ASSERT_TRUE(interval);
    EXPECT_LE(interval->low, interval->median);
    EXPECT_GE(interval->high, interval->median);
    EXPECT_LT(interval->high - interval->low, previous_width);
    EXPECT_FALSE(interval->at_resolution);
    previous_width = interval->high - interval->low;
  }
}

TEST(MedianInterval, CoverageIsAbout95PercentOnSkewedTimings) {
  // 2000 experiments of 50 lognormal samples: the interval holds the true median (100) in
  // about 95 % of them (order statistics give at least 95 %, a little more at small n).
  std::mt19937 rng(11);
  std::lognormal_distribution<double> timing(std::log(100.0), 0.3);
  int covered = 0;
  for (int experiment = 0; experiment < 2000; ++experiment) {
    std::vector<double> samples(50);
    for (auto& v : samples) {
      v = timing(rng);
    }
    const auto interval = median_interval(samples);
    covered += interval->low <= 100.0 && 100.0 <= interval->high ? 1 : 0;
  }
  EXPECT_GE(covered, 1880); // 94 %
  EXPECT_LE(covered, 1990); // 99.5 %: an interval that covers always is too wide
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
