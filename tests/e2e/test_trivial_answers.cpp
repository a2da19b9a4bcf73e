// Problems that an answer computing nothing passes (docs/integrity.md, exploit class 14;
// KernelBench issue #165), through the real kbench binary on the CPU: the candidate that writes
// zeros passes every trial, so it is `ok`, but the result warns and its speedup is not scored.
// The CUDA variant is in tests/gpu/test_cuda_examples.cpp.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

using kbench::testing::KbenchRun;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

std::string trivial_warning(const KbenchRun& run) {
  for (const auto& warning : run.result.value("warnings", nlohmann::json::array())) {
    if (warning.get<std::string>().rfind("trivial answer:", 0) == 0) {
      return warning.get<std::string>();
    }
  }
  return "";
}

} // namespace

// KernelBench level2/23 (commit 423217d): outputs of about 1e-9 everywhere. One seeded trial
// and the held-out one; its CPU reference takes seconds a call, so it is not timed here.
TEST(EvalTrivialAnswer, ZerosForKernelBenchConv3dGroupNormMeanAreOkButNotScored) {
  const auto run = run_kbench(
      {"eval", repo_path("tests/e2e/problems/kernelbench_level2_23_conv3d_groupnorm_mean.py"),
       repo_path("tests/e2e/candidates/zeros_conv3d_groupnorm_mean.py"), "--device", "cpu",
       "--trials", "1", "--no-timing", "--quiet"});
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "") << run.stderr_text;
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(run.result["static_check"].empty()) << run.result["static_check"].dump();
  EXPECT_CONTAINS(trivial_warning(run), "zeros pass the tolerance for output.0 on all 2 trials");
  EXPECT_FALSE(run.result["timing"]["speedup_scored"].get<bool>());
  EXPECT_CONTAINS(run.result["timing"]["unscored_reason"].get<std::string>(), "zeros pass");
  EXPECT_CONTAINS(run.stdout_text, "score       speedup not scored: a trivial answer passes");
}

// The softmax over 200,000 columns of uniform inputs: about 5e-6 everywhere. Timed: the speedup
// is there, and marked as no score.
TEST(EvalTrivialAnswer, ZerosForANearZeroSoftmaxAreTimedButNotScored) {
  const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/near_zero_output.py"),
                               repo_path("tests/e2e/candidates/zeros_like_input.py"), "--device",
                               "cpu", "--trials", "2", "--iterations", "3", "--quiet"});
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "") << run.stderr_text;
  EXPECT_CONTAINS(trivial_warning(run), "zeros pass the tolerance for output.0 on all 3 trials");
  const auto& timing = run.result["timing"];
  EXPECT_TRUE(timing["speedup"].is_number()) << timing.dump();
  EXPECT_FALSE(timing["speedup_scored"].get<bool>());
  EXPECT_CONTAINS(run.stdout_text, "speedup     ");
  EXPECT_CONTAINS(run.stdout_text, "score       speedup not scored");
}

// The same near-zero problem with a candidate that is off by 0.01 everywhere (relu + 0.01) is
// still `incorrect`:
// the warning is about the problem and changes no status.
TEST(EvalTrivialAnswer, AWrongCandidateOnATrivialProblemIsStillIncorrect) {
  const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/near_zero_output.py"),
                               repo_path("examples/broken/cpu_wrong_result.py"), "--device", "cpu",
                               "--trials", "1", "--no-timing", "--quiet"});
  EXPECT_EQ(run.result["status"], "incorrect") << run.result.value("message", "");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_CONTAINS(trivial_warning(run), "zeros pass");
}
