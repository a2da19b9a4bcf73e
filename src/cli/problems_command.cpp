// kbench problems check PATH...: reports, per problem and variant, whether the problem is fit
// to grade candidates with (docs/problems.md, "Checking problems"). Several checks at once in
// this one process (pipeline/problem_batch.hpp), each appended to --jsonl as it finishes.
#include "cli/commands.hpp"
#include "core/json_io.hpp"
#include "pipeline/problem_batch.hpp"
#include "pipeline/problem_checking.hpp"
#include "pipeline/worker_phase.hpp"
#include "report/suite_progress.hpp"
#include "report/summary.hpp"
#include "sched/jsonl_log.hpp"
#include "sched/suite_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

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

// A line when a check starts and one when it ends, with the batch's progress, as `kbench suite`
// prints them to a log (a batch of checks runs unattended, so no terminal redraw).
class CheckProgress {
public:
  explicit CheckProgress(std::size_t total) : m_started(std::chrono::steady_clock::now()) {
    m_progress.total = total;
    m_progress.verb = "checked";
  }
  void finished(const ProblemCheckResult& r) {
    ++m_progress.done;
    m_progress.failed += r.verdict == "pass" ? 0 : 1;
    m_progress.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    std::cerr << fmt::format("kbench problems check: {} [{}] -> {} ({:.1f} s, {})  ({})\n",
                             r.problem_path, r.variant, r.verdict, r.wall_s,
                             r.worker_started.empty() ? "no worker" : r.worker_started,
                             report::format_progress(m_progress));
  }

private:
  std::chrono::steady_clock::time_point m_started;
  report::SuiteProgress m_progress;
};

// The report a --jsonl line holds, read back for --resume (the fields format_table and the
// exit code use; the line itself is kept as it is for --json).
ProblemCheckResult result_from_line(const nlohmann::json& line) {
  ProblemCheckResult r;
  r.problem_path = line["problem"].value("path", "");
  r.problem_sha256 = line["problem"].value("sha256", "");
  r.variant = line.value("variant", "");
  r.precision = line.value("precision", "");
  r.device = line.value("device", "");
  r.device_name = line.value("device_name", "");
  r.verdict = line.value("verdict", "not checked");
  r.message = line.value("message", "");
  for (const auto& f : line.value("findings", nlohmann::json::array())) {
    r.findings.push_back({f.value("check", ""), f.value("severity", ""), f.value("message", "")});
  }
  r.trials = line.value("trials", nlohmann::json::array());
  if (line.contains("reference_call_us") && line["reference_call_us"].is_number()) {
    r.call_us = line["reference_call_us"].get<double>();
  }
  r.wall_s = line.value("wall_s", 0.0);
  r.worker_started = line.value("worker_started", "");
  return r;
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
  auto jobs = std::make_shared<int>(std::max(1u, std::thread::hardware_concurrency() / 2));
  command
      ->add_option("--jobs", *jobs,
                   "checks at once (on cuda their timed parts still take the GPU one at a time)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  auto jsonl = std::make_shared<std::string>();
  command->add_option("--jsonl", *jsonl, "append every report, one per line, as each finishes");
  auto resume = std::make_shared<bool>(false);
  command->add_flag("--resume", *resume,
                    "skip the checks --jsonl already holds for the same problem content and "
                    "settings (the file an earlier, perhaps killed, run wrote)");

  const auto run = [options, paths, variants, json_path, jobs, jsonl, resume]() -> int {
    if (variants->empty()) {
      *variants = {"standard", "popcorn"};
    }
    if (*resume && jsonl->empty()) {
      std::cerr << "kbench problems check: --resume reads the reports of an earlier run from "
                   "--jsonl; name the file with --jsonl FILE\n";
      return 64;
    }
    // "auto" is resolved once, so that the keys --resume matches on name the device kind.
    if (options->device == "auto") {
      options->device = choose_device("auto", options->gpu).gpu ? "cuda" : "cpu";
    }
    std::vector<EvalOptions> runs;
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
        runs.push_back(run);
      }
    }
    std::vector<std::optional<nlohmann::json>> keys;
    for (const auto& run : runs) {
      keys.push_back(check_key(run));
    }
    // Reports by slot: reused from the --jsonl, or filled as the checks finish.
    std::vector<std::optional<nlohmann::json>> lines(runs.size());
    sched::JsonlLog log;
    if (*resume) {
      try {
        log = sched::read_jsonl_log(*jsonl, "problem check report", "problems check");
      } catch (const std::exception& error) {
        std::cerr << "kbench problems check: " << error.what() << "\n";
        return 64;
      }
      for (const auto& warning : log.warnings) {
        std::cerr << "kbench problems check: " << warning << "\n";
      }
      for (std::size_t i = 0; i < runs.size(); ++i) {
        for (const auto& [number, line] : log.lines) { // the last match is the newest
          if (keys[i] && line.contains("check_key") && line["check_key"] == *keys[i]) {
            lines[i] = line;
          }
        }
      }
    }
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (!lines[i]) {
        todo.push_back(i);
      }
    }
    if (*resume) {
      std::cerr << fmt::format("kbench problems check: {} of {} reused from {}, {} to check\n",
                               runs.size() - todo.size(), runs.size(), *jsonl, todo.size());
    }
    std::ofstream appended;
    if (!jsonl->empty()) {
      if (sched::open_jsonl_for_append(appended, *jsonl, *resume, log.complete_bytes)) {
        std::cerr << "kbench problems check: cannot write " << *jsonl
                  << "; check that its directory exists and is writable\n";
        return 73;
      }
    }
    std::vector<EvalOptions> batch;
    for (const auto i : todo) {
      batch.push_back(runs[i]);
    }
    std::cerr << fmt::format("kbench problems check: {} check(s), {} at a time\n", batch.size(),
                             std::min<std::size_t>(static_cast<std::size_t>(*jobs), batch.size()));
    CheckProgress progress(batch.size());
    check_problems(
        batch, *jobs,
        [&](std::size_t b, const ProblemCheckResult& result) {
          const std::size_t i = todo[b];
          lines[i] = keys[i] ? check_line(result, *keys[i]) : to_json(result);
          if (appended) {
            // flushed: a killed batch keeps its lines, and --resume picks up from them
            appended << lines[i]->dump() << "\n" << std::flush;
          }
          progress.finished(result);
        },
        [&](std::size_t, const ProblemCheckResult& result) {
          std::string why = result.message;
          for (const auto& finding : result.findings) {
            if (why.empty() && finding.severity == "error") {
              why = finding.message;
            }
          }
          std::cerr << fmt::format("kbench problems check: {} [{}] ran out of room beside the "
                                   "other checks ({}): it runs again alone once they are done\n",
                                   result.problem_path, result.variant, why.substr(0, 200));
        });
    std::vector<ProblemCheckResult> results;
    for (const auto& line : lines) {
      results.push_back(result_from_line(*line));
    }
    std::cout << format_table(results);
    if (!json_path->empty()) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& line : lines) {
        nlohmann::json report = *line;
        report.erase("check_key");
        all.push_back(report);
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
