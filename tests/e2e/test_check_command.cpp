// `kbench check`: the static rules alone, through the real binary (docs/static-checks.md).
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "expected to find: " << (needle) << "\nin: " << (haystack)

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
  EXPECT_CONTAINS(run.stdout_text, "reject torch-compute-in-forward:");
}

TEST(CheckCommand, PartialTorchRuleSetTurnsTorchComputeIntoAWarning) {
  const auto run = run_kbench({"check", repo_path(kFallback), "--rules", "partial-torch"}, false);
  EXPECT_EQ(run.exit_code, 1) << run.stdout_text << run.stderr_text; // the fallback still rejects
  EXPECT_CONTAINS(run.stdout_text, "warn torch-compute-in-forward:");
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
