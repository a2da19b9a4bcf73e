#pragma once
// Rewards for trainers, computed from a stored result the way published trainers compute them
// (docs/service.md cites each): a named preset, or a small formula. A result that should not
// count never earns more than the failure value: any status but `ok`, and, for a reward that
// uses the speedup, a speedup that was not measured or is not a score (a trivial answer passes
// the tolerance; timing off).
#include "core/json_io.hpp"
#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbench::service {

struct RewardSpec {
  std::string preset; // its name, or "formula"
  // value = correct + speedup·s + log2_speedup·log2(s) + the tier s reaches, then clipped
  double correct = 0, speedup = 0, log2_speedup = 0;
  std::vector<std::pair<double, double>> tiers; // (at least this speedup, value), highest first
  std::optional<double> below_tiers;            // a correct result below every tier
  std::optional<std::pair<double, double>> clip;
  double failure = 0;                     // any status but ok
  std::map<std::string, double> failures; // per status, over `failure`
  bool uses_speedup() const { return speedup != 0 || log2_speedup != 0 || !tiers.empty(); }
};

// "kevin", "drkernel", "log2", "correct".
const std::vector<std::string>& reward_presets();

// A request's `reward`: a preset's name, {"preset": NAME}, or {"formula": {...}} with the fields
// of RewardSpec (docs/service.md). Errors name the field under `path`.
Decoded<RewardSpec> reward_from_json(const nlohmann::json& value, const std::string& path);

struct Reward {
  double value = 0;
  std::string preset;
  std::optional<Interval> speedup_ci95; // the speedup's interval, for weighing noisy rewards
  std::string why;                      // set when the failure value was given, and why
};

Reward compute_reward(const RewardSpec& spec, const EvalResult& result);
nlohmann::json to_json(const Reward& reward);

} // namespace kbench::service
