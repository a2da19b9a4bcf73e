// kbench check CANDIDATE: the static check alone (docs/static-checks.md), without a problem run
// or a device: one verdict a line, exit 1 on any reject, 0 otherwise, 2 when the check could
// not run (a bad rules file, a missing candidate, a worker that would not start).
#include "cli/commands.hpp"
#include "core/json_io.hpp"
#include "pipeline/dynamic_rules.hpp"
#include "pipeline/static_check.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

struct CheckOptions {
  std::string candidate;
  std::string backend = "auto";
  std::string rules; // a path, or the name of a bundled rule set; empty: default
  std::string problem;
  std::string json_path;
  fs::path python;
};

// "path:line: severity rule-id: message", the shape compilers use, so editors can jump to it.
std::string format_verdict(const std::string& path, const StaticVerdict& v) {
  return fmt::format("{}{}: {} {}: {}", path, v.line ? fmt::format(":{}", *v.line) : "", v.severity,
                     v.rule, v.message);
}

// The verdict as the worker sent it (python/kbench/worker/static_check.py, `_verdict`).
nlohmann::json verdict_json(const StaticVerdict& v) {
  return {{"rule", v.rule},
          {"severity", v.severity},
          {"message", v.message},
          {"line", v.line ? nlohmann::json(*v.line) : nlohmann::json(nullptr)}};
}

int report(const CheckOptions& o, const StaticCheckOutcome& outcome) {
  int rejects = 0;
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : outcome.verdicts) {
    std::cout << format_verdict(o.candidate, v) << "\n";
    rejects += v.severity == "reject" ? 1 : 0;
    verdicts.push_back(verdict_json(v));
  }
  const nlohmann::json& body = outcome.phase.body;
  std::cerr << fmt::format("kbench check: {} verdict(s), {} reject(s) (backend {}, rules {})\n",
                           outcome.verdicts.size(), rejects, body.value("backend", o.backend),
                           body.value("rule_set", "default"));
  if (const auto share = parse_own_kernel_share(body)) {
    // Judged on the timing: `kbench check` can only say that the rule set holds it.
    std::cerr << fmt::format("kbench check: dynamic rule own-kernel-share ({} below {:g} % of the "
                             "GPU kernel time) is applied by kbench eval on a GPU\n",
                             share->severity, share->min_share * 100);
  }
  if (!o.json_path.empty()) {
    write_json_file(o.json_path,
                    {{"candidate", o.candidate},
                     {"backend", body.value("backend", o.backend)},
                     {"rule_set", body.value("rule_set", "default")},
                     {"rejected", rejects > 0},
                     {"verdicts", verdicts},
                     {"dynamic_rules", body.value("dynamic_rules", nlohmann::json::array())}});
  }
  return rejects > 0 ? 1 : 0;
}

} // namespace

Command register_check_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "check", "run the static rules on a candidate (no build, no device); exit 1 on a reject");
  auto o = std::make_shared<CheckOptions>();
  command->add_option("candidate", o->candidate, "the candidate's Python file")->required();
  command->add_option("--backend", o->backend, "cuda, triton, cute, tilelang, cpu or auto (inferred)")
      ->check(CLI::IsMember({"auto", "cuda", "triton", "cute", "tilelang", "cpu"}))
      ->capture_default_str();
  command->add_option("--rules", o->rules,
                      "rule set: a JSON file or a bundled name (default, strict, allow-libraries, "
                      "partial-torch, structural)");
  command->add_option("--problem", o->problem,
                      "the problem, whose size constants feed shape-specialised");
  command->add_option("--json", o->json_path, "write the verdicts as JSON");
  command->add_option("--python", o->python, "interpreter of the torch environment");

  const auto run = [o]() -> int {
    if (!fs::is_regular_file(o->candidate)) {
      std::cerr << fmt::format("kbench check: {}: no such file\n", o->candidate);
      return 2;
    }
    if (!o->problem.empty() && !fs::is_regular_file(o->problem)) {
      std::cerr << fmt::format("kbench check: {}: no such problem file\n", o->problem);
      return 2;
    }
    try {
      const StaticCheckOutcome outcome = check_alone(
          o->candidate, o->backend, o->problem,
          o->rules.empty() ? std::nullopt : std::optional<fs::path>(o->rules), o->python);
      if (!outcome.phase.ok) {
        std::cerr << "kbench check: " << outcome.phase.message << "\n";
        return 2;
      }
      return report(*o, outcome);
    } catch (const std::exception& error) {
      std::cerr << "kbench check: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
