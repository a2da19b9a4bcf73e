// Every status of docs/architecture.md, "Formats", reached through the real kbench binary on the
// CPU, with the message a person would act on.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <map>

using kbench::testing::have_gpu;
using kbench::testing::KbenchRun;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

const std::string kRelu = repo_path("problems/level1/1_relu.py");

KbenchRun eval_relu(const std::string& candidate, std::vector<std::string> extra = {}) {
  // The broken examples are plain torch code aimed at the later stages: only the structural
  // static rules apply to them.
  std::vector<std::string> args = {"eval",      kRelu, repo_path(candidate), "--device", "cpu",
                                   "--trials",  "2",   "--no-timing",        "--quiet",  "--rules",
                                   "structural"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_kbench(args);
}

std::string message(const KbenchRun& run) {
  return run.result.value("message", "");
}

} // namespace

TEST(EvalStatus, OkWithTimingAndUnits) {
  const auto run = run_kbench({"eval", kRelu, repo_path("examples/cpu/level1_relu.py"), "--device",
                               "cpu", "--trials", "3", "--iterations", "10", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  const auto& r = run.result;
  EXPECT_EQ(r["schema"], "kbench.eval/1");
  EXPECT_EQ(r["status"], "ok");
  // The three seeded trials and the held-out one, whose seed is not derived from --seed.
  EXPECT_EQ(r["correctness"]["trials_passed"], 4);
  EXPECT_TRUE(r["correctness"]["trials"].back()["held_out"].get<bool>());
  EXPECT_FALSE(r["correctness"]["trials"].front()["held_out"].get<bool>());
  EXPECT_EQ(r["timing"]["candidate"]["method"], "perf_counter");
  EXPECT_EQ(r["timing"]["candidate"]["stats"]["n"], 10);
  EXPECT_GT(r["timing"]["candidate"]["stats"]["median_us"].get<double>(), 0.0);
  EXPECT_GT(r["timing"]["speedup"].get<double>(), 0.0);
  EXPECT_TRUE(r["timing"]["speedup_scored"].get<bool>()); // no trivial answer passes a ReLU
  // The compile worker ended before timing began: its wall time is its own lifetime, not the
  // time from its spawn to the end of the evaluation.
  const auto& compile_phase = r["phases"].front();
  EXPECT_EQ(compile_phase["phase"], "compile");
  EXPECT_EQ(compile_phase["exit"], "ended");
  EXPECT_LT(compile_phase["wall_s"].get<double>() + r["timing"]["wall_s"].get<double>(),
            r["wall_s"].get<double>());
  // Each phase says where its worker's time went, by request: the candidate answered its trials
  // once and its timed blocks, each no longer than the worker lived.
  for (const auto& phase : r["phases"]) {
    double answered = 0;
    for (const auto& request : phase.value("requests", nlohmann::json::array())) {
      EXPECT_GE(request["count"].get<int>(), 1) << request;
      EXPECT_GE(request["first_at_s"].get<double>(), 0.0) << request;
      answered += request["seconds"].get<double>();
    }
    EXPECT_LE(answered, phase["wall_s"].get<double>()) << phase;
  }
  std::map<std::string, int> candidate_ops;
  for (const auto& phase : r["phases"]) {
    if (phase["phase"] == "candidate") {
      for (const auto& request : phase.value("requests", nlohmann::json::array())) {
        candidate_ops[request["op"]] = request["count"];
      }
    }
  }
  EXPECT_EQ(candidate_ops["candidate"], 1) << r["phases"];
  EXPECT_GE(candidate_ops["time_block"], 1) << r["phases"];
  EXPECT_CONTAINS(run.stdout_text, "status      ok");
  EXPECT_CONTAINS(run.stdout_text, "speedup");
  EXPECT_TRUE(run.stdout_text.find(" ms") != std::string::npos ||
              run.stdout_text.find(" µs") != std::string::npos);
}

TEST(EvalStatus, SecondEvaluationOfTheSameSourceReusesTheBuild) {
  eval_relu("examples/cpu/level1_relu.py");
  const auto run = eval_relu("examples/cpu/level1_relu.py");
  ASSERT_EQ(run.result["status"], "ok") << message(run);
  EXPECT_TRUE(run.result["compile"]["cached"].get<bool>());
  // python/kbench/light_cxx.py built the binding unit, and the cached build still says how.
  EXPECT_EQ(run.result["compile"]["binding_header"],
            "torch/types.h and torch/python.h in place of torch/extension.h");
}

TEST(EvalStatus, IncorrectValuesNameTheElement) {
  const auto run = eval_relu("examples/broken/cpu_wrong_result.py");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.result["status"], "incorrect");
  EXPECT_CONTAINS(message(run), "elements differ beyond atol=0.0001 rtol=0.0001");
  EXPECT_CONTAINS(message(run), "candidate");
  EXPECT_GT(run.result["correctness"]["max_abs_err"].get<double>(), 1e-3);
  EXPECT_TRUE(run.result["timing"]["candidate"].is_null()); // only correct candidates are timed
}

TEST(EvalStatus, IncorrectShape) {
  const auto run = eval_relu("examples/broken/wrong_shape.py");
  EXPECT_EQ(run.result["status"], "incorrect");
  EXPECT_CONTAINS(message(run), "shape [4096, 8191] != reference shape [4096, 8192]");
}

TEST(EvalStatus, IncorrectDtype) {
  const auto run = eval_relu("examples/broken/wrong_dtype.py");
  EXPECT_EQ(run.result["status"], "incorrect");
  EXPECT_CONTAINS(message(run), "dtype float64 != reference dtype float32");
}

TEST(EvalStatus, StaticRejectedWithoutModelNew) {
  const auto run = eval_relu("examples/broken/missing_modelnew.py");
  EXPECT_EQ(run.result["status"], "static_rejected");
  EXPECT_CONTAINS(message(run), "defines no ModelNew");
  EXPECT_CONTAINS(message(run), "ModelNw");
  EXPECT_EQ(run.result["static_check"][0]["rule"], "modelnew-defined");
}

TEST(EvalStatus, CompileErrorShowsTheFirstCompilerError) {
  const auto run = eval_relu("examples/broken/cpu_compile_error.py");
  EXPECT_EQ(run.result["status"], "compile_error");
  const std::string first = run.result["compile"]["first_error"];
  EXPECT_CONTAINS(first, "error: ");
  EXPECT_CONTAINS(first, "was not declared"); // the compiler's line, not torch's wrapper
  EXPECT_CONTAINS(message(run), first);
  EXPECT_GT(run.result["log"].get<std::string>().size(), first.size()); // the whole log is kept
}

TEST(EvalStatus, SyntaxErrorNamesFileAndLine) {
  const auto run = eval_relu("examples/broken/syntax_error.py");
  EXPECT_EQ(run.result["status"], "compile_error");
  EXPECT_CONTAINS(message(run), "syntax_error.py:");
  EXPECT_CONTAINS(message(run), "SyntaxError");
}

TEST(EvalStatus, ImportErrorIsACompileError) {
  const auto run = eval_relu("examples/broken/import_error.py");
  EXPECT_EQ(run.result["status"], "compile_error");
  EXPECT_CONTAINS(message(run), "No module named");
}

TEST(EvalStatus, ExceptionInForwardKeepsTheTraceback) {
  const auto run = eval_relu("examples/broken/exception_in_forward.py");
  EXPECT_EQ(run.result["status"], "runtime_error");
  EXPECT_CONTAINS(message(run), "kernel failed");
  EXPECT_CONTAINS(message(run), "exception_in_forward.py:");
  EXPECT_CONTAINS(run.result["log"].get<std::string>(), "Traceback");
}

TEST(EvalStatus, ConstructorSignatureMismatch) {
  const auto run = eval_relu("examples/broken/init_signature_mismatch.py");
  EXPECT_EQ(run.result["status"], "runtime_error");
  EXPECT_CONTAINS(message(run), "ModelNew.__init__ signature mismatch");
}

TEST(EvalStatus, ForwardSignatureMismatch) {
  const auto run = eval_relu("examples/broken/forward_signature_mismatch.py");
  EXPECT_EQ(run.result["status"], "runtime_error");
  EXPECT_CONTAINS(message(run), "ModelNew.forward signature mismatch");
}

TEST(EvalStatus, TimeoutKillsAHangingCandidate) {
  const auto run = eval_relu("examples/broken/infinite_loop.py", {"--run-timeout", "15"});
  EXPECT_EQ(run.result["status"], "timeout");
  EXPECT_CONTAINS(message(run), "within 15 s");
  EXPECT_LT(run.wall_s, 120.0);
}

TEST(EvalStatus, CrashNamesTheSignalAndTheLine) {
  const auto run = eval_relu("examples/broken/segfault.py");
  EXPECT_EQ(run.result["status"], "crashed");
  EXPECT_CONTAINS(message(run), "SIGSEGV");
  EXPECT_CONTAINS(message(run), "segfault.py:");
}

TEST(EvalStatus, MissingCandidateFileIsAHarnessErrorNamingThePath) {
  const auto run = eval_relu("examples/broken/does_not_exist.py");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.result["status"], "harness_error");
  EXPECT_CONTAINS(message(run), "candidate file not found");
  EXPECT_CONTAINS(message(run), "does_not_exist.py");
}

TEST(EvalStatus, ProblemThatIsNotPython) {
  const auto run = run_kbench({"eval", repo_path("README.md"),
                               repo_path("examples/cpu/level1_relu.py"), "--device", "cpu"});
  EXPECT_EQ(run.result["status"], "harness_error");
  EXPECT_CONTAINS(message(run), "not a Python file");
}

TEST(EvalStatus, ProblemWhoseGetInputsIsNotAList) {
  const auto run = run_kbench({"eval", repo_path("tests/e2e/problems/inputs_not_a_list.py"),
                               repo_path("tests/e2e/candidates/jittered_scale_torch.py"), "--rules",
                               "structural", "--device", "cpu", "--no-timing"});
  EXPECT_EQ(run.result["status"], "harness_error");
  EXPECT_CONTAINS(message(run), "get_inputs() returned a dict");
}

TEST(EvalStatus, UnsupportedWithoutAGpu) {
  if (have_gpu()) {
    GTEST_SKIP() << "this machine has a GPU: the no-GPU path cannot be shown here";
  }
  const auto run =
      run_kbench({"eval", kRelu, repo_path("examples/cpu/level1_relu.py"), "--device", "cuda"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.result["status"], "unsupported");
  EXPECT_CONTAINS(message(run), "--device cuda needs a GPU");
}

TEST(EvalStatus, BadOptionIsAUsageError) {
  const auto run =
      run_kbench({"eval", kRelu, repo_path("examples/cpu/level1_relu.py"), "--trials", "0"}, false);
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_CONTAINS(run.stderr_text, "--trials must be between 1 and 1000");
}
