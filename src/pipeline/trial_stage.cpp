#include "pipeline/trial_stage.hpp"

#include <future>
#include <utility>

namespace kbench {

TrialStageOutcome
run_trial_stage(const TrialStageSteps& steps,
                const std::function<void(const TrialStageOutcome&)>& after_start) {
  TrialStageOutcome out;
  auto compile = std::async(std::launch::async, steps.compile);
  auto started = std::async(std::launch::async, steps.candidate_hello);
  auto reference = std::async(std::launch::async, [&] {
    PhaseOutcome outcome = steps.reference_trials();
    TrivialVerdict trivial = outcome.ok ? steps.judge_trivial() : TrivialVerdict{};
    return std::make_pair(std::move(outcome), std::move(trivial));
  });
  out.compiled = compile.get();
  out.candidate_started = started.get();
  after_start(out);
  if (out.compiled.phase.ok && out.candidate_started.ok) {
    out.candidate = steps.candidate_trials();
  }
  std::tie(out.reference, out.trivial) = reference.get();
  return out;
}

} // namespace kbench
