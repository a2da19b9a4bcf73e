#include "pipeline/trivial_problem.hpp"

#include <fmt/format.h>

namespace kbench {

TrivialVerdict judge_trivial_answers(const sched::ScratchDirectory& scratch,
                                     const std::vector<int>& trial_indices,
                                     const compare::ToleranceOverride& tolerance) {
  const int world = scratch.world_size();
  const auto load = [&](std::size_t trial) {
    const auto name = fmt::format("trial_{}.outputs.safetensors", trial_indices.at(trial));
    if (world == 1) {
      return compare::read_safetensors(scratch.rank_dir("reference", 0) / name);
    }
    compare::TensorFile merged;
    for (int rank = 0; rank < world; ++rank) {
      auto file = compare::read_safetensors(scratch.rank_dir("reference", rank) / name);
      for (auto& [output, tensor] : file.tensors) {
        merged.tensors.emplace(fmt::format("rank{}/{}", rank, output), std::move(tensor));
      }
    }
    return merged;
  };
  TrivialVerdict verdict;
  verdict.answers = compare::find_trivial_answers(trial_indices.size(), load, tolerance);
  if (verdict.answers.empty()) {
    return verdict;
  }
  std::string described;
  for (const auto& answer : verdict.answers) {
    described += (described.empty() ? "" : "; ") + compare::describe_trivial_answer(answer);
  }
  verdict.unscored_reason =
      fmt::format("a trivial answer passes this problem: {}. A kernel that computes nothing is "
                  "graded correct, so its time says nothing about the work",
                  described);
  verdict.warning = fmt::format("trivial answer: {}; the speedup is not scored "
                                "(timing.speedup_scored is false)",
                                described);
  return verdict;
}

void apply_trivial_verdict(const TrivialVerdict& verdict, EvalResult& result) {
  if (verdict.answers.empty()) {
    return;
  }
  result.warnings.push_back(verdict.warning);
  result.timing.speedup_scored = false;
  result.timing.unscored_reason = verdict.unscored_reason;
}

} // namespace kbench
