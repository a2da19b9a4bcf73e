#include "pipeline/trial_comparison.hpp"

#include <fmt/format.h>

namespace kbench {

std::string compare_trials(const sched::ScratchDirectory& scratch, std::vector<TrialResult>& trials,
                           const compare::ToleranceOverride& tolerance) {
  const int world = scratch.world_size();
  std::string first_failure;
  for (auto& trial : trials) {
    const auto name = fmt::format("trial_{}.outputs.safetensors", trial.index);
    trial.passed = true;
    // Every rank's outputs, not rank 0's alone: a collective that is right on one rank and
    // wrong on another is wrong.
    for (int rank = 0; rank < world; ++rank) {
      const auto comparison =
          compare::compare_output_files(scratch.rank_dir("candidate", rank) / name,
                                        scratch.rank_dir("reference", rank) / name, tolerance);
      const std::string prefix = world == 1 ? "" : fmt::format("rank {}: ", rank);
      if (!comparison.passed && trial.passed) {
        trial.passed = false;
        trial.failure = prefix + comparison.failure;
      }
      for (const auto& [output_name, result] : comparison.outputs) {
        trial.outputs.push_back(
            {world == 1 ? output_name : fmt::format("rank{}/{}", rank, output_name), result});
      }
    }
    if (trial.passed && &trial == &trials.front()) {
      again_failure(scratch, trial, tolerance);
    }
    if (!trial.passed && first_failure.empty()) {
      first_failure = fmt::format("trial {}: {}", trial.index, trial.failure);
    }
  }
  return first_failure;
}

void again_failure(const sched::ScratchDirectory& scratch, TrialResult& trial,
                   const compare::ToleranceOverride& tolerance) {
  const int world = scratch.world_size();
  const auto name = fmt::format("trial_{}.again.outputs.safetensors", trial.index);
  const auto reference = fmt::format("trial_{}.outputs.safetensors", trial.index);
  for (int rank = 0; rank < world; ++rank) {
    const auto comparison =
        compare::compare_output_files(scratch.rank_dir("candidate", rank) / name,
                                      scratch.rank_dir("reference", rank) / reference, tolerance);
    if (!comparison.passed) {
      trial.passed = false;
      trial.failure =
          fmt::format("{}run again after the other trials, on the same inputs and "
                      "model, it gave other outputs: {}",
                      world == 1 ? "" : fmt::format("rank {}: ", rank), comparison.failure);
      return;
    }
  }
}

} // namespace kbench
