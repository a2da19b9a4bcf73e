// `kbench check`: the static rules alone, through the real binary (docs/static-checks.md).
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

const std::string kFallback = "tests/e2e/candidates/static_torch_fallback.py";

} // namespace

TEST(CheckCommand, CorrectCudaCandidatePasses) {
  const auto run = run_kbench({"check", repo_path("examples/cuda/level1_relu.py")}, false);
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_EQ(run.stdout_text.find(" reject "), std::string::npos) << run.stdout_text;
  EXPECT_CONTAINS(run.stderr_text, "backend cuda");
}

TEST(CheckCommand, FallbackIsRejectedWithItsRuleAndLine) {
  const auto run = run_kbench({"check", repo_path(kFallback)}, false);
  EXPECT_EQ(run.exit_code, 1) << run.stdout_text << run.stderr_text;
  EXPECT_CONTAINS(run.stdout_text, "static_torch_fallback.py:26: reject fallback:");
  EXPECT_CONTAINS(run.stdout_text, "warn torch-compute-in-forward:"); // KernelBench's policy
  EXPECT_CONTAINS(run.stderr_text, "dynamic rule own-kernel-share (reject below 1 % of the GPU");
}

TEST(CheckCommand, StrictRuleSetRejectsTorchCompute) {
  const auto run = run_kbench({"check", repo_path(kFallback), "--rules", "strict"}, false);
  EXPECT_EQ(run.exit_code, 1) << run.stdout_text << run.stderr_text;
  EXPECT_CONTAINS(run.stdout_text, "reject torch-compute-in-forward:");
  EXPECT_CONTAINS(run.stderr_text, "rules strict");
}

TEST(CheckCommand, LibraryComputeInTheExtensionRejectsAndAllowLibrariesWarns) {
  const std::string exploit = repo_path("examples/exploits/28_aten_matmul_in_extension.py");
  const auto strict = run_kbench({"check", exploit}, false);
  EXPECT_EQ(strict.exit_code, 1) << strict.stdout_text << strict.stderr_text;
  EXPECT_CONTAINS(strict.stdout_text, "28_aten_matmul_in_extension.py:24: reject library-compute: "
                                      "at::matmul is an ATen operator");
  const auto allowed = run_kbench({"check", exploit, "--rules", "allow-libraries"}, false);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.stdout_text << allowed.stderr_text;
  EXPECT_CONTAINS(allowed.stdout_text, "warn library-compute:");
}

TEST(CheckCommand, JsonReportCarriesTheVerdicts) {
  const auto path = std::filesystem::temp_directory_path() / "kbench-check-test.json";
  const auto run = run_kbench({"check", repo_path(kFallback), "--json", path.string()}, false);
  EXPECT_EQ(run.exit_code, 1);
  std::ifstream in(path);
  const auto document = nlohmann::json::parse(in);
  EXPECT_TRUE(document["rejected"].get<bool>());
  EXPECT_EQ(document["backend"], "cuda");
  EXPECT_FALSE(document["verdicts"].empty());
  ASSERT_EQ(document["dynamic_rules"].size(), 1u) << document.dump();
  EXPECT_EQ(document["dynamic_rules"][0]["rule"], "own-kernel-share");
  EXPECT_EQ(document["dynamic_rules"][0]["min_share"], 0.01);
  EXPECT_EQ(document["dynamic_rules"][0]["own_kernels"], nlohmann::json::array({"relu_kernel"}));
  std::filesystem::remove(path);
}

TEST(CheckCommand, UnknownRuleIdInARulesFileIsAClearError) {
  const auto path = std::filesystem::temp_directory_path() / "kbench-bad-rules.json";
  std::ofstream(path) << R"({"name": "bad", "rules": {"no-such-rule": {"severity": "reject"}}})";
  const auto run = run_kbench(
      {"check", repo_path("examples/cuda/level1_relu.py"), "--rules", path.string()}, false);
  EXPECT_EQ(run.exit_code, 2) << run.stdout_text << run.stderr_text;
  EXPECT_CONTAINS(run.stderr_text, path.string());
  EXPECT_CONTAINS(run.stderr_text, "unknown rule id 'no-such-rule'");
  std::filesystem::remove(path);
}

TEST(CheckCommand, MissingCandidateIsAHarnessError) {
  const auto run = run_kbench({"check", repo_path("examples/cuda/does_not_exist.py")}, false);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_CONTAINS(run.stderr_text, "no such file");
}
