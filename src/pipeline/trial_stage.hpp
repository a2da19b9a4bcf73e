#pragma once
// The trials stage of an evaluation and what runs at once in it: the candidate's build (CPU),
// the reference's trials (R) and the candidate process's start; then the candidate's trials,
// which begin on R's inputs as R marks them complete (inputs_hand_over.hpp) while R's forwards
// still run. Whether a trivial answer passes R's outputs is judged on R's thread once R is done.
#include "pipeline/trivial_problem.hpp"
#include "pipeline/worker_phase.hpp"

#include <functional>

namespace kbench {

struct TrialStageSteps {
  std::function<CompileOutcome()> compile;
  std::function<PhaseOutcome()> candidate_hello;
  std::function<PhaseOutcome()> reference_trials; // R's request; marks its failure itself
  std::function<TrivialVerdict()> judge_trivial;  // after R succeeded
  std::function<PhaseOutcome()> candidate_trials; // only after the build and the start succeeded
};

struct TrialStageOutcome {
  CompileOutcome compiled;
  PhaseOutcome candidate_started;
  PhaseOutcome reference;
  PhaseOutcome candidate; // not ok and empty when it did not run
  TrivialVerdict trivial;
};

// Runs the steps; every step has ended when it returns. `after_start` runs on the calling
// thread once the build and the candidate's start are known, before the candidate's trials
// (the compile worker can go then).
TrialStageOutcome run_trial_stage(const TrialStageSteps& steps,
                                  const std::function<void(const TrialStageOutcome&)>& after_start);

} // namespace kbench
