#pragma once
// The hand-over of the trials' inputs from R to C while R still runs (docs/architecture.md,
// "Processes"): C starts each trial once its inputs are marked complete, so the candidate's
// trials overlap the reference's forwards instead of waiting for all of them. R marks the
// trials it computes (python/kbench/worker/inputs_ready.py); kbench marks those it took from
// the reference cache, and marks R's failure so that a waiting C stops at once.
#include "sched/scratch_directory.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace kbench {

// Marks ready the trials of `trials` (a reference request's list) that are `"cached": true`:
// their inputs were copied into `inputs_dir` from the cache before R started.
void mark_cached_inputs_ready(const std::filesystem::path& inputs_dir,
                              const nlohmann::json& trials);

// Tells every rank's waiting C that R stopped without finishing its trials.
void mark_reference_failed(const sched::ScratchDirectory& scratch);

} // namespace kbench
