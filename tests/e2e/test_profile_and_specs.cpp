// `kbench eval --profile` and `kbench specs` where there is no GPU (CI): the counters say why
// they are missing instead of leaving blanks, bad settings are refused, and the peak table is
// printable without a device. The GPU side is tests/gpu/test_cuda_counters.cpp.
#include "core/json_io.hpp"
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

using kbench::testing::have_gpu;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;

TEST(Profile, OnTheCpuEveryCounterSaysItNeedsAGpu) {
  const auto run = run_kbench(
      {"eval", repo_path("problems/level1/1_relu.py"), repo_path("examples/cpu/level1_relu.py"),
       "--device", "cpu", "--trials", "1", "--iterations", "3", "--profile", "sol", "--quiet"});
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "");
  const auto& counters = run.result["counters"];
  ASSERT_TRUE(counters.is_object()) << run.result.dump(1);
  EXPECT_EQ(counters["profile"], "sol");
  EXPECT_CONTAINS(counters["skipped_reason"].get<std::string>(), "need a GPU");
  for (const char* side : {"candidate", "reference"}) {
    EXPECT_FALSE(counters[side]["collected"].get<bool>());
    EXPECT_CONTAINS(counters[side]["reason"].get<std::string>(), "need a GPU");
    EXPECT_TRUE(counters["energy"][side]["joules_per_call"].is_null());
    EXPECT_CONTAINS(counters["energy"][side]["reason"].get<std::string>(), "need a GPU");
  }
  EXPECT_CONTAINS(run.stdout_text, "counters    not collected: hardware counters need a GPU");
}

TEST(Profile, WithoutTheFlagThereAreNoCounters) {
  const auto run = run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                               repo_path("examples/cpu/level1_relu.py"), "--device", "cpu",
                               "--trials", "1", "--no-timing", "--quiet"});
  ASSERT_EQ(run.result["status"], "ok");
  EXPECT_TRUE(run.result["counters"].is_null());
}

TEST(Profile, AnUnknownSetOrAChartWithoutCountersIsRefused) {
  const auto bad = run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                               repo_path("examples/cpu/level1_relu.py"), "--profile", "everything"},
                              false);
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_CONTAINS(bad.stderr_text, "--profile must be sol or full, not 'everything'");
  const auto chart = run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                                 repo_path("examples/cpu/level1_relu.py"), "--roofline", "x.svg"},
                                false);
  EXPECT_EQ(chart.exit_code, 64);
  EXPECT_CONTAINS(chart.stderr_text, "--roofline needs --profile");
}

TEST(Specs, PrintsATableRowWithSourcesAndRefusesAnUnknownOne) {
  const auto row = run_kbench({"specs", "--row", "H100 SXM"}, false);
  EXPECT_EQ(row.exit_code, 0) << row.stderr_text;
  EXPECT_CONTAINS(row.stdout_text, "H100 SXM");
  EXPECT_CONTAINS(row.stdout_text, "989.4"); // dense BF16, not the sparse 1979
  EXPECT_CONTAINS(row.stdout_text, "3350");  // GB/s
  EXPECT_CONTAINS(row.stdout_text, "datasheet");
  const auto unknown = run_kbench({"specs", "--row", "Voodoo 2"}, false);
  EXPECT_EQ(unknown.exit_code, 64);
  EXPECT_CONTAINS(unknown.stderr_text, "H200 SXM"); // the known rows are named
  if (!have_gpu()) {
    const auto here = run_kbench({"specs"}, false);
    EXPECT_EQ(here.exit_code, 2);
    EXPECT_CONTAINS(here.stderr_text, "no GPU");
  }
}

// The SASS of the candidate's own kernel, built for sm_90 on a machine without a GPU (the build
// needs only nvcc; cuobjdump and nvdisasm come from the toolkit or NVIDIA's wheels, which
// scripts/setup.sh installs in its venv).
TEST(Disassemble, PrintsTheSassOfTheCandidatesOwnKernel) {
  const std::string json = ::testing::TempDir() + "/relu-sass.json";
  const auto run = run_kbench(
      {"disassemble", repo_path("examples/cuda/level1_relu.py"), "--arch", "9.0", "--json", json},
      false);
  if (run.exit_code != 0 && run.stderr_text.find("cuobjdump was not found") != std::string::npos) {
    GTEST_SKIP() << run.stderr_text;
  }
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_CONTAINS(run.stdout_text, "== relu_kernel(float const*, float*, long, long, long)");
  EXPECT_CONTAINS(run.stdout_text, "(sm_90)");
  EXPECT_CONTAINS(run.stdout_text, "LDG"); // the loads and stores of an elementwise kernel
  EXPECT_CONTAINS(run.stdout_text, "STG");
  EXPECT_CONTAINS(run.stdout_text, "EXIT");
  const auto doc = kbench::read_json_file(json);
  EXPECT_EQ(doc["own_kernels"], nlohmann::json::array({"relu_kernel"}));
  ASSERT_EQ(doc["functions"].size(), 1U);
  EXPECT_EQ(doc["functions"][0]["mangled"], "_Z11relu_kernelPKfPflll");
}

TEST(Disassemble, ABadArchitectureIsRefusedBeforeAnyBuild) {
  const auto run = run_kbench(
      {"disassemble", repo_path("examples/cuda/level1_relu.py"), "--arch", "hopper"}, false);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_CONTAINS(run.stderr_text, "--arch hopper: give a compute capability such as 9.0");
}
