// The paired R/C timing loop against scripted workers (tests/unit/fakes/timing_worker.py): the
// clocks reach the result and the flags that explain a change of speed are raised, without a GPU.
#include "pipeline/block_sizing.hpp"
#include "pipeline/paired_timing.hpp"
#include "pipeline/timing_stop.hpp"
#include "sandbox/environment.hpp"
#include "sandbox/worker_client.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

using namespace kbench;

namespace {

std::unique_ptr<sandbox::WorkerClient> fake_worker(const nlohmann::json& script,
                                                   const std::filesystem::path& outputs) {
  sandbox::SpawnSpec spec;
  spec.argv = {"/usr/bin/python3", "-I",
               std::string(KBENCH_SOURCE_DIR) + "/tests/unit/fakes/timing_worker.py"};
  spec.environment = sandbox::to_envp(sandbox::worker_environment(
      {{"FAKE_TIMING", script.dump()}, {"FAKE_OUTPUTS", outputs.string()}}));
  spec.working_directory = "/tmp";
  return std::make_unique<sandbox::WorkerClient>(spec, 1 << 16);
}

nlohmann::json script(double us, double sm_mhz) {
  return {{"us", us},         {"step_block", -1}, {"step", 1.0},
          {"sm_mhz", sm_mhz}, {"mem_mhz", 3201},  {"default_sm_mhz", 1980}};
}

// Each side's samples directory, fresh per test.
std::filesystem::path outputs_dir(const std::string& side) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-paired-" + std::to_string(getpid()) + "-" + test->name()) / side;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

PairedTimingOutcome time_pair(const nlohmann::json& reference, const nlohmann::json& candidate,
                              double throttle_recovery_s, std::optional<double> peak_bandwidth,
                              double cap_s, bool stop_on_precision);

PairedTimingOutcome time_pair(const nlohmann::json& reference, const nlohmann::json& candidate,
                              double throttle_recovery_s = 0,
                              std::optional<double> peak_bandwidth = std::nullopt,
                              double cap_s = 0.6, bool stop_on_precision = false) {
  PairedTimingSetup setup;
  setup.reference_dir = outputs_dir("reference");
  setup.candidate_dir = outputs_dir("candidate");
  auto r = fake_worker(reference, setup.reference_dir);
  auto c = fake_worker(candidate, setup.candidate_dir);
  TimingSettings settings;
  settings.compile_baseline = false;
  settings.stopping.min_time_s = 1e9;  // never met: the wall-clock cap ends the loop ...
  settings.stopping.timeout_s = cap_s; // ... after many blocks
  settings.stopping.precision = 0;     // nor this
  if (stop_on_precision) {
    settings.stopping = {};
    settings.stopping.timeout_s = cap_s;
  }
  settings.throttle_recovery_s = throttle_recovery_s;
  setup.peak_bandwidth_bytes_per_s = peak_bandwidth;
  setup.reference = r.get();
  setup.candidate = c.get();
  setup.cuda = true;
  auto outcome = run_paired_timing(settings, setup);
  r->shutdown();
  c->shutdown();
  return outcome;
}

const TimingFlag* find_flag(const TimingInfo& timing, const std::string& id) {
  const auto it = std::find_if(timing.flags.begin(), timing.flags.end(),
                               [&](const TimingFlag& f) { return f.id == id; });
  return it == timing.flags.end() ? nullptr : &*it;
}

#define REQUIRE_PYTHON()                                                                           \
  if (access("/usr/bin/python3", X_OK) != 0) {                                                     \
    GTEST_SKIP() << "no /usr/bin/python3 for the scripted workers";                                \
  }

} // namespace

TEST(PairedTiming, SteadyClocksRaiseNoFlagAndReachTheResult) {
  REQUIRE_PYTHON();
  auto candidate = script(100, 1980);
  candidate["reasons"] = {"sw_power_cap"};
  const auto outcome = time_pair(script(200, 1980), candidate);
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  const auto& timing = outcome.timing;
  EXPECT_TRUE(timing.flags.empty()) << timing.flags.front().message;
  EXPECT_NEAR(*timing.speedup, 2.0, 0.01);
  const auto& side = *timing.candidate;
  EXPECT_EQ(side.min_mem_mhz, 3201);
  EXPECT_EQ(side.max_sm_mhz, 1980);
  EXPECT_EQ(side.clock_reasons, std::set<std::string>{"sw_power_cap"});
  EXPECT_GT(side.blocks, 3U);
}

// Steady samples on both sides: every interval is within ±1 % at once, so the loop stops after
// the fewest paired blocks a speedup interval needs, long before the cap.
TEST(PairedTiming, StopsOnThePrecisionOfTheResultBeforeTheCap) {
  REQUIRE_PYTHON();
  const auto outcome =
      time_pair(script(200, 1980), script(100, 1980), 0.05, std::nullopt, 60, true);
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  const auto& timing = outcome.timing;
  EXPECT_EQ(timing.stop_reason, "converged");
  EXPECT_EQ(timing.candidate->blocks, 5U);
  // The fake's samples take three values 0.1 µs apart: the interval spans that step.
  EXPECT_EQ(timing.candidate->stop_reason, "resolution");
  ASSERT_TRUE(timing.candidate->median_ci_us);
  EXPECT_NEAR(timing.candidate->median_ci_us->low, 100, 0.1);
  EXPECT_GT(timing.candidate->median_ci_us->high, timing.candidate->median_ci_us->low);
  ASSERT_TRUE(timing.speedup_ci);
  EXPECT_NEAR(*timing.speedup, 2.0, 1e-9);
}

// Whichever saw the wall-clock cap first (a side's own rule or the paired loop), every side
// stopped by it says which condition was still unmet.
TEST(PairedTiming, EverySideStoppedByTheCapSaysWhatWasUnmet) {
  REQUIRE_PYTHON();
  const auto outcome = time_pair(script(200, 1980), script(100, 1980));
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  for (const auto* side : {&*outcome.timing.reference, &*outcome.timing.candidate}) {
    EXPECT_EQ(side->stop_reason.rfind("timeout: ", 0), 0U) << side->stop_reason;
    EXPECT_NE(side->stop_reason.find("s of measured time of the"), std::string::npos)
        << side->stop_reason;
  }
  EXPECT_EQ(outcome.timing.stop_reason.rfind("timeout: ", 0), 0U) << outcome.timing.stop_reason;
  EXPECT_NE(outcome.timing.stop_reason.find("candidate eager: "), std::string::npos)
      << outcome.timing.stop_reason;
}

// Both sides 1.7x slower in every other stretch of three blocks: the GPU's speed changed.
TEST(PairedTiming, AStepInSpeedIsFlaggedWithTheClocks) {
  REQUIRE_PYTHON();
  auto reference = script(100, 1980), candidate = script(100, 1980);
  reference["step_block"] = candidate["step_block"] = 0;
  reference["step_period"] = candidate["step_period"] = 3;
  reference["step"] = candidate["step"] = 1.7;
  const auto outcome = time_pair(reference, candidate);
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  const TimingFlag* flag = find_flag(outcome.timing, "unstable_timing");
  ASSERT_NE(flag, nullptr);
  EXPECT_NE(flag->message.find("1.70x slower"), std::string::npos) << flag->message;
  EXPECT_NE(flag->message.find("SM clock 1980-1980 MHz, memory clock 3201-3201 MHz"),
            std::string::npos)
      << flag->message;
}

// One side's blocks alone moving is that side's doing (its kernel, its inputs), not the GPU's.
TEST(PairedTiming, OneSideAloneChangingSpeedIsNotUnstableTiming) {
  REQUIRE_PYTHON();
  auto reference = script(100, 1980);
  reference["step_block"] = 0;
  reference["step_period"] = 3;
  reference["step"] = 1.7;
  const auto outcome = time_pair(reference, script(100, 1980));
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  EXPECT_EQ(find_flag(outcome.timing, "unstable_timing"), nullptr);
}

TEST(PairedTiming, BlocksBelowThreeQuartersOfTheDefaultClockAreDroppedAndSaidSo) {
  REQUIRE_PYTHON();
  auto candidate = script(100, 1440);
  candidate["reasons"] = {"sw_power_cap"};
  const auto outcome = time_pair(script(100, 1980), candidate);
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  const auto& timing = outcome.timing;
  EXPECT_GT(timing.candidate->throttled_samples_dropped, 0U);
  EXPECT_EQ(timing.candidate->stats_us.n, 0U);
  EXPECT_EQ(timing.reference->throttled_samples_dropped, 0U);
  EXPECT_FALSE(timing.speedup.has_value());
  const TimingFlag* flag = find_flag(timing, "throttled");
  ASSERT_NE(flag, nullptr);
  EXPECT_NE(flag->message.find("of the candidate's samples were taken below 75 % of the default "
                               "SM clock (1980 MHz)"),
            std::string::npos)
      << flag->message;
  EXPECT_NE(flag->message.find("sw_power_cap"), std::string::npos) << flag->message;
  EXPECT_NE(flag->message.find("none was left"), std::string::npos) << flag->message;
}

// NVBench's recovery: after a dropped block the GPU idles, and timing goes on once the clock is
// back; the flag then reports the drop without losing the side.
TEST(PairedTiming, AfterAThrottledStartTheClockRecoversAndTimingGoesOn) {
  REQUIRE_PYTHON();
  auto candidate = script(100, 1980);
  candidate["low_clock_blocks"] = 3;
  candidate["low_sm_mhz"] = 1300;
  const auto start = std::chrono::steady_clock::now();
  // A cap well above the three pauses: the blocks after them must find time left, even on a
  // loaded machine where each scripted call's exchange takes a while.
  const auto outcome = time_pair(script(100, 1980), candidate, 0.05, std::nullopt, 2.0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  const auto& timing = outcome.timing;
  EXPECT_GT(timing.candidate->stats_us.n, 0U);
  EXPECT_EQ(timing.candidate->min_sm_mhz, 1300);
  EXPECT_NEAR(*timing.speedup, 1.0, 0.01);
  const TimingFlag* flag = find_flag(timing, "throttled");
  ASSERT_NE(flag, nullptr);
  EXPECT_EQ(flag->message.find("none was left"), std::string::npos) << flag->message;
  EXPECT_GE(seconds, 3 * 0.05); // three recovery pauses
}

// A 2.5 µs kernel whose calls cost the harness 1 ms each: its device time alone would make
// blocks of 500 calls (0.5 s of wall time a side); the wall time of a block bounds them to 100.
TEST(PairedTiming, TheWallTimePerCallBoundsTheCallsOfABlock) {
  REQUIRE_PYTHON();
  auto reference = script(5, 1980), candidate = script(2.5, 1980);
  reference["call_s"] = candidate["call_s"] = 0.001;
  const auto outcome = time_pair(reference, candidate, 0, std::nullopt, 60, true);
  ASSERT_TRUE(outcome.ok) << outcome.failure.message;
  const auto& timing = outcome.timing;
  EXPECT_EQ(timing.stop_reason, "converged");
  for (const auto* side : {&*timing.reference, &*timing.candidate}) {
    EXPECT_EQ(side->blocks, kMinBlocksForInterval);
    // The first block's kMinBlockCalls, then at most 100 a block, where 500 were timed before.
    EXPECT_LE(side->stats_us.n, kMinBlockCalls + (kMinBlocksForInterval - 1) * 100);
    EXPECT_GE(side->stats_us.n, kMinBlocksForInterval * kMinBlockCalls);
  }
}

// Every timed call's output is checked: one wrong call among hundreds is found and named.
TEST(PairedTiming, AWrongTimedOutputIsIncorrectAndNamesTheCall) {
  REQUIRE_PYTHON();
  auto candidate = script(100, 1980);
  candidate["wrong_call"] = {1, 3};
  const auto outcome = time_pair(script(200, 1980), candidate);
  ASSERT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.failure.status, Status::incorrect);
  EXPECT_NE(outcome.failure.message.find("(call 3 of block 1)"), std::string::npos)
      << outcome.failure.message;
  EXPECT_NE(outcome.failure.message.find("differs from the reference's for the same inputs"),
            std::string::npos)
      << outcome.failure.message;
}

// The per-call exchange is the harness's: a message out of turn (the candidate's code asking
// for a seed ahead) ends the timing.
TEST(PairedTiming, AMessageOutOfTurnOnTheChannelIsAnIntegrityFailure) {
  REQUIRE_PYTHON();
  auto candidate = script(100, 1980);
  candidate["extra_message"] = true;
  const auto outcome = time_pair(script(200, 1980), candidate);
  ASSERT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.failure.status, Status::incorrect);
  EXPECT_NE(outcome.failure.message.find("used its channel to the orchestrator"), std::string::npos)
      << outcome.failure.message;
}

TEST(PairedTiming, TimedCallsWithoutGpuWorkAreAnImpossibleMeasurement) {
  REQUIRE_PYTHON();
  auto candidate = script(2, 1980);
  candidate["no_work"] = true;
  const auto outcome = time_pair(script(200, 1980), candidate);
  ASSERT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.failure.status, Status::impossible_timing);
  EXPECT_NE(outcome.failure.message.find("caused no GPU work"), std::string::npos)
      << outcome.failure.message;
  EXPECT_FALSE(outcome.timing.speedup.has_value());
  EXPECT_TRUE(outcome.timing.candidate.has_value()); // what was measured stays
}

// The floor: 1 MB of inputs at 1 GB/s is 1000 µs. A candidate at 100 µs cannot have read them;
// a problem whose own reference is faster than the floor does not read them all, and then the
// floor says nothing.
TEST(PairedTiming, AMedianBelowTheRooflineFloorIsImpossibleUnlessTheReferenceIsToo) {
  REQUIRE_PYTHON();
  auto reference = script(2000, 1980);
  reference["input_bytes"] = 1000000;
  const auto below = time_pair(reference, script(100, 1980), 0, 1e9);
  ASSERT_FALSE(below.ok);
  EXPECT_EQ(below.failure.status, Status::impossible_timing);
  EXPECT_NE(below.failure.message.find("below the time needed just to read its inputs"),
            std::string::npos)
      << below.failure.message;

  reference["us"] = 500;
  const auto partial = time_pair(reference, script(100, 1980), 0, 1e9);
  EXPECT_TRUE(partial.ok) << partial.failure.message;
}

// The seed's case: a 1.7 µs kernel on a clock with 32 ns steps, every block's medians the same
// step. The bootstrap's interval is zero-wide; the result reports the timers' resolution.
TEST(TimingStop, AQuantisedClockWidensTheSpeedupIntervalToItsStep) {
  std::vector<measure::PairedBlock> blocks;
  std::vector<double> all_r, all_c;
  for (int b = 0; b < 8; ++b) {
    measure::PairedBlock block;
    for (int i = 0; i < 20; ++i) {
      block.reference_us.push_back(i == 0 ? 2.368 : 2.336);
      block.candidate_us.push_back(i == 0 ? 1.728 : 1.696);
    }
    all_r.insert(all_r.end(), block.reference_us.begin(), block.reference_us.end());
    all_c.insert(all_c.end(), block.candidate_us.begin(), block.candidate_us.end());
    blocks.push_back(block);
  }
  TimingInfo timing;
  report_speedups(blocks, {}, measure::median_interval(all_r), measure::median_interval(all_c),
                  timing);
  ASSERT_TRUE(timing.speedup && timing.speedup_ci && timing.speedup_resolution);
  EXPECT_NEAR(*timing.speedup, 2.336 / 1.696, 1e-9);
  EXPECT_NEAR(*timing.speedup_resolution, *timing.speedup * (0.032 / 2.336 + 0.032 / 1.696), 1e-6);
  EXPECT_TRUE(timing.speedup_ci_at_resolution);
  EXPECT_NEAR(timing.speedup_ci->high - timing.speedup_ci->low, *timing.speedup_resolution, 1e-9);

  TimingSide side;
  report_median_interval(all_c, side);
  EXPECT_TRUE(side.at_resolution);
  EXPECT_NEAR(*side.resolution_us, 0.032, 1e-9);
  EXPECT_NEAR(side.median_ci_us->high - side.median_ci_us->low, 0.032, 1e-9);
}

// A small kernel's block is bounded by the harness's wall time per call, a large kernel's by its
// device time; the wall bound never takes a block below the floor.
TEST(BlockSizing, TheTighterOfTheDeviceAndTheWallBoundWithinTheLimits) {
  EXPECT_EQ(next_block_calls(2.5, 0.001), 100);
  EXPECT_EQ(next_block_calls(100, 0.0011), 90);
  EXPECT_EQ(next_block_calls(1000, 0.001), 20);
  EXPECT_EQ(next_block_calls(1000, 0.0001), 20);
  EXPECT_EQ(next_block_calls(1e6, 0.001), kMinBlockCalls);
  EXPECT_EQ(next_block_calls(2.5, 1.0), kMinBlockCalls);
}

// Before a block's wall time is known only the device time sizes it, as it always did.
TEST(BlockSizing, AnUnknownWallTimePerCallLeavesTheDeviceBound) {
  EXPECT_EQ(next_block_calls(2.5, 0), kMaxBlockCalls);
  EXPECT_EQ(next_block_calls(100, 0), 200);
  EXPECT_EQ(next_block_calls(1000, 0), 20);
  EXPECT_EQ(next_block_calls(0, 0), kMaxBlockCalls);
}

TEST(BlockSizing, TheCallsAreAlwaysWithinTheLimits) {
  for (const double device_us : {0.0, 0.01, 1.0, 2.5, 40.0, 100.0, 2000.0, 1e9}) {
    for (const double wall_s : {0.0, 1e-12, 1e-6, 0.0002, 0.001, 0.01, 1.0, 1e6}) {
      const int calls = next_block_calls(device_us, wall_s);
      EXPECT_GE(calls, kMinBlockCalls) << device_us << " µs, " << wall_s << " s";
      EXPECT_LE(calls, kMaxBlockCalls) << device_us << " µs, " << wall_s << " s";
    }
  }
}
