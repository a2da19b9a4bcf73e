// The pipeline's promises beyond statuses: popcorn shapes per trial, a problem at fault is
// blamed, builds are keyed by source, and one evaluation's crash never reaches the next.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

TEST(EvalPipeline, PopcornVariantGivesEachTrialItsOwnShapes) {
  const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/jittered_scale.py"),
                               repo_path("tests/e2e/candidates/jittered_scale_torch.py"), "--rules",
                               "structural", "--device", "cpu", "--variant", "popcorn", "--trials",
                               "6", "--iterations", "5", "--quiet"});
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "");
  std::set<std::string> shapes;
  for (const auto& trial : run.result["correctness"]["trials"]) {
    const auto shape = trial["input_shapes"][0]["shape"];
    EXPECT_GE(shape[0].get<int>(), 54); // jitter_int(64) stays in [floor(0.85*64), floor(1.15*64)]
    EXPECT_LE(shape[0].get<int>(), 73);
    shapes.insert(shape.dump());
  }
  EXPECT_GE(shapes.size(), 3u);
}

TEST(EvalPipeline, StandardVariantKeepsDefaultShapes) {
  const auto run =
      run_kbench({"eval", repo_path("tests/e2e/problems/jittered_scale.py"),
                  repo_path("tests/e2e/candidates/jittered_scale_torch.py"), "--rules",
                  "structural", "--device", "cpu", "--trials", "3", "--no-timing", "--quiet"});
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "");
  for (const auto& trial : run.result["correctness"]["trials"]) {
    EXPECT_EQ(trial["input_shapes"][0]["shape"], nlohmann::json::array({64, 96}));
  }
}

TEST(EvalPipeline, SameSeedSameShapesDifferentSeedDifferentShapes) {
  auto shapes_for = [](const std::string& seed) {
    const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/jittered_scale.py"),
                                 repo_path("tests/e2e/candidates/jittered_scale_torch.py"),
                                 "--rules", "structural", "--device", "cpu", "--variant", "popcorn",
                                 "--trials", "4", "--seed", seed, "--no-timing", "--quiet"});
    std::string all;
    for (const auto& trial : run.result["correctness"]["trials"]) {
      if (!trial["held_out"].get<bool>()) { // its seed is fresh entropy on every run
        all += trial["input_shapes"].dump();
      }
    }
    return all;
  };
  EXPECT_EQ(shapes_for("7"), shapes_for("7"));
  EXPECT_NE(shapes_for("7"), shapes_for("8"));
}

TEST(EvalPipeline, JitterUnsafeReferenceBlamesTheProblemWithTheShape) {
  const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/jitter_unsafe_broadcast.py"),
                               repo_path("tests/e2e/candidates/jittered_scale_torch.py"), "--rules",
                               "structural", "--device", "cpu", "--variant", "popcorn", "--trials",
                               "5", "--no-timing", "--quiet"});
  EXPECT_EQ(run.result["status"], "harness_error");
  const std::string message = run.result["message"];
  EXPECT_NE(message.find("the reference failed on trial"), std::string::npos) << message;
  EXPECT_NE(message.find("'shape': ["), std::string::npos) << message;
  EXPECT_NE(message.find("problem, not the candidate"), std::string::npos) << message;
}

TEST(EvalPipeline, TwoCandidatesWithTheSameExtensionNameNeverShareABuild) {
  const auto a =
      run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                  repo_path("tests/e2e/candidates/same_extension_name_a.py"), "--rules",
                  "structural", "--device", "cpu", "--trials", "2", "--no-timing", "--quiet"});
  const auto b =
      run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                  repo_path("tests/e2e/candidates/same_extension_name_b.py"), "--rules",
                  "structural", "--device", "cpu", "--trials", "2", "--no-timing", "--quiet"});
  EXPECT_EQ(a.result["status"], "ok") << a.result.value("message", "");
  EXPECT_EQ(b.result["status"], "incorrect") << b.result.value("message", "");
  EXPECT_NE(a.result["compile"]["extensions_dir"], b.result["compile"]["extensions_dir"]);
}

TEST(EvalPipeline, ExamplesSuiteOnCpuMeetsEveryExpectation) {
  // Crashing, hanging and broken candidates run before correct ones in the manifest: each
  // later evaluation must give the same result as on a fresh start.
  const auto run = run_kbench({"suite", repo_path("examples/examples.json"), "--device", "cpu",
                               "--trials", "2", "--iterations", "5"},
                              false);
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  EXPECT_NE(run.stdout_text.find("0 not as expected"), std::string::npos) << run.stdout_text;
}

// `suite --build-only` warms the compile cache and evaluates nothing: one line per distinct
// candidate, and exit 1 when a build failed, so a script that warms the cache before a timed
// run sees the failure.
TEST(EvalPipeline, SuiteBuildOnlyBuildsEachCandidateOnceAndReportsFailures) {
  const auto manifest = std::filesystem::temp_directory_path() / "kbench-build-only.json";
  const std::string relu = repo_path("problems/level1/1_relu.py");
  std::ofstream(manifest) << nlohmann::json{
      {"entries",
       {{{"problem", relu},
         {"candidate", repo_path("examples/cpu/level1_relu.py")},
         {"device", "cpu"}},
        {{"problem", relu},
         {"candidate", repo_path("examples/cpu/level1_relu.py")},
         {"device", "cpu"}},
        {{"problem", relu},
         {"candidate", repo_path("examples/broken/cpu_compile_error.py")},
         {"device", "cpu"},
         {"rules",
          "structural"}}}}}.dump();
  const auto run = run_kbench({"suite", manifest.string(), "--build-only", "--jobs", "2"}, false);
  std::filesystem::remove(manifest);
  EXPECT_EQ(run.exit_code, 1) << run.stdout_text << run.stderr_text;
  EXPECT_NE(run.stdout_text.find("built  " + repo_path("examples/cpu/level1_relu.py")),
            std::string::npos)
      << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("FAILED " + repo_path("examples/broken/cpu_compile_error.py")),
            std::string::npos)
      << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("1 built, 1 failed"), std::string::npos) << run.stdout_text;
  EXPECT_EQ(run.stdout_text.find("not as expected"), std::string::npos) << run.stdout_text;
}
