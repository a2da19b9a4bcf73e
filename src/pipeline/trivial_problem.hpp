#pragma once
// During `kbench eval`: does an answer that computes nothing (zeros, one constant, each trial's
// mean) pass R's outputs on every trial, the held-out one included, on every rank? Then the
// problem cannot tell a kernel that does the work from one that does none: the result carries a
// warning, and its speedup is not a score (timing.speedup_scored, docs/result-schema.md).
#include "compare/trivial_answers.hpp"
#include "core/result.hpp"
#include "sched/scratch_directory.hpp"

#include <string>
#include <vector>

namespace kbench {

struct TrivialVerdict {
  std::vector<compare::TrivialAnswer> answers; // one per output that a trivial answer passes
  std::string warning;                         // for EvalResult::warnings; empty when none
  std::string unscored_reason;                 // for timing.unscored_reason; empty when none
};

// Reads `trial_<index>.outputs.safetensors` of every trial in each rank's reference directory
// (with several ranks an output is named "rank<r>/output.N"). A file that cannot be read
// throws compare::TensorFileError: the reference is trusted.
TrivialVerdict judge_trivial_answers(const sched::ScratchDirectory& scratch,
                                     const std::vector<int>& trial_indices,
                                     const compare::ToleranceOverride& tolerance);

// The verdict applied to a result: the warning added, the speedup marked not scored.
void apply_trivial_verdict(const TrivialVerdict& verdict, EvalResult& result);

} // namespace kbench
