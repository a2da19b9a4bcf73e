// The transfer channel (docs/architecture.md, "Transfer"): tensors larger than the workers'
// file-size limit pass between the reference, the candidate and kbench, while every other file
// a worker writes stays under the limit; and a problem whose get_inputs() makes its tensors on
// `cuda` is unsupported on the CPU, saying what it needs, and runs on a GPU.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

using kbench::testing::have_gpu;
using kbench::testing::KbenchRun;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

// 4 MiB: each of the fixture's tensors is 32 MiB.
constexpr const char* kLimit = "4194304";

struct ScopedVariable {
  std::string name;
  ScopedVariable(std::string n, const char* value) : name(std::move(n)) {
    setenv(name.c_str(), value, 1);
  }
  ~ScopedVariable() { unsetenv(name.c_str()); }
};

KbenchRun eval_large(bool timing) {
  std::vector<std::string> args = {"eval",
                                   repo_path("tests/e2e/problems/large_tensors.py"),
                                   repo_path("tests/e2e/candidates/large_tensors_probe.py"),
                                   "--device",
                                   "cpu",
                                   "--rules",
                                   "structural",
                                   "--trials",
                                   "2",
                                   "--quiet"};
  if (!timing) {
    args.emplace_back("--no-timing");
  } else {
    args.insert(args.end(), {"--iterations", "3", "--warmup", "1"});
  }
  return run_kbench(args);
}

void expect_passed(const KbenchRun& run) {
  EXPECT_EQ(run.result.value("status", ""), "ok") << run.result.value("message", "") << "\n"
                                                  << run.stderr_text;
  const auto& trials = run.result["correctness"]["trials"];
  ASSERT_GE(trials.size(), 2U) << run.result.dump(2); // and the first again, held out
  for (const auto& trial : trials) {
    EXPECT_TRUE(trial.value("passed", false)) << trial.dump(2);
  }
}

} // namespace

TEST(Transfer, TensorsAboveTheWorkersFileSizeLimitPassWhileTheLimitHoldsForOtherFiles) {
  const ScopedVariable limit("KBENCH_WORKER_FSIZE_BYTES", kLimit);
  const ScopedVariable told("KBENCH_TEST_FSIZE_BYTES", kLimit); // the candidate's probe
  // Timed too: the timed calls' sampled outputs are tensor files as well.
  expect_passed(eval_large(true));
}

TEST(Transfer, SpawnedWorkersPassThemAsForkedOnesDo) {
  const ScopedVariable limit("KBENCH_WORKER_FSIZE_BYTES", kLimit);
  const ScopedVariable told("KBENCH_TEST_FSIZE_BYTES", kLimit);
  const ScopedVariable spawned("KBENCH_FORK_SERVER", "off");
  const KbenchRun run = eval_large(false);
  expect_passed(run);
  for (const auto& phase : run.result["phases"]) {
    EXPECT_NE(phase.value("started", ""), "forked") << phase.dump(2);
  }
}

TEST(Transfer, ProblemsCheckPassesTensorsAboveTheLimit) {
  const ScopedVariable limit("KBENCH_WORKER_FSIZE_BYTES", kLimit);
  const std::string json = ::testing::TempDir() + "kbench_transfer_check.json";
  const KbenchRun run =
      run_kbench({"problems", "check", repo_path("tests/e2e/problems/large_tensors.py"), "--device",
                  "cpu", "--variant", "standard", "--trials", "2", "--json", json},
                 false);
  std::ifstream in(json);
  nlohmann::json reports = nlohmann::json::array();
  if (in) {
    in >> reports;
  }
  ASSERT_EQ(reports.size(), 1U) << run.stdout_text << run.stderr_text;
  EXPECT_EQ(reports[0]["verdict"], "pass") << run.stdout_text;
  EXPECT_EQ(run.stdout_text.find("File too large"), std::string::npos) << run.stdout_text;
}

TEST(Transfer, AnUnusableFileSizeSettingIsRefusedByName) {
  const ScopedVariable limit("KBENCH_WORKER_FSIZE_BYTES", "4MB");
  const KbenchRun run = eval_large(false);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_CONTAINS(run.stderr_text + run.result.dump(), "KBENCH_WORKER_FSIZE_BYTES=4MB");
}

TEST(CudaInputs, OnTheCpuTheProblemIsUnsupportedAndSaysWhatItNeeds) {
  const KbenchRun run =
      run_kbench({"eval", repo_path("tests/e2e/problems/inputs_made_on_cuda.py"),
                  repo_path("tests/e2e/candidates/relu_plus_torch.py"), "--device", "cpu",
                  "--rules", "structural", "--trials", "1", "--no-timing", "--quiet"});
  EXPECT_EQ(run.result.value("status", ""), "unsupported") << run.result.dump(2);
  EXPECT_CONTAINS(run.result.value("message", ""), "get_inputs() makes its inputs on CUDA");
  EXPECT_CONTAINS(run.result.value("message", ""), "--device cuda");
}

TEST(CudaInputs, OnAGpuTheyPass) {
  if (!have_gpu()) {
    GTEST_SKIP() << "no usable GPU here: the CUDA side of inputs made in get_inputs() runs on a "
                    "GPU machine (ctest -R CudaInputs there)";
  }
  const KbenchRun run =
      run_kbench({"eval", repo_path("tests/e2e/problems/inputs_made_on_cuda.py"),
                  repo_path("tests/e2e/candidates/relu_plus_torch.py"), "--device", "cuda",
                  "--rules", "structural", "--trials", "2", "--no-timing", "--quiet"});
  EXPECT_EQ(run.result.value("status", ""), "ok") << run.result.dump(2);
}
