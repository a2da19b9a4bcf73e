#include "core/options.hpp"

#include <algorithm>

namespace kbench {

bool names_bundled_rule_set(const std::filesystem::path& rules) {
  const std::string text = rules.string();
  return !text.empty() && text.find('/') == std::string::npos && rules.extension() != ".json";
}

const std::vector<std::string>& known_variants() {
  static const std::vector<std::string> variants = {"standard", "popcorn", "popcorn2"};
  return variants;
}

const std::vector<std::string>& known_precisions() {
  static const std::vector<std::string> precisions = {"fp32", "fp16", "bf16"};
  return precisions;
}

std::vector<std::string> validate(const EvalOptions& o) {
  std::vector<std::string> problems;
  if (o.device != "auto" && o.device != "cuda" && o.device != "cpu") {
    problems.push_back("--device must be cuda, cpu or auto, not '" + o.device + "'");
  }
  if (o.trials < 1 || o.trials > 1000) {
    problems.push_back("--trials must be between 1 and 1000");
  }
  const auto& variants = known_variants();
  if (std::find(variants.begin(), variants.end(), o.variant) == variants.end()) {
    std::string names;
    for (const auto& v : variants) {
      names += (names.empty() ? "" : ", ") + v;
    }
    problems.push_back("--variant must be one of " + names + ", not '" + o.variant + "'");
  }
  const auto& precisions = known_precisions();
  if (std::find(precisions.begin(), precisions.end(), o.precision) == precisions.end()) {
    problems.push_back("--precision must be fp32, fp16 or bf16, not '" + o.precision + "'");
  }
  if (!o.profile.empty() && o.profile != "sol" && o.profile != "full") {
    problems.push_back("--profile must be sol or full, not '" + o.profile + "'");
  }
  if (!o.roofline.empty() && o.profile.empty()) {
    problems.push_back(
        "--roofline needs --profile sol or --profile full (the chart plots counters)");
  }
  if ((o.atol && *o.atol < 0) || (o.rtol && *o.rtol < 0)) {
    problems.push_back("--atol and --rtol must not be negative");
  }
  if (o.compile_timeout.count() <= 0 || o.run_timeout.count() <= 0) {
    problems.push_back("--compile-timeout and --run-timeout must be positive");
  }
  if (o.iterations < 0 || o.warmup < 0) {
    problems.push_back("--iterations and --warmup must not be negative");
  }
  if (o.min_samples < 1 || o.max_noise <= 0 || o.min_time < 0 || o.timing_timeout <= 0) {
    problems.push_back("--min-samples must be at least 1, --max-noise and --timing-timeout "
                       "positive and --min-time not negative");
  }
  if (o.pool_size < 1 || o.pool_size > 64) {
    problems.push_back("--pool-size must be between 1 and 64");
  }
  if (o.gpu < 0) {
    problems.push_back("--gpu must not be negative");
  }
  if (o.world_size < 0 || o.world_size > 64) {
    problems.push_back(
        "--world-size must be between 1 and 64 (0: the problem's KBENCH_WORLD_SIZE)");
  }
  return problems;
}

} // namespace kbench
