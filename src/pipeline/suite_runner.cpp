// A suite's evaluations, pipelined (pipeline/suite_runner.hpp).
#include "pipeline/suite_runner.hpp"

#include "pipeline/evaluation.hpp"
#include "sched/gpu_lane.hpp"
#include "sched/suite_pipeline.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

namespace kbench {

std::vector<EvalResult>
evaluate_pipelined(const std::vector<EvalOptions>& runs, int jobs, const std::vector<int>& gpus,
                   int evaluations_per_gpu, const std::function<void(std::size_t)>& on_start,
                   const std::function<void(std::size_t, const EvalResult&)>& on_done) {
  const int per_gpu = gpus.empty() ? 1 : std::max(1, evaluations_per_gpu);
  const auto plan = sched::plan_pipeline(runs, jobs, static_cast<int>(gpus.size()) * per_gpu);
  // One lane per GPU, which its per_gpu pipeline lanes share (lane l runs on GPU l % gpus).
  std::vector<std::unique_ptr<sched::GpuLane>> gpu_lanes;
  for (std::size_t g = 0; g < gpus.size() && per_gpu > 1; ++g) {
    gpu_lanes.push_back(std::make_unique<sched::GpuLane>());
  }
  std::vector<EvalResult> results(runs.size());
  std::mutex report;
  sched::run_pipeline(
      plan.builds.size(), jobs, plan.lanes, plan.steps,
      // The build's result is dropped: the evaluation after it reports how the build went.
      [&](std::size_t b) {
        try {
          evaluate(plan.builds[b]);
        } catch (const std::exception&) { // the evaluation after it meets the same error
        }
      },
      [&](std::size_t s, int lane) {
        EvalOptions run = runs[s];
        GpuSharing sharing;
        // An exclusive step (several ranks) runs with every lane idle: it shares nothing.
        if (plan.steps[s].queue == 1 && !plan.steps[s].exclusive && !gpus.empty()) {
          const auto gpu = static_cast<std::size_t>(lane) % gpus.size();
          run.gpu = gpus.at(gpu);
          if (!gpu_lanes.empty()) {
            sharing = {gpu_lanes[gpu].get(), false, per_gpu};
          }
        }
        {
          std::lock_guard lock(report);
          on_start(s);
        }
        try {
          results[s] = evaluate(run, {}, sharing);
          // Beside other evaluations the memory that ran out may have been theirs.
          if (sharing.lane != nullptr && ran_out_of_gpu_memory(results[s])) {
            sharing.alone = true;
            results[s] = evaluate(run, {}, sharing);
          }
        } catch (const std::exception& error) { // evaluate reports input problems as statuses
          results[s].status = Status::harness_error;
          results[s].message = std::string("kbench failed during the evaluation: ") + error.what();
        }
        std::lock_guard lock(report);
        on_done(s, results[s]);
      });
  return results;
}

} // namespace kbench
