// Unit tests for src/pipeline/timing_flags.cpp: each verdict on a finished timing fires on what
// it names and not otherwise, with the sentence a reader sees, from a TimingInfo built by hand
// (the loop that fills one is tested against scripted workers in test_paired_timing.cpp).
#include "pipeline/timing_flags.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace kbench;

namespace {

// A steady timing: reference 200 µs, candidate 100 µs over 20 samples, traced by CUPTI.
TimingInfo steady_timing() {
  TimingInfo timing;
  timing.measured = true;
  TimingSide reference, candidate;
  reference.method = candidate.method = "cupti";
  reference.samples_us.assign(20, 200.0);
  reference.stats_us.n = reference.host_stats_us.n = 20;
  reference.stats_us.median = 200;
  reference.host_stats_us.median = 210;
  candidate.samples_us.assign(20, 100.0);
  candidate.stats_us.n = candidate.host_stats_us.n = 20;
  candidate.stats_us.median = 100;
  candidate.host_stats_us.median = 110;
  timing.reference = reference;
  timing.candidate = candidate;
  timing.speedup = 2.0;
  return timing;
}

std::vector<TimingFlag> flags_of(TimingInfo timing, const TimingObservations& seen = {}) {
  add_flags(timing, seen);
  return timing.flags;
}

std::vector<std::string> ids(const std::vector<TimingFlag>& flags) {
  std::vector<std::string> out;
  for (const auto& flag : flags) {
    out.push_back(flag.id);
  }
  return out;
}

// The one message of flag `id`; fails the test when there is not exactly one.
std::string message_of(const std::vector<TimingFlag>& flags, const std::string& id) {
  const auto count = std::count_if(flags.begin(), flags.end(),
                                   [&](const TimingFlag& flag) { return flag.id == id; });
  EXPECT_EQ(count, 1) << "flag " << id;
  const auto it = std::find_if(flags.begin(), flags.end(),
                               [&](const TimingFlag& flag) { return flag.id == id; });
  return it == flags.end() ? "" : it->message;
}

// Blocks whose per-block medians are `reference_us` and `candidate_us`.
std::vector<measure::PairedBlock> blocks(const std::vector<double>& reference_us,
                                         const std::vector<double>& candidate_us) {
  std::vector<measure::PairedBlock> out;
  for (std::size_t i = 0; i < reference_us.size(); ++i) {
    out.push_back({{reference_us[i]}, {candidate_us[i]}});
  }
  return out;
}

const char* const kNoClocks = "no NVML clock readings; another process on the GPU is one cause";

} // namespace

TEST(TimingFlags, ASteadyTimingRaisesNoFlag) {
  TimingObservations seen;
  seen.cuda = true;
  seen.blocks = blocks({200, 200, 200}, {100, 100, 100});
  seen.input_bytes = 4'800'000;
  seen.peak_bandwidth_bytes_per_s = 4.8e12;
  EXPECT_TRUE(flags_of(steady_timing(), seen).empty());
}

TEST(TimingFlags, ABlockIsThrottledBelowThreeQuartersOfTheDefaultClock) {
  EXPECT_TRUE(throttled_block(1484, 1980));
  EXPECT_FALSE(throttled_block(1485, 1980)); // exactly 75 %
  EXPECT_FALSE(throttled_block(1980, 1980));
  EXPECT_FALSE(throttled_block(1000, std::nullopt)); // no default clock to compare with
  EXPECT_FALSE(throttled_block(0, 1980));            // no reading in the block
}

TEST(TimingFlags, ClockFactsSayWhenNvmlReadNothing) {
  EXPECT_EQ(clock_facts(steady_timing()), kNoClocks);
}

TEST(TimingFlags, ClockFactsSpanEverySideAndJoinTheReasons) {
  TimingInfo timing = steady_timing();
  timing.reference->min_sm_mhz = 1500;
  timing.reference->max_sm_mhz = 1980;
  timing.reference->min_mem_mhz = timing.reference->max_mem_mhz = 3201;
  timing.candidate->min_sm_mhz = 1440;
  timing.candidate->max_sm_mhz = 1700;
  timing.candidate->clock_reasons = {"sw_power_cap", "hw_slowdown"};
  timing.reference_compiled = TimingSide{};
  timing.reference_compiled->min_mem_mhz = 2619;
  timing.reference_compiled->max_sm_mhz = 1990;
  EXPECT_EQ(clock_facts(timing),
            "SM clock 1440-1990 MHz, memory clock 2619-3201 MHz, NVML's reasons for lower "
            "clocks: hw_slowdown, sw_power_cap; with steady clocks, suspect another process on "
            "the GPU");
}

TEST(TimingFlags, ClockFactsWithoutReasonsSayNone) {
  TimingInfo timing = steady_timing();
  timing.candidate->min_sm_mhz = timing.candidate->max_sm_mhz = 1980;
  EXPECT_EQ(clock_facts(timing), "SM clock 1980-1980 MHz, memory clock 0-0 MHz, NVML's reasons "
                                 "for lower clocks: none; with steady clocks, suspect another "
                                 "process on the GPU");
}

TEST(TimingFlags, ThrottledSamplesAreReportedForTheSideThatLostThem) {
  TimingInfo timing = steady_timing();
  timing.candidate->throttled_samples_dropped = 30;
  timing.candidate->default_sm_mhz = 1980;
  const auto flags = flags_of(timing);
  EXPECT_EQ(ids(flags), std::vector<std::string>{"throttled"});
  EXPECT_EQ(message_of(flags, "throttled"),
            std::string("30 of the candidate's samples were taken below 75 % of the default SM "
                        "clock (1980 MHz) and dropped (") +
                kNoClocks + ")");
}

TEST(TimingFlags, AThrottledSideWithNoSampleLeftSaysNoTimeIsReported) {
  TimingInfo timing = steady_timing();
  timing.reference->throttled_samples_dropped = 10;
  timing.reference->samples_us.clear();
  const auto flags = flags_of(timing);
  EXPECT_EQ(message_of(flags, "throttled"),
            std::string("10 of the reference's samples were taken below 75 % of the default SM "
                        "clock (0 MHz) and dropped (") +
                kNoClocks + "); none was left, so no time is reported for it");
}

TEST(TimingFlags, EachThrottledSideHasItsOwnFlagInTheLoopsOrder) {
  TimingInfo timing = steady_timing();
  timing.reference_compiled = timing.reference;
  timing.reference_compiled->throttled_samples_dropped = 5;
  timing.reference->throttled_samples_dropped = 7;
  const auto flags = flags_of(timing);
  ASSERT_EQ(ids(flags), (std::vector<std::string>{"throttled", "throttled"}));
  EXPECT_EQ(flags[0].message.rfind("7 of the reference's samples", 0), 0U) << flags[0].message;
  EXPECT_EQ(flags[1].message.rfind("5 of the torch.compile baseline's samples", 0), 0U)
      << flags[1].message;
}

// No GPU work in a timed call, or a median below the roofline floor, is no flag: it is the
// status impossible_timing, with this sentence.
TEST(ImpossibleMeasurement, CallsWithNoGpuWorkAreCountedAgainstTheCandidatesSamples) {
  TimingObservations seen;
  seen.no_work_calls = 3;
  EXPECT_TRUE(flags_of(steady_timing(), seen).empty());
  EXPECT_EQ(impossible_measurement(steady_timing(), seen, false),
            "3 of 20 timed calls of the candidate caused no GPU work (no kernel, copy or set) on a "
            "CUDA device: its results were computed elsewhere or earlier, so its time is not the "
            "time of its work");
}

TEST(TimingFlags, WorkLeftRunningOffTheCallersStreamNamesTheTail) {
  TimingObservations seen;
  seen.off_stream_calls = 4;
  seen.off_stream_tail_us = 12.34;
  const auto flags = flags_of(steady_timing(), seen);
  EXPECT_EQ(ids(flags), std::vector<std::string>{"off_stream_work"});
  EXPECT_EQ(message_of(flags, "off_stream_work"),
            "in 4 of 20 timed calls the candidate left GPU work running on a stream other than "
            "the caller's after forward returned (up to 12.3 µs after the caller's stream was "
            "done): the caller's stream never waited for it, so event timing on that stream "
            "would miss it; the device time here includes it");
}

TEST(ImpossibleMeasurement, AMedianBelowTheTimeToReadTheInputsIsImpossible) {
  TimingInfo timing = steady_timing();
  timing.candidate->stats_us.median = timing.candidate->host_stats_us.median = 0.5;
  TimingObservations seen;
  seen.input_bytes = 4'800'000;
  seen.peak_bandwidth_bytes_per_s = 4.8e12; // 1 µs to read the inputs once
  EXPECT_TRUE(flags_of(timing, seen).empty());
  EXPECT_EQ(impossible_measurement(timing, seen, false),
            "the candidate's median 0.50 µs is below the time needed just to read its inputs once "
            "from DRAM (4800000 bytes at the GPU's peak 4800 GB/s = 1.00 µs; the reference takes "
            "200.00 µs, and the L2 is flushed before each call): it cannot have read them all");
  // Warm: the inputs may be in L2, faster than the floor assumes.
  EXPECT_EQ(impossible_measurement(timing, seen, true), "");
}

TEST(ImpossibleMeasurement, TheFloorNeedsABandwidthInputsSamplesAndAReferenceAboveIt) {
  TimingInfo timing = steady_timing();
  timing.candidate->stats_us.median = 1.0; // at the floor, not below it
  TimingObservations seen;
  seen.input_bytes = 4'800'000;
  seen.peak_bandwidth_bytes_per_s = 4.8e12;
  EXPECT_EQ(impossible_measurement(timing, seen, false), "");
  timing.candidate->stats_us.median = 0.5;
  TimingObservations no_bandwidth = seen;
  no_bandwidth.peak_bandwidth_bytes_per_s.reset();
  EXPECT_EQ(impossible_measurement(timing, no_bandwidth, false), "");
  TimingObservations no_inputs = seen;
  no_inputs.input_bytes = 0;
  EXPECT_EQ(impossible_measurement(timing, no_inputs, false), "");
  // A reference below the floor too reads only part of its inputs: the floor bounds nothing.
  TimingInfo partial = timing;
  partial.reference->stats_us.median = 0.8;
  EXPECT_EQ(impossible_measurement(partial, seen, false), "");
  timing.candidate->stats_us.n = 0;
  EXPECT_EQ(impossible_measurement(timing, seen, false), "");
}

// What the H200 showed once: both sides 1.7x slower for part of the run. The speedup of the
// pooled medians came out 1.61x where the per-block ratio stayed at 0.95x.
TEST(TimingFlags, AStepInBothSidesOnTheGpuIsUnstableTimingAndNamesTheBrokenSpeedup) {
  TimingObservations seen;
  seen.cuda = true;
  seen.blocks = blocks({97, 97, 97, 165, 165, 165}, {102, 102, 102, 174, 174, 174});
  TimingInfo timing = steady_timing();
  timing.speedup = 1.61;
  const auto flags = flags_of(timing, seen);
  EXPECT_EQ(ids(flags), std::vector<std::string>{"unstable_timing"});
  EXPECT_EQ(message_of(flags, "unstable_timing"),
            std::string("the GPU's speed changed during timing: in 3 of 6 paired blocks both "
                        "sides' medians moved the same way by 1.20x or more (furthest: reference "
                        "165.00 µs and candidate 174.00 µs, against 97.00 µs and 102.00 µs in a "
                        "typical block, 1.70x slower) (") +
                kNoClocks +
                "): the speedup 1.61x (ratio of medians over all samples) differs from the "
                "median per-block ratio 0.95x, which a change that hits both sides alike does not "
                "move: the speedup is unreliable; evaluate again");
}

TEST(TimingFlags, AChangeTheSpeedupSurvivedSaysSo) {
  TimingObservations seen;
  seen.cuda = true;
  seen.blocks = blocks({200, 200, 200, 300, 300}, {100, 100, 100, 150, 150});
  const auto message = message_of(flags_of(steady_timing(), seen), "unstable_timing");
  EXPECT_NE(message.find("in 2 of 5 paired blocks"), std::string::npos) << message;
  EXPECT_NE(message.find("1.50x slower"), std::string::npos) << message;
  EXPECT_NE(message.find("the speedup 2.00x agrees with the median per-block ratio 2.00x"),
            std::string::npos)
      << message;
}

// The old rule (a side's block medians spread by over 10 %) fired on 7 of 11 honest GPU results.
TEST(TimingFlags, OneSidedSpreadOrTheCpuIsNotUnstable) {
  TimingObservations seen;
  seen.cuda = true;
  seen.blocks = blocks({100, 100, 170}, {50, 50, 50}); // the reference alone moved
  EXPECT_TRUE(flags_of(steady_timing(), seen).empty());
  seen.blocks = blocks({100, 170, 170, 100}, {50, 85, 85, 50});
  EXPECT_EQ(ids(flags_of(steady_timing(), seen)), std::vector<std::string>{"unstable_timing"});
  seen.cuda = false;
  EXPECT_TRUE(flags_of(steady_timing(), seen).empty());
}

TEST(TimingFlags, ASpeedupAboveTenIsWorthALook) {
  TimingInfo timing = steady_timing();
  timing.speedup = 12.34;
  const auto flags = flags_of(timing);
  EXPECT_EQ(ids(flags), std::vector<std::string>{"speedup_above_10x"});
  EXPECT_EQ(message_of(flags, "speedup_above_10x"),
            "speedup 12.3x over the eager reference: worth a look for a shortcut (cached "
            "results, skipped work) before it is believed");
  timing.speedup = 10;
  EXPECT_TRUE(flags_of(timing).empty());
}

TEST(TimingFlags, HostLatencyOverThreeTimesTheDeviceTimeIsLaunchBound) {
  TimingInfo timing = steady_timing();
  timing.candidate->stats_us.median = 10;
  timing.candidate->host_stats_us.median = 31;
  const auto flags = flags_of(timing);
  EXPECT_EQ(ids(flags), std::vector<std::string>{"launch_bound"});
  EXPECT_EQ(message_of(flags, "launch_bound"),
            "host latency 31.0 µs is over 3x the device time 10.0 µs: launches and Python, not "
            "the kernels, decide this call's time");
  timing.candidate->host_stats_us.median = 30;
  EXPECT_TRUE(flags_of(timing).empty());
  timing.candidate->host_stats_us.median = 31;
  timing.candidate->method = "cuda_event"; // the flag weighs CUPTI's device time only
  EXPECT_TRUE(flags_of(timing).empty());
}

TEST(TimingFlags, FlagsComeInAFixedOrder) {
  TimingInfo timing = steady_timing();
  timing.candidate->throttled_samples_dropped = 1;
  timing.candidate->stats_us.median = 0.5;
  timing.candidate->host_stats_us.median = 2;
  timing.speedup = 20;
  TimingObservations seen;
  seen.no_work_calls = seen.off_stream_calls = 1;
  seen.input_bytes = 4'800'000;
  seen.peak_bandwidth_bytes_per_s = 4.8e12;
  seen.cuda = true;
  seen.blocks = blocks({100, 100, 200, 200}, {50, 50, 100, 100});
  EXPECT_EQ(ids(flags_of(timing, seen)),
            (std::vector<std::string>{"throttled", "off_stream_work", "unstable_timing",
                                      "speedup_above_10x", "launch_bound"}));
}

TEST(TimingFlags, OwnKernelsThatNeverRanAreDecoys) {
  TimingInfo timing = steady_timing();
  timing.candidate->own_kernel_share = 0;
  timing.candidate->stats_us.n = 5010;
  TimingObservations seen;
  seen.own_kernels = {"relu_kernel", "add_kernel"};
  EXPECT_EQ(decoy_kernels(timing, seen),
            "integrity check failed: the candidate's own kernels (relu_kernel, add_kernel) never "
            "ran in 5010 timed calls; all of its GPU time was in other kernels (torch's or a "
            "library's)");
}

TEST(TimingFlags, OwnKernelsThatRanOrCouldNotBeSeenAreNoDecoys) {
  TimingInfo timing = steady_timing();
  timing.candidate->own_kernel_share = 0;
  TimingObservations seen;
  EXPECT_EQ(decoy_kernels(timing, seen), ""); // declares no kernel of its own
  seen.own_kernels = {"relu_kernel"};
  timing.candidate->own_kernel_share = 0.01;
  EXPECT_EQ(decoy_kernels(timing, seen), "");
  timing.candidate->own_kernel_share.reset(); // no kernel time at all
  EXPECT_EQ(decoy_kernels(timing, seen), "");
  timing.candidate->own_kernel_share = 0;
  timing.candidate->method = "cuda_event"; // no tracing: which kernels ran is unknown
  EXPECT_EQ(decoy_kernels(timing, seen), "");
  timing.candidate->method = "cupti";
  EXPECT_NE(decoy_kernels(timing, seen), "");
}
