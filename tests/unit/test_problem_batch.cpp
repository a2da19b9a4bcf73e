// Covers src/pipeline/problem_batch.cpp: checks crowded out of the scratch disk or the GPU's
// memory by the checks beside them run again alone, once the others are done, and are reported
// once. The stand-in checker fails a large problem's first run for want of room, as several
// multi-GiB problems on one scratch filesystem or one GPU do, and passes it alone.
#include "pipeline/problem_batch.hpp"
#include "sandbox/transfer_files.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kbench {
namespace {

using namespace std::chrono_literals;

std::vector<EvalOptions> runs_named(const std::vector<std::string>& names) {
  std::vector<EvalOptions> runs;
  for (const auto& name : names) {
    EvalOptions run;
    run.problem = name;
    run.device = "cpu";
    runs.push_back(run);
  }
  return runs;
}

// "large*" problems find no room on their first run, as beside others: large-a no scratch disk
// for its files, the others no GPU memory for their reference. A rerun records how many checks
// ran beside it. The rest fit anywhere.
struct CrowdedMachine {
  std::mutex mutex;
  std::set<std::string> tried;
  std::atomic<int> running{0};
  std::atomic<int> most_beside_rerun{0};

  ProblemCheckResult operator()(const EvalOptions& run, sched::GpuLane*) {
    const int now = ++running;
    std::this_thread::sleep_for(5ms); // long enough for a check started beside it to show
    ProblemCheckResult result;
    result.problem_path = run.problem.string();
    result.verdict = "pass";
    if (result.problem_path.rfind("large", 0) == 0) {
      std::lock_guard lock(mutex);
      const bool first = tried.insert(result.problem_path).second;
      if (first && result.problem_path == "large-a") {
        result.verdict = "not checked";
        result.message = std::string("trial 1: cannot pass output.0 (7 GiB): ") +
                         sandbox::kNoScratchRoom + " 2.9 GiB free";
      } else if (first) {
        // KernelBench's large level-1 problems beside five others on the H200.
        result.verdict = "fail";
        result.findings.push_back(
            {"reference-runs", "error",
             "the reference raised on trial 0: OutOfMemoryError: CUDA out of memory. Tried to "
             "allocate 7.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 3.02 GiB is "
             "free."});
      } else {
        most_beside_rerun = std::max({most_beside_rerun.load(), now - 1, running.load() - 1});
      }
    }
    --running;
    return result;
  }
};

TEST(ProblemBatch, ChecksCrowdedOutOfDiskOrGpuMemoryRunAgainAloneAndAreReportedOnce) {
  CrowdedMachine machine;
  const auto runs = runs_named({"large-a", "small-b", "large-c", "small-d"});
  std::vector<std::size_t> reported;
  std::set<std::size_t> deferred;
  std::vector<std::string> verdicts(runs.size());
  const auto results = check_problems(
      runs, 4,
      [&](std::size_t i, const ProblemCheckResult& r) {
        reported.push_back(i);
        verdicts[i] = r.verdict;
      },
      [&](std::size_t i, const ProblemCheckResult&) { deferred.insert(i); },
      [&](const EvalOptions& run, sched::GpuLane* lane) { return machine(run, lane); });
  EXPECT_EQ(deferred, (std::set<std::size_t>{0, 2})); // announced when set aside
  ASSERT_EQ(results.size(), 4U);
  for (const auto& r : results) {
    EXPECT_EQ(r.verdict, "pass") << r.problem_path << ": " << r.message;
  }
  // Each check reported once; the two rerun alone come last, in their order.
  ASSERT_EQ(reported.size(), 4U);
  EXPECT_EQ(reported[2], 0U);
  EXPECT_EQ(reported[3], 2U);
  EXPECT_EQ(verdicts, std::vector<std::string>(4, "pass"));
  EXPECT_EQ(machine.most_beside_rerun.load(), 0) << "a rerun ran beside another check";
}

TEST(ProblemBatch, ACheckAloneThatFindsTheDiskFullIsReportedAsItIs) {
  // With one job nothing is beside it: running it again would meet the same disk.
  int calls = 0;
  const auto results = check_problems(
      runs_named({"large-a"}), 1, [](std::size_t, const ProblemCheckResult&) {}, {},
      [&](const EvalOptions& run, sched::GpuLane*) {
        ++calls;
        ProblemCheckResult r;
        r.problem_path = run.problem.string();
        r.verdict = "not checked";
        r.message = std::string(sandbox::kNoScratchRoom) + " 1 GiB free";
        return r;
      });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(results.at(0).verdict, "not checked");
}

TEST(ProblemBatch, ACheckThatThrowsIsNotCheckedAndTheOthersGoOn) {
  const auto results = check_problems(
      runs_named({"a", "b"}), 2, [](std::size_t, const ProblemCheckResult&) {}, {},
      [](const EvalOptions& run, sched::GpuLane*) -> ProblemCheckResult {
        if (run.problem == "a") {
          throw std::runtime_error("the worker's socket closed");
        }
        ProblemCheckResult r;
        r.verdict = "pass";
        return r;
      });
  EXPECT_EQ(results.at(0).verdict, "not checked");
  EXPECT_NE(results.at(0).message.find("the worker's socket closed"), std::string::npos);
  EXPECT_EQ(results.at(1).verdict, "pass");
}

} // namespace
} // namespace kbench
