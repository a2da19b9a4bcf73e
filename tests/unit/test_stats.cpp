#include "measure/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kbench::measure {
namespace {

// Expected values follow numpy.percentile(..., method="linear"): position (n - 1) * q.
TEST(Percentile, OddCountUnsorted) {
  const std::vector<double> s = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(percentile(s, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(percentile(s, 0.1), 1.4); // position 0.4
  EXPECT_DOUBLE_EQ(percentile(s, 0.9), 4.6); // position 3.6
  EXPECT_DOUBLE_EQ(percentile(s, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(s, 1.0), 5.0);
}

TEST(Percentile, EvenCountInterpolates) {
  const std::vector<double> s = {40, 10, 30, 20};
  EXPECT_DOUBLE_EQ(percentile(s, 0.5), 25.0);  // position 1.5
  EXPECT_DOUBLE_EQ(percentile(s, 0.25), 17.5); // position 0.75
  EXPECT_DOUBLE_EQ(percentile(s, 0.1), 13.0);  // position 0.3
  EXPECT_DOUBLE_EQ(percentile(s, 0.9), 37.0);  // position 2.7
}

TEST(Percentile, EmptyAndSingle) {
  EXPECT_EQ(percentile({}, 0.5), 0.0);
  EXPECT_EQ(percentile({7.5}, 0.0), 7.5);
  EXPECT_EQ(percentile({7.5}, 0.9), 7.5);
}

TEST(Summarize, FillsEveryField) {
  const SampleStats st = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(st.n, 5u);
  EXPECT_DOUBLE_EQ(st.median, 3.0);
  EXPECT_DOUBLE_EQ(st.mean, 3.0);
  EXPECT_DOUBLE_EQ(st.std, std::sqrt(2.5)); // Bessel: sum of squares 10 over n - 1 = 4
  EXPECT_DOUBLE_EQ(st.min, 1.0);
  EXPECT_DOUBLE_EQ(st.max, 5.0);
  EXPECT_DOUBLE_EQ(st.p10, 1.4);
  EXPECT_DOUBLE_EQ(st.p90, 4.6);
  EXPECT_DOUBLE_EQ(st.noise, std::sqrt(2.5) / 3.0);
}

TEST(Summarize, EvenCount) {
  const SampleStats st = summarize({10, 20, 30, 40});
  EXPECT_EQ(st.n, 4u);
  EXPECT_DOUBLE_EQ(st.median, 25.0);
  EXPECT_DOUBLE_EQ(st.mean, 25.0);
  EXPECT_DOUBLE_EQ(st.std, std::sqrt(500.0 / 3.0));
  EXPECT_DOUBLE_EQ(st.noise, std::sqrt(500.0 / 3.0) / 25.0);
}

TEST(Summarize, Empty) {
  const SampleStats st = summarize({});
  EXPECT_EQ(st.n, 0u);
  EXPECT_EQ(st.median, 0.0);
  EXPECT_EQ(st.mean, 0.0);
  EXPECT_EQ(st.std, 0.0);
  EXPECT_EQ(st.noise, 0.0);
}

TEST(Summarize, SingleSample) {
  const SampleStats st = summarize({12.5});
  EXPECT_EQ(st.n, 1u);
  EXPECT_EQ(st.median, 12.5);
  EXPECT_EQ(st.mean, 12.5);
  EXPECT_EQ(st.min, 12.5);
  EXPECT_EQ(st.max, 12.5);
  EXPECT_EQ(st.p10, 12.5);
  EXPECT_EQ(st.p90, 12.5);
  EXPECT_EQ(st.std, 0.0);
  EXPECT_EQ(st.noise, 0.0);
}

TEST(Summarize, ZeroMeanGivesZeroNoise) {
  const SampleStats st = summarize({-1, 1});
  EXPECT_EQ(st.mean, 0.0);
  EXPECT_DOUBLE_EQ(st.std, std::sqrt(2.0));
  EXPECT_EQ(st.noise, 0.0);
}

TEST(Summarize, LargeOffsetSmallSpreadIsStable) {
  // A naive sum-of-squares formula loses every digit here.
  const SampleStats st = summarize({1e9 + 1, 1e9 + 2, 1e9 + 3});
  EXPECT_DOUBLE_EQ(st.std, 1.0);
}

} // namespace
} // namespace kbench::measure
