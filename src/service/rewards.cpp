#include "service/rewards.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace kbench::service {
namespace {

// The presets (docs/service.md, "Rewards", cites each source).
RewardSpec preset(const std::string& name) {
  RewardSpec spec;
  spec.preset = name;
  if (name == "kevin") {
    // Kevin (Cognition, arXiv 2507.11948): 0.3·correct + speedup for a correct kernel, 0 else.
    spec.correct = 0.3;
    spec.speedup = 1.0;
  } else if (name == "drkernel") {
    // Dr.Kernel / KernelGYM: speedup tiers; correct but slower -0.1 (perf_degrade); a build
    // that fails -0.5 (compilation_fail), any other failure -0.3 (correctness_fail).
    spec.tiers = {{3.0, 1.0}, {2.0, 0.8}, {1.5, 0.6}, {1.2, 0.4}, {1.0, 0.2}};
    spec.below_tiers = -0.1;
    spec.failure = -0.3;
    spec.failures = {{"compile_error", -0.5}, {"static_rejected", -0.5}};
  } else if (name == "log2") {
    // log2 of the speedup, clipped to [-3, 3] (OpenEnv kernrl's speed term, without its
    // fixed bonuses); any failure -3, no better than the slowest correct kernel.
    spec.log2_speedup = 1.0;
    spec.clip = std::pair{-3.0, 3.0};
    spec.failure = -3.0;
  } else if (name == "correct") {
    spec.correct = 1.0; // plain correctness: 1 for ok, 0 else
  }
  return spec;
}

RewardSpec read_formula(const JsonObjectReader& formula) {
  RewardSpec spec;
  spec.preset = "formula";
  formula.read("correct", spec.correct);
  formula.read("speedup", spec.speedup);
  formula.read("log2_speedup", spec.log2_speedup);
  for (const auto& [element, path] : formula.elements("tiers")) {
    if (!element->is_array() || element->size() != 2 || !(*element)[0].is_number() ||
        !(*element)[1].is_number()) {
      throw_field_error(path, "[speedup at least, value], two numbers", *element);
    }
    spec.tiers.emplace_back((*element)[0].get<double>(), (*element)[1].get<double>());
  }
  std::sort(spec.tiers.begin(), spec.tiers.end(), std::greater<>());
  formula.read("below_tiers", spec.below_tiers);
  std::optional<std::vector<double>> clip;
  formula.read("clip", clip);
  if (clip) {
    if (clip->size() != 2 || (*clip)[0] > (*clip)[1]) {
      throw_field_error(formula.path_of("clip"), "[low, high] with low <= high",
                        *formula.find("clip"));
    }
    spec.clip = std::pair{(*clip)[0], (*clip)[1]};
  }
  formula.read("failure", spec.failure);
  formula.read("failures", spec.failures);
  for (const auto& [status, _] : spec.failures) {
    if (!status_from_name(status)) {
      throw JsonFieldError(fmt::format("{}.{}: no such status; the statuses are ok, incorrect, "
                                       "impossible_timing, static_rejected, compile_error, "
                                       "runtime_error, timeout, crashed, harness_error, "
                                       "unsupported",
                                       formula.path_of("failures"), status));
    }
  }
  formula.reject_unread(
      "correct, speedup, log2_speedup, tiers, below_tiers, clip, failure, failures");
  return spec;
}

} // namespace

const std::vector<std::string>& reward_presets() {
  static const std::vector<std::string> names = {"kevin", "drkernel", "log2", "correct"};
  return names;
}

Decoded<RewardSpec> reward_from_json(const nlohmann::json& value, const std::string& path) {
  const auto presets = fmt::format("{}", fmt::join(reward_presets(), ", "));
  auto named = [&](const std::string& name, const std::string& at) -> Decoded<RewardSpec> {
    if (std::find(reward_presets().begin(), reward_presets().end(), name) ==
        reward_presets().end()) {
      return {std::nullopt, fmt::format("{}: no reward preset {:?}; the presets are {}, or give "
                                        "{{\"formula\": {{...}}}} (docs/service.md)",
                                        at, name, presets)};
    }
    return {preset(name), ""};
  };
  if (value.is_string()) {
    return named(value.get<std::string>(), path);
  }
  if (!value.is_object()) {
    return {std::nullopt, fmt::format("{}: expected a preset's name ({}) or an object with "
                                      "\"preset\" or \"formula\"",
                                      path, presets)};
  }
  try {
    JsonObjectReader reader(value, path);
    if (const auto* name = reader.find("preset")) {
      reader.reject_unread("preset");
      if (!name->is_string()) {
        throw_field_error(reader.path_of("preset"), "a preset's name", *name);
      }
      return named(name->get<std::string>(), reader.path_of("preset"));
    }
    const auto formula = reader.object("formula");
    reader.reject_unread("preset or formula");
    if (!formula) {
      return {std::nullopt, fmt::format("{}: give \"preset\" ({}) or \"formula\"", path, presets)};
    }
    return {read_formula(*formula), ""};
  } catch (const JsonFieldError& error) {
    return {std::nullopt, error.what()};
  }
}

Reward compute_reward(const RewardSpec& spec, const EvalResult& result) {
  Reward reward;
  reward.preset = spec.preset;
  reward.speedup_ci95 = result.timing.speedup_ci;
  const std::string status = status_name(result.status);
  auto failed = [&](std::string why) {
    const auto found = spec.failures.find(status);
    reward.value = found != spec.failures.end() ? found->second : spec.failure;
    reward.why = std::move(why);
    return reward;
  };
  if (result.status != Status::ok) {
    return failed("status " + status);
  }
  double value = spec.correct;
  if (spec.uses_speedup()) {
    const auto& timing = result.timing;
    if (!timing.measured || !timing.speedup || !(*timing.speedup > 0)) {
      return failed("no speedup: " + (timing.skipped_reason.empty() ? std::string("not measured")
                                                                    : timing.skipped_reason));
    }
    if (!timing.speedup_scored) {
      return failed("the speedup is not a score: " + timing.unscored_reason);
    }
    const double s = *timing.speedup;
    value += spec.speedup * s + spec.log2_speedup * std::log2(s);
    if (!spec.tiers.empty()) {
      const auto tier = std::find_if(spec.tiers.begin(), spec.tiers.end(),
                                     [&](const auto& t) { return s >= t.first; });
      value += tier != spec.tiers.end() ? tier->second : spec.below_tiers.value_or(0.0);
    }
  }
  if (spec.clip) {
    value = std::clamp(value, spec.clip->first, spec.clip->second);
  }
  reward.value = value;
  return reward;
}

nlohmann::json to_json(const Reward& reward) {
  nlohmann::json out = {{"value", reward.value}, {"preset", reward.preset}};
  out["speedup_ci95"] =
      reward.speedup_ci95
          ? nlohmann::json::array({reward.speedup_ci95->low, reward.speedup_ci95->high})
          : nlohmann::json(nullptr);
  if (!reward.why.empty()) {
    out["why"] = reward.why;
  }
  return out;
}

} // namespace kbench::service
