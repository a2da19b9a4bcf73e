// Tests for the pure parts of src/pipeline/profiling.cpp: when counters are not collected, and
// how the two sides' energy is combined.
#include "pipeline/profiling.hpp"

#include <gtest/gtest.h>

using namespace kbench;

TEST(CountersNotCollected, OnTheCpuEverySideSaysItNeedsAGpu) {
  const auto skipped = counters_not_collected("sol", false, 1);
  ASSERT_TRUE(skipped);
  EXPECT_EQ(skipped->profile, "sol");
  const std::string why = "hardware counters need a GPU; this evaluation ran on the CPU";
  EXPECT_EQ(skipped->skipped_reason, why);
  EXPECT_EQ(skipped->candidate.reason, why);
  EXPECT_EQ(skipped->reference.reason, why);
  EXPECT_EQ(skipped->candidate_energy.reason, why);
  EXPECT_EQ(skipped->reference_energy.reason, why);
}

TEST(CountersNotCollected, SeveralRanksOnGpusAreNotProfiled) {
  const auto skipped = counters_not_collected("full", true, 2);
  ASSERT_TRUE(skipped);
  EXPECT_NE(skipped->skipped_reason.find("collective problems are not profiled"),
            std::string::npos);
}

TEST(CountersNotCollected, OneRankOnAGpuIsProfiled) {
  EXPECT_FALSE(counters_not_collected("sol", true, 1));
}

TEST(AddEnergy, TheRatioIsTheReferencesEnergyOverTheCandidates) {
  CountersInfo info;
  EnergySide candidate, reference;
  candidate.joules_per_call = 0.02;
  reference.joules_per_call = 0.05;
  add_energy(info, candidate, reference);
  ASSERT_TRUE(info.energy_ratio);
  EXPECT_DOUBLE_EQ(*info.energy_ratio, 2.5);
  EXPECT_DOUBLE_EQ(*info.candidate_energy.joules_per_call, 0.02);
  EXPECT_DOUBLE_EQ(*info.reference_energy.joules_per_call, 0.05);
}

TEST(AddEnergy, NoRatioWithoutBothReadingsOrWithAZeroCandidate) {
  CountersInfo missing, zero;
  EnergySide some, none, nothing;
  some.joules_per_call = 0.05;
  nothing.joules_per_call = 0.0;
  add_energy(missing, none, some);
  EXPECT_FALSE(missing.energy_ratio);
  add_energy(zero, nothing, some);
  EXPECT_FALSE(zero.energy_ratio);
}
