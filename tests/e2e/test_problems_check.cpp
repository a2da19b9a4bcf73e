// `kbench problems check` on small problems written for the purpose, each with the defect it
// must find (issue: problem sets), and the precision modes of `kbench eval`.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <fstream>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

struct Checked {
  nlohmann::json reports;
  int exit_code;
  std::string table;
};

Checked check(const std::string& fixture, const std::string& variant = "standard",
              const std::string& trials = "4") {
  const std::string json = ::testing::TempDir() + "kbench_problems_check.json";
  const auto run =
      run_kbench({"problems", "check", repo_path("tests/e2e/problems/" + fixture), "--device",
                  "cpu", "--variant", variant, "--trials", trials, "--json", json},
                 false);
  std::ifstream in(json);
  nlohmann::json reports = nlohmann::json::array();
  if (in) {
    in >> reports;
  }
  return {reports, run.exit_code, run.stdout_text};
}

bool has_finding(const nlohmann::json& report, const std::string& check,
                 const std::string& severity, const std::string& text = "") {
  for (const auto& f : report["findings"]) {
    if (f["check"] == check && f["severity"] == severity &&
        f["message"].get<std::string>().find(text) != std::string::npos) {
      return true;
    }
  }
  return false;
}

} // namespace

TEST(ProblemsCheck, JitterUnsafeReferenceIsReportedWithTheShapeAndTheException) {
  const auto checked = check("jitter_unsafe_broadcast.py", "popcorn");
  ASSERT_EQ(checked.reports.size(), 1u) << checked.table;
  const auto& report = checked.reports[0];
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_EQ(checked.exit_code, 1);
  EXPECT_TRUE(has_finding(report, "reference-runs", "error", "\"shape\":["));
  EXPECT_TRUE(has_finding(report, "reference-runs", "error", "must match the size"));
  EXPECT_NE(checked.table.find("reference-runs"), std::string::npos) << checked.table;
}

TEST(ProblemsCheck, SameProblemPassesUnderTheStandardVariant) {
  const auto checked = check("jitter_unsafe_broadcast.py", "standard");
  EXPECT_EQ(checked.reports[0]["verdict"], "pass") << checked.table;
}

TEST(ProblemsCheck, NearZeroOutputsLetAllZerosPass) {
  const auto report = check("near_zero_output.py").reports[0];
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_TRUE(has_finding(report, "trivial-answer", "error", "zeros for output.0"));
  EXPECT_TRUE(has_finding(report, "not-near-constant", "warn"));
}

// KernelBench level2/23 at commit 423217d: a mean over a GroupNorm's output, about 1e-9.
TEST(ProblemsCheck, KernelBenchConv3dGroupNormMeanLetsAllZerosPass) {
  const auto checked = check("kernelbench_level2_23_conv3d_groupnorm_mean.py", "standard", "2");
  const auto& report = checked.reports[0];
  EXPECT_EQ(report["verdict"], "fail") << checked.table;
  EXPECT_TRUE(has_finding(report, "trivial-answer", "error", "zeros for output.0"));
  // Every element below atol, and zeros pass: the error says it, no separate warning.
  EXPECT_FALSE(has_finding(report, "mostly-below-atol", "warn")) << report["findings"].dump();
}

// The softmax over 200,000 columns of randn inputs: zeros miss a few hundred of 800,000
// elements, so no trivial answer passes, but the tolerance grades almost nothing.
TEST(ProblemsCheck, SoftmaxOverManyColumnsIsMostlyBelowAtol) {
  const auto checked = check("softmax_many_columns.py", "standard", "2");
  const auto& report = checked.reports[0];
  EXPECT_EQ(report["verdict"], "pass") << checked.table;
  EXPECT_TRUE(has_finding(report, "mostly-below-atol", "warn", "within the tolerance of 0"))
      << report["findings"].dump();
  EXPECT_FALSE(has_finding(report, "trivial-answer", "error"));
  EXPECT_NE(checked.table.find("mostly-below-atol"), std::string::npos) << checked.table;
}

TEST(ProblemsCheck, EachTrialsFilesAreGoneBeforeTheNextTrialRuns) {
  const auto checked = check("earlier_trials_files.py");
  ASSERT_EQ(checked.reports.size(), 1u) << checked.table;
  const auto& report = checked.reports[0];
  EXPECT_EQ(report["verdict"], "pass") << report.dump(2);
  EXPECT_EQ(report["trials"].size(), 4u);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(2);
}

TEST(ProblemsCheck, EachTrialSaysWhereItsTimeWent) {
  const auto report = check("jittered_scale.py", "standard", "2").reports[0];
  ASSERT_EQ(report["trials"].size(), 2u) << report.dump(2);
  for (const auto& trial : report["trials"]) {
    const auto& seconds = trial["seconds"];
    for (const char* phase : {"build", "calls", "outputs", "judge"}) {
      ASSERT_TRUE(seconds.contains(phase)) << phase << ": " << trial.dump();
      EXPECT_GE(seconds[phase].get<double>(), 0.0) << phase;
      EXPECT_LT(seconds[phase].get<double>(), report["wall_s"].get<double>()) << phase;
    }
    // Only the first trial times the reference.
    EXPECT_EQ(seconds.contains("timed"), trial["index"] == 0) << trial.dump();
  }
}

TEST(ProblemsCheck, SeedIndependentOutputIsFound) {
  const auto report = check("seed_independent_output.py").reports[0];
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_TRUE(has_finding(report, "depends-on-inputs", "error"));
}

TEST(ProblemsCheck, WeightsThatDoNotFollowTheSeedAreFoundOnTheFirstTrial) {
  const auto report = check("unseeded_weights.py").reports[0];
  EXPECT_EQ(report["verdict"], "fail");
  // The twin model is built on the first trial only: one trial says so.
  EXPECT_TRUE(has_finding(report, "weights-follow-seed", "error", "on 1 trial(s) (first: trial 0)"))
      << report["findings"].dump(2);
}

TEST(ProblemsCheck, NondeterministicReferenceIsFound) {
  const auto report = check("nondeterministic_reference.py").reports[0];
  EXPECT_EQ(report["verdict"], "fail");
  EXPECT_TRUE(has_finding(report, "deterministic", "error", "4 of 4 trials"));
}

TEST(ProblemsCheck, OutputUniformAlongAnAxisIsAWarning) {
  const auto report = check("uniform_rows.py").reports[0];
  EXPECT_TRUE(has_finding(report, "not-uniform-along-axis", "warn", "axis 0"));
}

TEST(ProblemsCheck, HealthyProblemPassesWithoutFindings) {
  for (const char* variant : {"standard", "popcorn", "popcorn2"}) {
    const auto checked = check("jittered_scale.py", variant);
    const auto& report = checked.reports[0];
    EXPECT_EQ(report["verdict"], "pass") << variant << "\n" << checked.table;
    EXPECT_EQ(report["findings"].size(), 0u) << variant << "\n" << report["findings"].dump();
    EXPECT_GT(report["reference_call_us"].get<double>(), 0.0);
    EXPECT_EQ(checked.exit_code, 0);
  }
}

TEST(ProblemsCheck, EvalWarnsAboutAProblemThatFailedItsCheck) {
  check("seed_independent_output.py");
  const auto run =
      run_kbench({"eval", repo_path("tests/e2e/problems/seed_independent_output.py"),
                  repo_path("tests/e2e/candidates/seed_independent_output_torch.py"), "--rules",
                  "structural", "--device", "cpu", "--trials", "2", "--no-timing", "--quiet"});
  EXPECT_EQ(run.result["status"], "ok") << run.result.value("message", "");
  // Other warnings may be there too (a sandbox protection this machine cannot apply).
  bool found = false;
  for (const auto& warning : run.result["warnings"]) {
    found = found || warning.get<std::string>().find("depends-on-inputs") != std::string::npos;
  }
  EXPECT_TRUE(found) << run.result["warnings"].dump();
  EXPECT_NE(run.stdout_text.find("warning"), std::string::npos);
}

TEST(EvalPrecision, HalfPrecisionCastsModelAndInputsAndLoosensTheTolerance) {
  for (const char* precision : {"fp16", "bf16"}) {
    const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/jittered_scale.py"),
                                 repo_path("tests/e2e/candidates/jittered_scale_torch.py"),
                                 "--rules", "structural", "--device", "cpu", "--precision",
                                 precision, "--trials", "2", "--no-timing", "--quiet"});
    ASSERT_EQ(run.result["status"], "ok") << precision << ": " << run.result.value("message", "");
    EXPECT_EQ(run.result["config"]["precision"], precision);
    const auto& trial = run.result["correctness"]["trials"][0];
    EXPECT_EQ(trial["input_shapes"][0]["dtype"],
              precision == std::string("fp16") ? "float16" : "bfloat16");
    EXPECT_DOUBLE_EQ(trial["outputs"][0]["atol"].get<double>(), 1e-2);
    EXPECT_NE(run.stdout_text.find(std::string("cpu ") + precision), std::string::npos)
        << run.stdout_text;
  }
}

TEST(EvalPrecision, UnknownPrecisionIsAUsageError) {
  const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/jittered_scale.py"),
                               repo_path("tests/e2e/candidates/jittered_scale_torch.py"), "--rules",
                               "structural", "--precision", "fp8"},
                              false);
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_NE(run.stderr_text.find("--precision must be fp32, fp16 or bf16"), std::string::npos);
}
