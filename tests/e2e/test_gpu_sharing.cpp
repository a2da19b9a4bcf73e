// Evaluations that share a GPU (pipeline/gpu_sharing.hpp), run in this process on the CPU with
// a lane standing in for the GPU's: an evaluation's trials wait while another measures, and its
// measurement waits while another runs trials, then both finish as they would alone.
#include "kbench_runner.hpp"
#include "pipeline/evaluation.hpp"
#include "sched/gpu_lane.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <string>

namespace kbench::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The stages an evaluation has announced, and a wait for one of them.
class Stages {
public:
  void add(std::string_view stage) {
    {
      std::lock_guard lock(m_mutex);
      m_seen.emplace(stage);
    }
    m_changed.notify_all();
  }
  bool wait_for(const std::string& stage, std::chrono::seconds limit) {
    std::unique_lock lock(m_mutex);
    return m_changed.wait_for(lock, limit, [&] { return m_seen.count(stage) > 0; });
  }
  bool seen(const std::string& stage) {
    std::lock_guard lock(m_mutex);
    return m_seen.count(stage) > 0;
  }

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::set<std::string> m_seen;
};

EvalOptions relu_options(bool timed) {
  // The in-process evaluation finds its worker beside the kbench binary the other tests run.
  ::setenv("KBENCH_WORKER", (fs::path(KBENCH_BINARY).parent_path() / "kbench-worker").c_str(), 0);
  EvalOptions options;
  options.problem = repo_path("examples/exploits/problem_relu.py");
  options.candidate = repo_path("tests/e2e/candidates/relu_torch.py");
  options.device = "cpu";
  options.rules = "structural";
  options.no_timing = !timed;
  options.iterations = 20; // a fixed, short measurement
  options.no_reference_cache = true;
  return options;
}

// The evaluation of the ReLU in another thread, on `lane`, its stages announced to `stages`.
std::future<EvalResult> evaluate_on(sched::GpuLane& lane, bool timed, bool alone, Stages& stages) {
  return std::async(std::launch::async, [&lane, timed, alone, &stages] {
    return evaluate(relu_options(timed), [&stages](std::string_view s) { stages.add(s); },
                    {&lane, alone, 2});
  });
}

TEST(GpuSharing, TrialsWaitWhileAnotherEvaluationMeasures) {
  sched::GpuLane lane;
  lane.lock_exclusive(); // another evaluation is timing its calls
  Stages stages;
  auto evaluation = evaluate_on(lane, false, false, stages);
  ASSERT_TRUE(stages.wait_for("compiling the candidate and running the reference", 300s));
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(stages.seen("running the candidate")) << "the trials ran during a measurement";
  EXPECT_EQ(evaluation.wait_for(0s), std::future_status::timeout);
  lane.unlock_exclusive();
  const EvalResult result = evaluation.get();
  EXPECT_EQ(result.status, Status::ok) << result.message;
  EXPECT_EQ(result.gpu_sharing, "trials beside up to 1 other evaluations on this GPU; "
                                "measurement and profiling with the GPU to itself");
}

TEST(GpuSharing, MeasurementWaitsWhileAnotherEvaluationRunsTrials) {
  sched::GpuLane lane;
  lane.lock_shared(); // another evaluation is running its trials
  Stages stages;
  auto evaluation = evaluate_on(lane, true, false, stages);
  // Trials share the GPU: this evaluation's run beside the other's.
  ASSERT_TRUE(stages.wait_for("comparing outputs", 300s)) << "the trials waited for shared work";
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(stages.seen("timing")) << "the measurement ran beside another evaluation's trials";
  lane.unlock_shared();
  const EvalResult result = evaluation.get();
  ASSERT_EQ(result.status, Status::ok) << result.message;
  EXPECT_TRUE(result.timing.measured);
}

TEST(GpuSharing, AnEvaluationRunAloneHoldsTheGpuThroughout) {
  sched::GpuLane lane;
  Stages stages;
  auto evaluation = evaluate_on(lane, false, true, stages);
  ASSERT_TRUE(stages.wait_for("static check", 300s));
  // Another evaluation's trials cannot start until it ends.
  auto other = std::async(std::launch::async, [&] {
    lane.lock_shared();
    lane.unlock_shared();
  });
  ASSERT_TRUE(stages.wait_for("comparing outputs", 300s));
  EXPECT_EQ(other.wait_for(0s), std::future_status::timeout) << "another got the GPU meanwhile";
  const EvalResult result = evaluation.get();
  other.get();
  EXPECT_EQ(result.status, Status::ok) << result.message;
  EXPECT_NE(result.gpu_sharing.find("alone"), std::string::npos) << result.gpu_sharing;
}

TEST(GpuSharing, OnlyAFailureThatSaysTheMemoryRanOutIsRunAgain) {
  EvalResult result;
  result.status = Status::runtime_error;
  result.message = "forward raised torch.OutOfMemoryError: CUDA out of memory. Tried to allocate";
  EXPECT_TRUE(ran_out_of_gpu_memory(result));
  result.message = "forward raised RuntimeError";
  result.log = "CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)";
  EXPECT_TRUE(ran_out_of_gpu_memory(result));
  result.log = "an illegal memory access was encountered";
  EXPECT_FALSE(ran_out_of_gpu_memory(result));
  result.status = Status::ok;
  result.message = "out of memory";
  EXPECT_FALSE(ran_out_of_gpu_memory(result));
}

} // namespace
} // namespace kbench::testing
