// The reference-side cache across evaluations (docs/architecture.md, "Reference-side cache"):
// a second candidate reuses the first's reference outputs, a wrong one still fails, a candidate
// cannot read the cache, a corrupt entry is recomputed, and the flag turns it off.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kbench::testing {
namespace {

namespace fs = std::filesystem;

// Extension builds stay between runs of this test; the reference cache starts empty.
const fs::path kCache = fs::temp_directory_path() / "kbench-e2e-reference-cache";

KbenchRun eval(const std::string& candidate, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"eval",
                                   repo_path("examples/exploits/problem_relu.py"),
                                   repo_path(candidate),
                                   "--device",
                                   "cpu",
                                   "--rules",
                                   "structural",
                                   "--no-timing",
                                   "--cache-dir",
                                   kCache.string(),
                                   "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_kbench(args);
}

std::string cache_field(const KbenchRun& run, const char* field) {
  return run.result["reference_cache"].value(field, "");
}

TEST(ReferenceCache, ASecondCandidateReusesTheOutputsAndAWrongOneStillFails) {
  fs::remove_all(kCache / "reference");
  const auto first = eval("tests/e2e/candidates/relu_torch.py");
  ASSERT_EQ(first.result["status"], "ok") << first.result.value("message", "");
  if (!first.result["reference_cache"].value("used", false)) {
    GTEST_SKIP() << "reference cache not used here: " << cache_field(first, "off_reason");
  }
  EXPECT_EQ(cache_field(first, "outputs"), "computed");

  const auto wrong = eval("examples/broken/cpu_wrong_result.py");
  EXPECT_EQ(wrong.result["status"], "incorrect") << wrong.result.value("message", "");
  EXPECT_EQ(cache_field(wrong, "outputs"), "cache");
  EXPECT_EQ(cache_field(wrong, "outputs_from"), first.result["started_at"].get<std::string>());
  EXPECT_EQ(cache_field(wrong, "key"), cache_field(first, "key"));
  const auto& trials = wrong.result["correctness"]["trials"];
  ASSERT_EQ(trials.size(), 6u); // five seeded, from the cache, and the held-out one, fresh
  EXPECT_TRUE(trials[5]["held_out"].get<bool>());
  for (const auto& trial : trials) {
    EXPECT_FALSE(trial["passed"].get<bool>()) << trial.dump();
  }

  const auto again = eval("tests/e2e/candidates/relu_torch.py");
  EXPECT_EQ(again.result["status"], "ok") << again.result.value("message", "");
  EXPECT_EQ(cache_field(again, "outputs"), "cache");
  // The held-out seed is drawn per evaluation, never cached.
  EXPECT_NE(again.result["correctness"]["trials"][5]["seed"],
            first.result["correctness"]["trials"][5]["seed"]);
}

TEST(ReferenceCache, ACandidateCannotReadTheCache) {
  const auto honest = eval("tests/e2e/candidates/relu_torch.py");
  ASSERT_EQ(honest.result["status"], "ok") << honest.result.value("message", "");
  if (!honest.result["reference_cache"].value("used", false)) {
    GTEST_SKIP() << "reference cache not used here: " << cache_field(honest, "off_reason");
  }
  ASSERT_TRUE(fs::exists(kCache / "reference" / "entries")); // there is something to steal
  const auto thief = eval("examples/exploits/47_read_reference_cache.py");
  EXPECT_EQ(thief.result["status"], "runtime_error") << thief.result.value("message", "");
  const std::string told = thief.result.value("message", "") + thief.result.value("log", "");
  EXPECT_NE(told.find("PermissionError"), std::string::npos) << told;
}

TEST(ReferenceCache, ACorruptEntryIsRecomputedWithAWarning) {
  const auto first = eval("tests/e2e/candidates/relu_torch.py");
  ASSERT_EQ(first.result["status"], "ok") << first.result.value("message", "");
  if (!first.result["reference_cache"].value("used", false)) {
    GTEST_SKIP() << "reference cache not used here: " << cache_field(first, "off_reason");
  }
  const fs::path entry =
      kCache / "reference" / "entries" / cache_field(first, "key").substr(0, 32) / "trials";
  ASSERT_TRUE(fs::exists(entry / "outputs" / "trial_0.outputs.safetensors"));
  std::ofstream(entry / "outputs" / "trial_0.outputs.safetensors", std::ios::app) << "x";
  const auto next = eval("tests/e2e/candidates/relu_torch.py");
  EXPECT_EQ(next.result["status"], "ok") << next.result.value("message", "");
  EXPECT_EQ(cache_field(next, "outputs"), "computed");
  EXPECT_NE(next.result["warnings"].dump().find("corrupt"), std::string::npos)
      << next.result["warnings"].dump();
}

TEST(ReferenceCache, TheFlagTurnsItOff) {
  const auto run = eval("tests/e2e/candidates/relu_torch.py", {"--no-reference-cache"});
  EXPECT_EQ(run.result["status"], "ok") << run.result.value("message", "");
  EXPECT_FALSE(run.result["reference_cache"].value("used", true));
  EXPECT_NE(cache_field(run, "off_reason").find("--no-reference-cache"), std::string::npos);
  EXPECT_EQ(cache_field(run, "outputs"), "");
}

} // namespace
} // namespace kbench::testing
