// Collective problems run as several ranks per side on the CPU (gloo): every rank's outputs
// compared, timing across ranks, and a failure on one rank ending the others with its rank
// named (issue 6). The same on GPUs (NCCL) is in tests/gpu.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

using kbench::testing::KbenchRun;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

KbenchRun eval_collective(const std::string& problem, const std::string& candidate, int world,
                          std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"eval",
                                   repo_path("problems/collectives/" + problem),
                                   repo_path(candidate),
                                   "--device",
                                   "cpu",
                                   "--trials",
                                   "2",
                                   "--iterations",
                                   "3",
                                   "--world-size",
                                   std::to_string(world),
                                   "--quiet"};
  if (candidate.rfind("tests/e2e/candidates/", 0) == 0) {
    // Plain torch test candidates aimed at the rank handling: structural rules only.
    args.insert(args.end(), {"--rules", "structural"});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return run_kbench(args);
}

std::string message(const KbenchRun& run) {
  return run.result.value("message", "");
}

void expect_ok_on_every_rank(const KbenchRun& run, int world) {
  ASSERT_EQ(run.result.value("status", ""), "ok") << message(run) << run.stderr_text;
  EXPECT_EQ(run.result["config"]["world_size"], world);
  // One comparison per rank and output: every rank was checked, not rank 0 alone.
  for (const auto& trial : run.result["correctness"]["trials"]) {
    EXPECT_EQ(trial["outputs"].size(), static_cast<std::size_t>(world)) << trial.dump();
    EXPECT_EQ(trial["outputs"].back()["name"], "rank" + std::to_string(world - 1) + "/output.0");
  }
  const auto& timing = run.result["timing"]["candidate"];
  EXPECT_EQ(timing["method"], "barrier_to_last_rank");
  ASSERT_EQ(timing["per_rank"].size(), static_cast<std::size_t>(world));
  // A sample spans every rank's, so its median is at least each rank's own median (allowing
  // for the medians of different samples).
  EXPECT_EQ(timing["stats"]["n"], 3);
  EXPECT_GT(timing["stats"]["median_us"].get<double>(), 0.0);
  double slowest_min = 0;
  for (const auto& rank : timing["per_rank"]) {
    slowest_min = std::max(slowest_min, rank["min_us"].get<double>());
  }
  EXPECT_GE(timing["stats"]["max_us"].get<double>(), slowest_min);
}

} // namespace

TEST(Collectives, AllReduceOnTwoAndFourRanks) {
  for (int world : {2, 4}) {
    SCOPED_TRACE(world);
    expect_ok_on_every_rank(eval_collective("1_all_reduce_mean_affine.py",
                                            "examples/cpu/collective_all_reduce_mean_affine.py",
                                            world),
                            world);
  }
}

TEST(Collectives, AllGatherReduceScatterAllToAllOnTwoRanks) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"2_all_gather_softmax.py", "examples/cpu/collective_all_gather_softmax.py"},
      {"3_reduce_scatter_bias_tanh.py", "examples/cpu/collective_reduce_scatter_bias_tanh.py"},
      {"4_all_to_all_scale.py", "examples/cpu/collective_all_to_all_scale.py"}};
  for (const auto& [problem, candidate] : pairs) {
    SCOPED_TRACE(problem);
    expect_ok_on_every_rank(eval_collective(problem, candidate, 2, {"--variant", "popcorn"}), 2);
  }
}

TEST(Collectives, AllToAllOnFourRanks) {
  expect_ok_on_every_rank(
      eval_collective("4_all_to_all_scale.py", "examples/cpu/collective_all_to_all_scale.py", 4),
      4);
}

TEST(Collectives, WorldSizeComesFromTheProblem) {
  // No --world-size: the problem's KBENCH_WORLD_SIZE = 2 applies.
  const auto run =
      run_kbench({"eval", repo_path("problems/collectives/1_all_reduce_mean_affine.py"),
                  repo_path("examples/cpu/collective_all_reduce_mean_affine.py"), "--device", "cpu",
                  "--trials", "1", "--no-timing", "--quiet"});
  ASSERT_EQ(run.result.value("status", ""), "ok") << message(run);
  EXPECT_EQ(run.result["config"]["world_size"], 2);
}

TEST(Collectives, WrongOnTheLastRankOnlyIsIncorrect) {
  const auto run = eval_collective("1_all_reduce_mean_affine.py",
                                   "tests/e2e/candidates/collective_rank1_wrong.py", 2);
  EXPECT_EQ(run.result.value("status", ""), "incorrect") << message(run);
  EXPECT_CONTAINS(message(run), "rank 1: ");
}

TEST(Collectives, ExceptionOnOneRankEndsTheOthersAndNamesTheRank) {
  // Rank 0 sits in an all-reduce its peer never joins: without ending it, this would take
  // the whole --run-timeout.
  const auto run = eval_collective("1_all_reduce_mean_affine.py",
                                   "tests/e2e/candidates/collective_rank1_raises.py", 2,
                                   {"--run-timeout", "120"});
  EXPECT_EQ(run.result.value("status", ""), "runtime_error") << message(run);
  EXPECT_CONTAINS(message(run), "rank 1 of 2");
  EXPECT_CONTAINS(message(run), "rank 1 gives up");
  EXPECT_LT(run.wall_s, 100.0);
}

TEST(Collectives, CrashOnOneRankIsReportedWithTheRank) {
  const auto run = eval_collective("1_all_reduce_mean_affine.py",
                                   "tests/e2e/candidates/collective_rank1_crashes.py", 2,
                                   {"--run-timeout", "120"});
  EXPECT_EQ(run.result.value("status", ""), "crashed") << message(run);
  EXPECT_CONTAINS(message(run), "rank 1 of 2");
  EXPECT_CONTAINS(message(run), "SIGSEGV");
  EXPECT_LT(run.wall_s, 100.0);
}

TEST(Collectives, HangIsEndedAtTheDeadlineWithARank) {
  // Rank 1 sleeps and rank 0 waits for it in an all-reduce: neither answers, and the
  // deadline (not the collective's own, longer timeout) ends both.
  const auto run =
      eval_collective("1_all_reduce_mean_affine.py",
                      "tests/e2e/candidates/collective_rank1_hangs.py", 2, {"--run-timeout", "20"});
  EXPECT_EQ(run.result.value("status", ""), "timeout") << message(run);
  EXPECT_CONTAINS(message(run), "of 2: ");
  EXPECT_LT(run.wall_s, 90.0);
}

TEST(Collectives, MoreRanksThanGpusIsUnsupported) {
  const auto run =
      run_kbench({"eval", repo_path("problems/collectives/1_all_reduce_mean_affine.py"),
                  repo_path("examples/cuda/collective_all_reduce_mean_affine.py"), "--device",
                  "cuda", "--world-size", "64", "--quiet"});
  EXPECT_EQ(run.result.value("status", ""), "unsupported") << message(run);
}

TEST(Collectives, BadWorldSizeDeclarationNamesTheLine) {
  const auto run =
      run_kbench({"eval", repo_path("tests/e2e/problems/bad_world_size.py"),
                  repo_path("examples/cpu/level1_relu.py"), "--device", "cpu", "--quiet"});
  EXPECT_EQ(run.result.value("status", ""), "harness_error") << message(run);
  EXPECT_CONTAINS(message(run), "bad_world_size.py: line 6: KBENCH_WORLD_SIZE");
}
