// GPU tests: the CUDA examples through the real kbench binary. They skip, saying so, on a
// machine without a usable GPU (CI); run them on the GPU machine (docs/gpu-validation.md).
// KBENCH_GPU_REPORT_DIR, when set, receives the suite's table and result documents.
#include "../e2e/kbench_runner.hpp"
#include "sched/device_probe.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

// A macro, not a function: GTEST_SKIP only leaves the function it is written in.
#define REQUIRE_GPU()                                                                              \
  do {                                                                                             \
    const auto& probe = kbench::sched::probe_devices();                                            \
    if (probe.gpus.empty()) {                                                                      \
      GTEST_SKIP() << "no usable GPU (" << probe.unavailable_reason << "): GPU test skipped";      \
    }                                                                                              \
  } while (false)

std::string report_dir() {
  const char* dir = std::getenv("KBENCH_GPU_REPORT_DIR");
  return dir ? dir : "";
}

} // namespace

TEST(CudaExamples, SuiteMeetsEveryExpectation) {
  REQUIRE_GPU();
  // KBENCH_GPU_MANIFEST narrows the run to a manifest of one's own (a GPU lease is short).
  const char* manifest = std::getenv("KBENCH_GPU_MANIFEST");
  std::vector<std::string> args = {
      "suite",         manifest ? manifest : repo_path("examples/examples.json"),
      "--device",      "cuda",
      "--only-device", "cuda"};
  if (!report_dir().empty()) {
    args.push_back("--jsonl");
    args.push_back(report_dir() + "/examples.jsonl");
  }
  const auto run = run_kbench(args, false);
  if (!report_dir().empty()) {
    std::ofstream(report_dir() + "/examples-table.txt") << run.stdout_text << "\n"
                                                        << run.stderr_text;
  }
  EXPECT_EQ(run.exit_code, 0) << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("0 not as expected"), std::string::npos) << run.stdout_text;
}

// The measurement engine on the GPU: CUPTI device time of every call, host latency beside it,
// the L2 flushed, the reference timed eager and under torch.compile in alternating blocks, a
// speedup with its interval, launches and memory. The relu moves 256 MiB: tens of µs on an
// H100-class GPU, never sub-µs, never seconds.
TEST(CudaTiming, ReluIsTracedWithCuptiInPairedBlocks) {
  REQUIRE_GPU();
  const auto run =
      run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                  repo_path("examples/cuda/level1_relu.py"), "--device", "cuda", "--trials", "2"});
  if (!report_dir().empty()) {
    std::ofstream(report_dir() + "/timing-relu.txt") << run.stdout_text;
    std::ofstream(report_dir() + "/timing-relu.json") << run.result.dump(1);
  }
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "");
  const auto& timing = run.result["timing"];
  const auto& candidate = timing["candidate"];
  EXPECT_EQ(candidate["method"], "cupti") << candidate["tracing"];
  EXPECT_TRUE(candidate["l2_flush"].get<bool>());
  EXPECT_GE(candidate["stats"]["n"].get<int>(), 10);
  const double median = candidate["stats"]["median_us"].get<double>();
  EXPECT_GT(median, 10.0);
  EXPECT_LT(median, 10000.0);
  EXPECT_GE(candidate["host_stats"]["median_us"].get<double>(), median);
  // NVML read around every block: both clocks, and no "gpu_idle" among the reasons.
  EXPECT_GT(candidate["sm_clock_mhz"]["min"].get<double>(), 0.0);
  EXPECT_GT(candidate["mem_clock_mhz"]["min"].get<double>(), 0.0);
  for (const auto& reason : candidate["clock_reasons"]) {
    EXPECT_NE(reason, "gpu_idle");
  }
  EXPECT_EQ(candidate["launches_per_call"], 1.0);
  EXPECT_GT(candidate["own_kernel_share"].get<double>(), 0.99);
  EXPECT_FALSE(timing["reference_compiled"].is_null()) << timing["compiled_skipped_reason"];
  EXPECT_LE(timing["speedup_ci95"]["low"].get<double>(), timing["speedup"].get<double>());
  EXPECT_GE(timing["speedup_ci95"]["high"].get<double>(), timing["speedup"].get<double>());
  EXPECT_TRUE(timing["flags"].empty()) << timing["flags"].dump();
  // Every timed call ran on fresh inputs and was checked: the reference's, the candidate's and
  // the compiled reference's calls alike.
  EXPECT_GE(timing["checked_calls"].get<int>(), candidate["stats"]["n"].get<int>());
  EXPECT_NE(timing["spot_checks"][0].get<std::string>().find("every timed call checked"),
            std::string::npos);
  EXPECT_EQ(run.result["config"]["device"], "cuda:0");
  EXPECT_EQ(run.result["config"]["device_name"], kbench::sched::probe_devices().gpus[0].name);
}

// Work on a stream the caller never waits on, and results served from a cache: the flag and the
// check of every timed output catch them.
TEST(CudaTiming, SideStreamAndCachedResultsAreCaught) {
  REQUIRE_GPU();
  const auto side =
      run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                  repo_path("tests/e2e/candidates/cuda_unjoined_side_stream.py"), "--rules",
                  "structural", "--device", "cuda", "--trials", "2", "--no-compile-baseline"});
  const auto cached =
      run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                  repo_path("tests/e2e/candidates/cuda_cached_result.py"), "--rules", "structural",
                  "--device", "cuda", "--trials", "2", "--no-compile-baseline"});
  if (!report_dir().empty()) {
    std::ofstream(report_dir() + "/timing-cheats.txt") << side.stdout_text << "\n"
                                                       << cached.stdout_text;
  }
  bool off_stream = false;
  for (const auto& flag : side.result["timing"]["flags"]) {
    off_stream = off_stream || flag["id"] == "off_stream_work";
  }
  EXPECT_TRUE(off_stream) << side.stdout_text;
  EXPECT_EQ(cached.result["status"], "incorrect") << cached.stdout_text;
}

// docs/integrity.md, exploit class 14 on the GPU: a CUDA kernel that returns zeros (after
// reading its input, so that its time is physical) for KernelBench's level2/23, whose outputs
// are about 1e-9. It passes every trial, so it is `ok`, but the result warns and its speedup
// is not a score.
TEST(CudaTrivialAnswers, ZerosForConv3dGroupNormMeanAreOkButNotScored) {
  REQUIRE_GPU();
  const auto run = run_kbench(
      {"eval", repo_path("tests/e2e/problems/kernelbench_level2_23_conv3d_groupnorm_mean.py"),
       repo_path("tests/e2e/candidates/cuda_zeros_conv3d_groupnorm_mean.py"), "--device", "cuda",
       "--trials", "3", "--no-compile-baseline"});
  if (!report_dir().empty()) {
    std::ofstream(report_dir() + "/trivial-answer.txt") << run.stdout_text;
    std::ofstream(report_dir() + "/trivial-answer.json") << run.result.dump(1);
  }
  ASSERT_EQ(run.result["status"], "ok") << run.result.value("message", "") << run.stdout_text;
  bool warned = false;
  for (const auto& warning : run.result["warnings"]) {
    warned = warned || warning.get<std::string>().find(
                           "trivial answer: zeros pass the tolerance for output.0 on all 4 "
                           "trials") != std::string::npos;
  }
  EXPECT_TRUE(warned) << run.result["warnings"].dump();
  EXPECT_TRUE(run.result["timing"]["speedup"].is_number()) << run.stdout_text;
  EXPECT_FALSE(run.result["timing"]["speedup_scored"].get<bool>());
  EXPECT_NE(run.stdout_text.find("score       speedup not scored"), std::string::npos)
      << run.stdout_text;
}

// `kbench problems check` on the GPU: device time per call decides the launch-bound flag, and
// the memory a call needs is set against the device's.
TEST(CudaProblemsCheck, TinyProblemIsLaunchBoundAndABundledOneIsNot) {
  REQUIRE_GPU();
  const std::string json = ::testing::TempDir() + "kbench_gpu_problems_check.json";
  const auto run =
      run_kbench({"problems", "check", repo_path("tests/e2e/problems/jittered_scale.py"),
                  repo_path("problems/level1/1_relu.py"), "--device", "cuda", "--variant",
                  "standard", "--trials", "3", "--json", json},
                 false);
  std::ifstream in(json);
  ASSERT_TRUE(in) << run.stdout_text << run.stderr_text;
  nlohmann::json reports;
  in >> reports;
  ASSERT_EQ(reports.size(), 2u);
  auto launch_bound = [](const nlohmann::json& report) {
    for (const auto& f : report["findings"]) {
      if (f["check"] == "not-launch-bound") {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(launch_bound(reports[0])) << reports[0].dump(2);
  EXPECT_LT(reports[0]["reference_call_us"].get<double>(), 20.0);
  EXPECT_EQ(reports[1]["verdict"], "pass") << reports[1].dump(2);
  EXPECT_FALSE(launch_bound(reports[1]));
  EXPECT_GT(reports[1]["peak_memory_bytes"].get<long long>(), 128ll << 20); // in and out: 256 MiB
  EXPECT_GT(reports[1]["device_memory_bytes"].get<long long>(),
            reports[1]["peak_memory_bytes"].get<long long>());
}

// The bundled collective problems on as many GPUs as the machine lends, NCCL between the ranks
// (issue 6): every rank's outputs are compared, and a sample spans the slowest rank.
TEST(CudaCollectives, BundledProblemsOnEveryGpuCount) {
  REQUIRE_GPU();
  const int gpus = static_cast<int>(kbench::sched::probe_devices().gpus.size());
  if (gpus < 2) {
    GTEST_SKIP() << "one GPU here: the collective problems need two or more";
  }
  const std::vector<std::string> names = {"all_reduce_mean_affine", "all_gather_softmax",
                                          "reduce_scatter_bias_tanh", "all_to_all_scale"};
  std::ofstream report(report_dir().empty() ? "/dev/null" : report_dir() + "/collectives.txt");
  for (int world = 2; world <= std::min(gpus, 8); world *= 2) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      SCOPED_TRACE(names[i] + " on " + std::to_string(world) + " GPUs");
      const auto run = run_kbench(
          {"eval",
           repo_path("problems/collectives/" + std::to_string(i + 1) + "_" + names[i] + ".py"),
           repo_path("examples/cuda/collective_" + names[i] + ".py"), "--device", "cuda",
           "--world-size", std::to_string(world), "--trials", "3", "--variant", "popcorn"});
      report << run.stdout_text << "\n";
      ASSERT_EQ(run.result.value("status", ""), "ok") << run.result.value("message", "");
      EXPECT_EQ(run.result["config"]["world_size"], world);
      for (const auto& trial : run.result["correctness"]["trials"]) {
        EXPECT_EQ(trial["outputs"].size(), static_cast<std::size_t>(world));
      }
      EXPECT_EQ(run.result["timing"]["candidate"]["per_rank"].size(),
                static_cast<std::size_t>(world));
    }
  }
}
