// A suite's evaluations, pipelined (pipeline/suite_runner.hpp).
#include "pipeline/suite_runner.hpp"

#include "pipeline/evaluation.hpp"
#include "sched/suite_pipeline.hpp"

#include <exception>
#include <mutex>
#include <string>

namespace kbench {

std::vector<EvalResult>
evaluate_pipelined(const std::vector<EvalOptions>& runs, int jobs, const std::vector<int>& gpus,
                   const std::function<void(std::size_t)>& on_start,
                   const std::function<void(std::size_t, const EvalResult&)>& on_done) {
  const auto plan = sched::plan_pipeline(runs, jobs, static_cast<int>(gpus.size()));
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
        if (plan.steps[s].queue == 1 && !plan.steps[s].exclusive && !gpus.empty()) {
          run.gpu = gpus.at(static_cast<std::size_t>(lane));
        }
        {
          std::lock_guard lock(report);
          on_start(s);
        }
        try {
          results[s] = evaluate(run);
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
