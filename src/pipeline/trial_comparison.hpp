#pragma once
// The correctness verdict of an evaluation: each trial's candidate outputs against the
// reference's, on every rank, and the first trial's rerun against the same reference. Free
// functions over the files the phases left in the scratch directory (its layout is
// sched::ScratchDirectory::rank_dir's: candidate/ and reference/, one directory per rank), the
// trials and the tolerance; the evaluation turns a failure into its status.
#include "compare/compare_outputs.hpp"
#include "core/result.hpp"
#include "sched/scratch_directory.hpp"

#include <string>
#include <vector>

namespace kbench {

// Sets each trial's `passed`, `failure` and `outputs` ("rank1/out" with several ranks). Returns
// the first failure, "trial 2: ...", or empty when every trial passed. A reference file that
// cannot be read throws (compare::TensorFileError): the reference is trusted.
std::string compare_trials(const sched::ScratchDirectory& scratch, std::vector<TrialResult>& trials,
                           const compare::ToleranceOverride& tolerance);

// The first trial, run again by C after every other trial (candidate_phase.py), against the
// same reference: answers that depend on earlier calls (a cache, leftover state) differ. Fails
// `trial` on the first rank that differs.
void again_failure(const sched::ScratchDirectory& scratch, TrialResult& trial,
                   const compare::ToleranceOverride& tolerance);

} // namespace kbench
