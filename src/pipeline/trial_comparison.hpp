#pragma once
// The trials of an evaluation and their correctness verdict: each trial's candidate outputs against
// the reference's, on every rank, and the first trial's rerun against the same reference. Free
// functions over the files the phases left in the scratch directory (its layout is
// sched::ScratchDirectory::rank_dir's: candidate/ and reference/, one directory per rank), the
// trials and the tolerance; the evaluation turns a failure into its status.
#include "compare/compare_outputs.hpp"
#include "core/result.hpp"
#include "sched/scratch_directory.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kbench {

// What R is asked to run: `count` trials seeded from `seed` (trial_requests), then one more,
// numbered `count`, whose seed comes from the machine's entropy, not from `seed`: a candidate (or
// an agent that saw earlier runs) cannot have prepared for it. Every rank gets the same list.
nlohmann::json reference_trials(std::uint64_t seed, int count);

// The trials R ran, from its answer: index, seed and input shapes; the trial numbered
// `held_out_index` is the held-out one (seeded at run time).
std::vector<TrialResult> trials_from_reference(const nlohmann::json& answer, int held_out_index);

// What C is asked to run: the trials' indices and forward seeds (core/seeding.hpp), not the
// seeds it would draw inputs from: it runs on the inputs R wrote.
nlohmann::json candidate_trials(const std::vector<TrialResult>& trials);

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
