// kbench problems check PATH...: reports, per problem and variant, whether the problem is fit
// to grade candidates with (docs/problems.md, "Checking problems").
#include "cli/commands.hpp"
#include "core/json_io.hpp"
#include "pipeline/problem_checking.hpp"
#include "report/summary.hpp"
#include "sched/suite_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

std::string short_name(const std::string& path) {
  const fs::path p(path);
  return (p.parent_path().filename() / p.filename()).string();
}

std::string format_table(const std::vector<ProblemCheckResult>& results) {
  std::string out = fmt::format("{:<44} {:<9} {:<11} {:>6} {:>8} {:>12}\n", "problem", "variant",
                                "verdict", "errors", "warnings", "reference");
  out += std::string(95, '-') + "\n";
  for (const auto& r : results) {
    out += fmt::format("{:<44} {:<9} {:<11} {:>6} {:>8} {:>12}\n", short_name(r.problem_path),
                       r.variant, r.verdict, r.errors(), r.warnings(),
                       r.call_us ? report::format_duration_us(*r.call_us) : "-");
  }
  for (const auto& r : results) {
    if (r.verdict == "not checked") {
      out += fmt::format("\n{} [{}]: not checked: {}\n", short_name(r.problem_path), r.variant,
                         r.message);
    }
    for (const auto& f : r.findings) {
      out += fmt::format("\n{} [{}] {} {}: {}", short_name(r.problem_path), r.variant, f.severity,
                         f.check, f.message);
    }
  }
  return out + "\n";
}

} // namespace

Command register_problems_command(CLI::App& app) {
  auto* problems = app.add_subcommand("problems", "inspect problem sets");
  problems->require_subcommand(1);
  auto* command = problems->add_subcommand(
      "check", "is each problem fit to grade with? (runs, deterministic, not trivially passed...)");
  auto options = std::make_shared<EvalOptions>();
  auto paths = std::make_shared<std::vector<std::string>>();
  auto variants = std::make_shared<std::vector<std::string>>();
  auto json_path = std::make_shared<std::string>();
  command->add_option("paths", *paths, "problem files or directories of them")->required();
  command->add_option("--device", options->device, "cuda, cpu or auto")->capture_default_str();
  command->add_option("--gpu", options->gpu, "which GPU")->capture_default_str();
  command->add_option("--variant", *variants,
                      "standard, popcorn, popcorn2 (repeatable; default standard and popcorn)");
  command->add_option("--precision", options->precision, "fp32, fp16 or bf16")
      ->capture_default_str();
  command->add_option("--trials", options->trials, "seeded trials per problem and variant")
      ->capture_default_str();
  command->add_option("--seed", options->seed, "base seed")->capture_default_str();
  command->add_option("--atol", options->atol, "absolute tolerance (default by dtype)");
  command->add_option("--rtol", options->rtol, "relative tolerance (default by dtype)");
  command->add_option_function<int>(
      "--run-timeout", [o = options.get()](int s) { o->run_timeout = std::chrono::seconds(s); },
      "deadline per problem and variant in seconds (default 300)");
  command->add_option("--python", options->python, "interpreter of the torch environment");
  command->add_option("--cache-dir", options->cache_dir, "where results are recorded");
  command->add_option("--json", *json_path, "write the reports (a JSON array)");

  const auto run = [options, paths, variants, json_path]() -> int {
    if (variants->empty()) {
      *variants = {"standard", "popcorn"};
    }
    std::vector<ProblemCheckResult> results;
    for (const auto& problem : sched::expand_problem_paths(*paths)) {
      for (const auto& variant : *variants) {
        EvalOptions run = *options;
        run.problem = problem;
        run.variant = variant;
        if (const auto problems = validate(run); !problems.empty()) {
          for (const auto& text : problems) {
            std::cerr << "kbench problems check: " << text << "\n";
          }
          return 64;
        }
        std::cerr << fmt::format("kbench problems check: {} [{}]\n", problem.string(), variant);
        results.push_back(check_problem(run));
      }
    }
    std::cout << format_table(results);
    if (!json_path->empty()) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& r : results) {
        all.push_back(to_json(r));
      }
      write_json_file(*json_path, all);
    }
    int code = 0;
    for (const auto& r : results) {
      code = std::max(code, r.verdict == "pass" ? 0 : r.verdict == "fail" ? 1 : 2);
    }
    return code;
  };
  return {problems, run};
}

} // namespace kbench::cli
