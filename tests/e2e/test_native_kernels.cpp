// Candidates in kbench's torch-free kernel format (docs/native-kernels.md) through the real
// kbench binary, on the CPU: a .cpp file defining kbench_forward, built with g++ alone. The same
// path serves .cu files on a GPU (tests/python/test_native_candidate.py builds those with nvcc).
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

using namespace kbench::testing;

namespace {

KbenchRun eval_native(const std::string& problem, const std::string& candidate) {
  return run_kbench({"eval", repo_path(problem), repo_path(candidate), "--device", "cpu",
                     "--trials", "2", "--iterations", "5"});
}

} // namespace

TEST(NativeKernels, AReluInTheTorchFreeFormatIsOk) {
  const auto run = eval_native("problems/level1/1_relu.py", "examples/native/level1_relu.cpp");
  ASSERT_EQ(run.result.value("status", ""), "ok") << run.stdout_text << run.stderr_text;
  EXPECT_GT(run.result["timing"]["speedup"].get<double>(), 0);
}

// The Model's parameters arrive after the forward arguments; a candidate that drops the bias is
// wrong, however the format hands it its inputs.
TEST(NativeKernels, TheModelsParametersArePassedAndAWrongKernelIsIncorrect) {
  const auto right = eval_native("tests/e2e/problems/small_linear_relu.py",
                                 "tests/e2e/candidates/native_linear_relu.cpp");
  EXPECT_EQ(right.result.value("status", ""), "ok") << right.result.value("message", "");
  const auto wrong = eval_native("tests/e2e/problems/small_linear_relu.py",
                                 "tests/e2e/candidates/native_forgets_bias.cpp");
  EXPECT_EQ(wrong.result.value("status", ""), "incorrect") << wrong.result.value("message", "");
}

TEST(NativeKernels, CompileErrorsRejectionsAndErrorReturnsAreReported) {
  const auto broken =
      eval_native("problems/level1/1_relu.py", "tests/e2e/candidates/native_compile_error.cpp");
  EXPECT_EQ(broken.result.value("status", ""), "compile_error");
  EXPECT_CONTAINS(broken.result.value("message", ""), "native_compile_error.cpp:7");

  const auto no_entry =
      eval_native("problems/level1/1_relu.py", "tests/e2e/candidates/native_no_entry.cpp");
  EXPECT_EQ(no_entry.result.value("status", ""), "static_rejected");
  EXPECT_CONTAINS(no_entry.result.value("message", ""), "kbench_forward");

  const auto refuses =
      eval_native("problems/level1/1_relu.py", "tests/e2e/candidates/native_error_return.cpp");
  EXPECT_EQ(refuses.result.value("status", ""), "runtime_error");
  EXPECT_CONTAINS(refuses.result.value("message", ""), "this kernel refuses to run");
}
