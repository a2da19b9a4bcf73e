// src/counters/call_counters.cpp: the rule that combines each metric of a call's kernels, the
// combined record, and which kernels are the candidate's own, on hand-made kernels (the recorded
// fixtures of test_counters.cpp cover the same code through derive_call).
#include "counters/call_counters.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace kbench::counters;

namespace {

constexpr const char* kDuration = "gpu__time_duration.sum";

NcuKernel kernel(const std::string& name, const std::map<std::string, double>& values) {
  NcuKernel k;
  k.name = name;
  k.values = values;
  for (const auto& [metric, value] : values) {
    k.units[metric] = metric == kDuration ? "ns" : "";
  }
  return k;
}

} // namespace

TEST(CombineRule, LaunchShapeComesFromTheLongestKernel) {
  EXPECT_EQ(combine_rule("launch__grid_size"), Combine::longest);
  EXPECT_EQ(combine_rule("launch__registers_per_thread"), Combine::longest);
}

TEST(CombineRule, PeaksTakeTheLargestEvenWhenTheyPeakASum) {
  EXPECT_EQ(combine_rule("dram__bytes.sum.peak_sustained"), Combine::max);
  EXPECT_EQ(combine_rule("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"),
            Combine::max);
}

TEST(CombineRule, CountsAndTheDurationAddUp) {
  EXPECT_EQ(combine_rule("gpu__time_duration.sum"), Combine::sum);
  EXPECT_EQ(combine_rule("dram__bytes_read.sum"), Combine::sum);
}

TEST(CombineRule, PercentagesRatesAndClocksAreWeightedMeans) {
  EXPECT_EQ(combine_rule("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            Combine::weighted_mean);
  EXPECT_EQ(combine_rule("dram__bytes.sum.per_second"), Combine::weighted_mean);
  EXPECT_EQ(combine_rule("sm__cycles_elapsed.avg.per_second"), Combine::weighted_mean);
}

TEST(Combine, EachMetricFollowsItsRuleWeightedByDuration) {
  const NcuKernel call = combine({
      kernel("short", {{kDuration, 100},
                       {"dram__bytes_read.sum", 1000},
                       {"dram__bytes.sum.peak_sustained", 64},
                       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 10},
                       {"launch__grid_size", 8}}),
      kernel("long", {{kDuration, 300},
                      {"dram__bytes_read.sum", 500},
                      {"dram__bytes.sum.peak_sustained", 32},
                      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 50},
                      {"launch__grid_size", 128}}),
  });
  EXPECT_DOUBLE_EQ(call.values.at(kDuration), 400);
  EXPECT_DOUBLE_EQ(call.values.at("dram__bytes_read.sum"), 1500);
  EXPECT_DOUBLE_EQ(call.values.at("dram__bytes.sum.peak_sustained"), 64);
  EXPECT_DOUBLE_EQ(call.values.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                   (10.0 * 100 + 50.0 * 300) / 400);
  EXPECT_DOUBLE_EQ(call.values.at("launch__grid_size"), 128);
  EXPECT_EQ(call.units.at(kDuration), "ns");
  EXPECT_EQ(call.name, "all 2 kernels (time-weighted; launch shape of the longest, long)");
}

TEST(Combine, AKernelWithoutADurationWeighsNothingAndIsNeverTheLongest) {
  const NcuKernel call = combine({
      kernel("untimed",
             {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 90}, {"launch__grid_size", 1}}),
      kernel("timed", {{kDuration, 100},
                       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20},
                       {"launch__grid_size", 64}}),
  });
  EXPECT_DOUBLE_EQ(call.values.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 20);
  EXPECT_DOUBLE_EQ(call.values.at("launch__grid_size"), 64);
  EXPECT_NE(call.name.find("longest, timed"), std::string::npos);
}

TEST(Combine, AMeanWithNoWeightAtAllIsZero) {
  const NcuKernel call =
      combine({kernel("a", {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 70}}),
               kernel("b", {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 30}})});
  EXPECT_DOUBLE_EQ(call.values.at("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 0);
}

TEST(Combine, OfEqualDurationsTheFirstKernelIsTheLongest) {
  const NcuKernel call = combine({kernel("first", {{kDuration, 50}, {"launch__grid_size", 2}}),
                                  kernel("second", {{kDuration, 50}, {"launch__grid_size", 4}})});
  EXPECT_DOUBLE_EQ(call.values.at("launch__grid_size"), 2);
  EXPECT_NE(call.name.find("longest, first"), std::string::npos);
}

TEST(Combine, NoKernelsGiveAnEmptyUnnamedRecord) {
  const NcuKernel call = combine({});
  EXPECT_TRUE(call.values.empty());
  EXPECT_TRUE(call.name.empty());
}

TEST(IsOwn, AnOwnNameMatchesAsAWholeIdentifierInsideTheDemangledName) {
  EXPECT_TRUE(is_own("void relu_kernel<float>(float*, int)", {"relu_kernel"}));
  EXPECT_TRUE(is_own("ns::relu_kernel(float*)", {"relu_kernel"}));
  EXPECT_TRUE(is_own("relu_kernel", {"relu_kernel"}));
}

TEST(IsOwn, APrefixOrSuffixOfAnIdentifierIsNotIt) {
  EXPECT_FALSE(is_own("void relu_kernel2(float*)", {"relu_kernel"}));
  EXPECT_FALSE(is_own("void my_relu_kernel(float*)", {"relu_kernel"}));
}

TEST(IsOwn, AnyOfTheNamesWillDoAndNoNamesMatchNothing) {
  EXPECT_TRUE(is_own("void add_kernel(float*)", {"relu_kernel", "add_kernel"}));
  EXPECT_FALSE(is_own("void add_kernel(float*)", {}));
}
