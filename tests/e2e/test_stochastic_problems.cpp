// Problems whose forward samples noise (PopcornBench's MCMC steps): kbench seeds torch's
// generators with the trial's forward seed before every forward, the reference's and the
// candidate's alike (docs/problems.md, "Stochastic problems"), so a candidate that draws the same
// numbers passes and one that draws others fails, on the trials and on every timed call.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <fstream>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

const std::string kProblem = "tests/e2e/problems/stochastic_step.py";

kbench::testing::KbenchRun eval_step(const std::string& candidate, std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "eval",    repo_path(kProblem), repo_path("tests/e2e/candidates/" + candidate),
      "--rules", "structural",        "--device",
      "cpu",     "--trials",          "3",
      "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_kbench(args);
}

} // namespace

TEST(StochasticProblems, ACandidateDrawingTheSameNoisePassesTheTrialsAndEveryTimedCall) {
  const auto run = eval_step("stochastic_step_torch.py", {"--iterations", "6"});
  const auto& r = run.result;
  ASSERT_EQ(r["status"], "ok") << r.value("message", "") << run.stderr_text;
  EXPECT_EQ(r["correctness"]["trials_passed"], 4); // three seeded trials and the held-out one
  // The timed calls ran on fresh inputs under their own forward seeds, and their outputs were
  // checked against the reference's calls on the same inputs.
  EXPECT_GT(r["timing"]["checked_calls"].get<int>(), 0) << r["timing"].dump();
  EXPECT_EQ(r["config"]["forward_seed"].get<std::string>().rfind(
                "popcorn: (trial_seed+1) mod 2^32 before each forward", 0),
            0U)
      << r["config"].dump();
}

TEST(StochasticProblems, ACandidateDrawingOtherNoiseIsIncorrect) {
  const auto run = eval_step("stochastic_step_other_draws.py", {"--no-timing"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.result["status"], "incorrect") << run.result.value("message", "");
  EXPECT_CONTAINS(run.result.value("message", ""), "elements differ beyond");
}

TEST(StochasticProblems, ProblemsCheckNotesAForwardDeterministicOnlyWhenSeeded) {
  const std::string json = ::testing::TempDir() + "kbench_stochastic_check.json";
  const auto run = run_kbench({"problems", "check", repo_path(kProblem), "--device", "cpu",
                               "--variant", "popcorn", "--trials", "3", "--json", json},
                              false);
  std::ifstream in(json);
  ASSERT_TRUE(in) << run.stdout_text << run.stderr_text;
  nlohmann::json reports;
  in >> reports;
  ASSERT_EQ(reports.size(), 1U);
  const auto& report = reports[0];
  EXPECT_EQ(report["verdict"], "pass") << report["findings"].dump(1);
  EXPECT_EQ(run.exit_code, 0);
  bool noted = false;
  for (const auto& f : report["findings"]) {
    EXPECT_NE(f["check"], "deterministic") << f.dump();
    noted =
        noted || (f["check"] == "seeded-forward" && f["severity"] == "info" &&
                  f["message"].get<std::string>().find("on 3 of 3 trials") != std::string::npos);
  }
  EXPECT_TRUE(noted) << report["findings"].dump(1);
  EXPECT_CONTAINS(run.stdout_text, "seeded-forward");
}
