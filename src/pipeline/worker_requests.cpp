#include "pipeline/worker_requests.hpp"

#include "core/options.hpp"

namespace kbench::requests {

namespace fs = std::filesystem;

// ---- The evaluation's phases.

nlohmann::json hello() {
  return {{"op", "hello"}};
}

std::string rule_set_argument(const fs::path& rules) {
  return rules.empty() || names_bundled_rule_set(rules) ? rules.string()
                                                        : fs::absolute(rules).string();
}

nlohmann::json static_check(const fs::path& candidate, const std::string& backend,
                            const fs::path& problem, const std::optional<fs::path>& rules) {
  nlohmann::json request{
      {"op", "static_check"}, {"candidate", candidate.string()}, {"backend", backend}};
  if (!problem.empty()) {
    request["problem"] = problem.string();
  }
  if (rules) {
    request["rules"] = rule_set_argument(*rules);
  }
  return request;
}

nlohmann::json compile(const fs::path& candidate, const fs::path& extensions_dir) {
  return {{"op", "compile"},
          {"candidate", candidate.string()},
          {"extensions_dir", extensions_dir.string()}};
}

nlohmann::json reference(const fs::path& problem, const std::string& device,
                         const std::string& variant, const std::string& precision,
                         std::uint64_t init_seed, const nlohmann::json& trials,
                         const fs::path& inputs_dir, const fs::path& outputs_dir) {
  return {{"op", "reference"},
          {"problem", problem.string()},
          {"device", device},
          {"variant", variant},
          {"precision", precision},
          {"init_seed", init_seed},
          {"trials", trials},
          {"inputs_dir", inputs_dir.string()},
          {"outputs_dir", outputs_dir.string()}};
}

nlohmann::json candidate(const fs::path& candidate, const fs::path& problem,
                         const std::string& device, const std::string& variant,
                         const std::string& precision, const fs::path& extensions_dir,
                         std::uint64_t init_seed, const nlohmann::json& trials,
                         const fs::path& inputs_dir, const fs::path& outputs_dir) {
  return {{"op", "candidate"},
          {"candidate", candidate.string()},
          {"problem", problem.string()},
          {"variant", variant},
          {"device", device},
          {"precision", precision},
          {"extensions_dir", extensions_dir.string()},
          {"init_seed", init_seed},
          {"trials", trials},
          {"inputs_dir", inputs_dir.string()},
          {"outputs_dir", outputs_dir.string()}};
}

nlohmann::json time(int warmup, int iterations) {
  return {{"op", "time"}, {"warmup", warmup}, {"iterations", iterations}, {"flush_l2", true}};
}

nlohmann::json problem_check(const fs::path& problem, const std::string& device,
                             const std::string& variant, const std::string& precision,
                             std::uint64_t init_seed, const nlohmann::json& trials,
                             const fs::path& outputs_dir, const Tolerance& passthrough_bound) {
  return {
      {"op", "problem_check"},
      {"problem", problem.string()},
      {"device", device},
      {"variant", variant},
      {"precision", precision},
      {"init_seed", init_seed},
      {"trials", trials},
      {"outputs_dir", outputs_dir.string()},
      {"passthrough_bound", {{"atol", passthrough_bound.atol}, {"rtol", passthrough_bound.rtol}}}};
}

// ---- The measurement engine and profiling.

nlohmann::json time_block(const TimeBlock& block) {
  nlohmann::json request = {
      {"op", "time_block"},     {"block", block.block},   {"calls", block.calls},
      {"target", block.target}, {"warm", block.warm},     {"shape_seed", block.shape_seed},
      {"warmup", block.warmup}, {"memory", block.memory}, {"check_inputs", block.check_inputs}};
  if (block.seeds) {
    request["seeds"] = *block.seeds;
  }
  if (block.sample_seeds) {
    request["sample_seeds"] = *block.sample_seeds;
  }
  return request;
}

nlohmann::json energy(double seconds) {
  return {{"op", "energy"}, {"seconds", seconds}};
}

nlohmann::json profile() {
  return {{"op", "profile"}};
}

} // namespace kbench::requests
