// kbench suite MANIFEST: evaluates the (problem, candidate) pairs a manifest lists and prints
// one table. `make run` uses it on examples/examples.json. The manifest's format and how its
// entries become evaluations: sched/suite_plan.hpp.
#include "cli/commands.hpp"
#include "cli/eval_flags.hpp"
#include "core/json_io.hpp"
#include "pipeline/evaluation.hpp"
#include "pipeline/suite_prebuild.hpp"
#include "report/suite_table.hpp"
#include "sched/device_probe.hpp"
#include "sched/suite_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

// --build-only: the builds a suite would run ahead, reported one line each; exit 1 when one
// failed, so a script that warms the cache sees it.
int build_all(const std::vector<EvalOptions>& builds, int jobs) {
  std::cerr << fmt::format("kbench suite: building {} candidate(s), {} at a time\n", builds.size(),
                           jobs);
  const auto results = prebuild(builds, jobs);
  int failed = 0;
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const bool built = results[i].status == Status::ok;
    failed += built ? 0 : 1;
    std::cout << fmt::format("{} {} ({:.1f} s{})\n", built ? "built " : "FAILED",
                             builds[i].candidate.string(), results[i].wall_s,
                             built ? "" : ": " + results[i].message);
  }
  std::cout << fmt::format("{} built, {} failed\n", builds.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}

} // namespace

Command register_suite_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("suite", "evaluate every pair a manifest lists; print a table");
  auto options = std::make_shared<EvalOptions>();
  auto manifest = std::make_shared<std::string>();
  auto jsonl = std::make_shared<std::string>();
  command->add_option("manifest", *manifest, "suite manifest (JSON)")->required();
  add_shared_eval_options(*command, *options);
  command->add_option("--jsonl", *jsonl, "write every result document, one per line");
  auto only_device = std::make_shared<std::string>();
  command->add_option("--only-device", *only_device,
                      "evaluate only the entries that run on this device (cpu or cuda)");
  auto jobs = std::make_shared<int>(std::max(1u, std::thread::hardware_concurrency() / 2));
  command->add_option("--jobs", *jobs, "candidates built in parallel before the evaluations")
      ->capture_default_str();
  auto build_only = std::make_shared<bool>(false);
  command->add_flag("--build-only", *build_only,
                    "build every candidate into the compile cache, --jobs at a time, and evaluate "
                    "none (warms the cache before a timed run)");

  const auto run = [options, manifest, jsonl, jobs, only_device, build_only]() -> int {
    if (const auto problems = validate(*options); !problems.empty()) {
      for (const auto& problem : problems) {
        std::cerr << "kbench suite: " << problem << "\n";
      }
      return 64;
    }
    std::vector<sched::ManifestEntry> entries;
    try {
      entries = sched::read_manifest(*manifest);
    } catch (const std::exception& error) {
      std::cerr << "kbench suite: " << error.what() << "\n";
      return 64;
    }
    std::ofstream lines;
    if (!jsonl->empty()) {
      lines.open(*jsonl);
      if (!lines) {
        std::cerr << "kbench suite: cannot write " << *jsonl << "\n";
        return 64;
      }
    }
    const int gpu_count = static_cast<int>(sched::probe_devices().gpus.size());
    const auto planned = sched::plan_suite(entries, *options, fs::path(*manifest).parent_path(),
                                           *only_device, gpu_count);
    std::vector<report::SuiteRow> rows;
    std::vector<EvalOptions> runs;
    for (const auto& plan : planned) {
      rows.push_back({plan.entry.problem, plan.entry.candidate, plan.device, std::nullopt,
                      plan.skipped_reason, plan.entry.expect});
      if (plan.run) {
        runs.push_back(*plan.run);
      }
    }
    if (*build_only) {
      return build_all(sched::distinct_builds(runs), *jobs);
    }
    if (*jobs > 1 && runs.size() > 1) {
      const auto builds = sched::distinct_builds(runs);
      std::cerr << fmt::format("kbench suite: building {} candidate(s), {} at a time\n",
                               builds.size(), *jobs);
      prebuild(builds, *jobs);
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!planned[i].run) {
        continue;
      }
      auto& row = rows[i];
      std::cerr << fmt::format("kbench suite: [{}/{}] {} x {} on {}\n", i + 1, rows.size(),
                               row.problem, row.candidate, row.device);
      row.result = evaluate(*planned[i].run);
      std::cerr << fmt::format("kbench suite:   -> {} ({:.1f} s){}\n",
                               status_name(row.result->status), row.result->wall_s,
                               row.met_expectation() ? "" : ", expected " + row.expect);
      if (lines.is_open()) {
        lines << to_json(*row.result).dump() << std::endl; // flushed: a killed suite keeps its rows
      }
    }
    std::cout << report::format_suite_table(rows);
    const auto missed = std::count_if(
        rows.begin(), rows.end(), [](const report::SuiteRow& r) { return !r.met_expectation(); });
    const auto skipped = std::count_if(
        rows.begin(), rows.end(), [](const report::SuiteRow& r) { return !r.result.has_value(); });
    std::cout << fmt::format("{} evaluated, {} skipped, {} not as expected\n",
                             rows.size() - static_cast<std::size_t>(skipped), skipped, missed);
    return missed == 0 ? 0 : 1;
  };
  return {command, run};
}

} // namespace kbench::cli
