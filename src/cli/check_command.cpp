// kbench check CANDIDATE: the static check alone (docs/static-checks.md), without a problem run
// or a device: one verdict a line, exit 1 on any reject, 0 otherwise, 2 when the check could
// not run (a bad rules file, a missing candidate, a worker that would not start).
#include "cli/commands.hpp"
#include "core/json_io.hpp"
#include "pipeline/worker_phase.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

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

// The worker runs in a scratch directory, so every path it is given must be absolute. A bare
// rule-set name (`partial-torch`) is left alone: the worker finds the bundled file.
std::string absolute_or_name(const std::string& value) {
  if (value.empty() || (value.find('/') == std::string::npos && !fs::exists(value))) {
    return value;
  }
  return fs::absolute(value).string();
}

nlohmann::json request_for(const CheckOptions& o) {
  nlohmann::json request{{"op", "static_check"},
                         {"candidate", fs::absolute(o.candidate).string()},
                         {"backend", o.backend}};
  if (!o.rules.empty()) {
    request["rules"] = absolute_or_name(o.rules);
  }
  if (!o.problem.empty()) {
    request["problem"] = fs::absolute(o.problem).string();
  }
  return request;
}

// "path:line: severity rule-id: message", the shape compilers use, so editors can jump to it.
std::string format_verdict(const std::string& path, const nlohmann::json& v) {
  const std::string line = v.contains("line") && v["line"].is_number_integer()
                               ? fmt::format(":{}", v["line"].get<int>())
                               : "";
  return fmt::format("{}{}: {} {}: {}", path, line, v.value("severity", "warn"),
                     v.value("rule", "?"), v.value("message", ""));
}

// Runs the static_check op in a compile-role worker (no GPU, no network, its own scratch).
PhaseOutcome run_check(const CheckOptions& o) {
  const fs::path scratch = sched::make_scratch_directory("kbench-check");
  fs::create_directories(scratch / "tmp");
  DeviceChoice cpu;
  cpu.device = "cpu";
  cpu.device_name = "cpu";
  const WorkerLaunch launch =
      worker_launch_for(WorkerRole::compile, cpu, 0, scratch, scratch / "tmp", o.python, 64 * 1024);
  PhaseOutcome outcome;
  {
    auto worker = launch_worker(launch);
    outcome = run_phase(*worker, request_for(o), std::chrono::seconds(60), WorkerRole::compile,
                        "checking the candidate's source", o.candidate);
    worker->shutdown();
  }
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return outcome;
}

int report(const CheckOptions& o, const PhaseOutcome& outcome) {
  const auto verdicts = outcome.body.value("verdicts", nlohmann::json::array());
  int rejects = 0;
  for (const auto& v : verdicts) {
    std::cout << format_verdict(o.candidate, v) << "\n";
    rejects += v.value("severity", "") == "reject" ? 1 : 0;
  }
  std::cerr << fmt::format("kbench check: {} verdict(s), {} reject(s) (backend {}, rules {})\n",
                           verdicts.size(), rejects, outcome.body.value("backend", o.backend),
                           outcome.body.value("rule_set", "default"));
  if (!o.json_path.empty()) {
    write_json_file(o.json_path, {{"candidate", o.candidate},
                                  {"backend", outcome.body.value("backend", o.backend)},
                                  {"rule_set", outcome.body.value("rule_set", "default")},
                                  {"rejected", rejects > 0},
                                  {"verdicts", verdicts}});
  }
  return rejects > 0 ? 1 : 0;
}

} // namespace

Command register_check_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "check", "run the static rules on a candidate (no build, no device); exit 1 on a reject");
  auto o = std::make_shared<CheckOptions>();
  command->add_option("candidate", o->candidate, "the candidate's Python file")->required();
  command->add_option("--backend", o->backend, "cuda, triton, cpu or auto (inferred)")
      ->check(CLI::IsMember({"auto", "cuda", "triton", "cpu"}))
      ->capture_default_str();
  command->add_option("--rules", o->rules,
                      "rule set: a JSON file or a bundled name (default, partial-torch)");
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
      const PhaseOutcome outcome = run_check(*o);
      if (!outcome.ok) {
        std::cerr << "kbench check: " << outcome.message << "\n";
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
