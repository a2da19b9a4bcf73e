#include "pipeline/trial_comparison.hpp"

#include "core/seeding.hpp"
#include "pipeline/worker_phase.hpp"

#include <fmt/format.h>

#include <random>

namespace kbench {

nlohmann::json reference_trials(std::uint64_t seed, int count) {
  nlohmann::json trials = trial_requests(seed, count);
  const auto held_out_seed = static_cast<std::uint32_t>(std::random_device{}());
  trials.push_back(
      {{"index", count}, {"seed", held_out_seed}, {"forward_seed", forward_seed(held_out_seed)}});
  return trials;
}

std::vector<TrialResult> trials_from_reference(const nlohmann::json& answer, int held_out_index) {
  std::vector<TrialResult> trials;
  for (const auto& trial : answer.value("trials", nlohmann::json::array())) {
    TrialResult result;
    result.index = trial.value("index", 0);
    result.seed = trial.value("seed", 0u);
    result.input_shapes = trial.value("input_shapes", nlohmann::json::array());
    result.held_out = result.index == held_out_index;
    trials.push_back(std::move(result));
  }
  return trials;
}

nlohmann::json candidate_trials(const std::vector<TrialResult>& trials) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& trial : trials) {
    // The forward seed, not the trial's seed: a stochastic forward must draw the reference's
    // noise. It reveals the trial's seed (seed = forward seed - 1), which gives the candidate
    // nothing it lacks: that trial's inputs are in its scratch directory already.
    out.push_back({{"index", trial.index}, {"forward_seed", forward_seed(trial.seed)}});
  }
  return out;
}

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
