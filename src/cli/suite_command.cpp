// kbench suite MANIFEST: evaluates the (problem, candidate) pairs a manifest lists and prints
// one table. `make run` uses it on examples/examples.json.
//
// Manifest (JSON): {"entries": [{"problem": P, "candidate": C, "device": "cpu"|"cuda"|"any",
//                                "expect": STATUS, "variant": V, "run_timeout_s": N,
//                                "world_size": N, "rules": R}, ...]}
// "rules" names the static check's rule set for that entry (a bundled name or a path relative
// to the manifest), so a suite can relax a rule for the entries that need it.
// Paths are relative to the manifest's directory. "cpu" entries always run on the CPU, "cuda"
// entries only where a GPU is usable (else they are listed as skipped), "any" entries on the
// suite's --device.
#include "cli/commands.hpp"
#include "report/suite_table.hpp"
#include "pipeline/evaluation.hpp"
#include "core/json_io.hpp"
#include "sched/device_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

struct ManifestEntry {
  std::string problem, candidate, device, expect, variant;
  std::optional<int> run_timeout_s;
  std::optional<int> world_size; // ranks; absent: the problem's KBENCH_WORLD_SIZE, else 1
  std::string rules;             // static check rule set; empty: the default
};

std::vector<ManifestEntry> read_manifest(const fs::path& path) {
  const nlohmann::json document = read_json_file(path);
  if (!document.is_object() || !document.contains("entries") || !document["entries"].is_array()) {
    throw std::runtime_error(path.string() + ": expected an object with an \"entries\" array");
  }
  std::vector<ManifestEntry> entries;
  std::size_t index = 0;
  for (const auto& item : document["entries"]) {
    auto field = [&](const char* name, const char* fallback) -> std::string {
      if (!item.is_object()) {
        throw std::runtime_error(
            fmt::format("{}: entries[{}] is not an object", path.string(), index));
      }
      if (!item.contains(name)) {
        if (fallback) {
          return fallback;
        }
        throw std::runtime_error(
            fmt::format("{}: entries[{}] has no \"{}\"", path.string(), index, name));
      }
      if (!item[name].is_string()) {
        throw std::runtime_error(
            fmt::format("{}: entries[{}].{} must be a string", path.string(), index, name));
      }
      return item[name].get<std::string>();
    };
    ManifestEntry entry{field("problem", nullptr),
                        field("candidate", nullptr),
                        field("device", "any"),
                        field("expect", ""),
                        field("variant", ""),
                        std::nullopt,
                        std::nullopt,
                        field("rules", "")};
    const auto positive = [&](const char* name) -> std::optional<int> {
      if (!item.contains(name)) {
        return std::nullopt;
      }
      if (!item[name].is_number_integer() || item[name].get<int>() <= 0) {
        throw std::runtime_error(fmt::format("{}: entries[{}].{} must be a positive integer",
                                             path.string(), index, name));
      }
      return item[name].get<int>();
    };
    entry.run_timeout_s = positive("run_timeout_s");
    entry.world_size = positive("world_size");
    if (entry.device != "cpu" && entry.device != "cuda" && entry.device != "any") {
      throw std::runtime_error(
          fmt::format("{}: entries[{}].device must be cpu, cuda or any, not '{}'", path.string(),
                      index, entry.device));
    }
    if (!entry.expect.empty() && !status_from_name(entry.expect)) {
      throw std::runtime_error(fmt::format("{}: entries[{}].expect: unknown status '{}'",
                                           path.string(), index, entry.expect));
    }
    entries.push_back(std::move(entry));
    ++index;
  }
  return entries;
}

// Builds every candidate the suite will evaluate, `jobs` at a time, before any evaluation:
// builds are CPU work and parallel, timed evaluations are GPU work and one at a time. The
// evaluations then find their builds in the compile cache.
void prebuild(const std::vector<EvalOptions>& runs, int jobs) {
  std::set<std::pair<fs::path, std::string>> seen;
  std::vector<EvalOptions> unique;
  for (const auto& run : runs) {
    if (seen.insert({fs::weakly_canonical(run.candidate), run.device}).second) {
      EvalOptions build = run;
      build.compile_only = true;
      unique.push_back(std::move(build));
    }
  }
  std::cerr << fmt::format("kbench suite: building {} candidate(s), {} at a time\n", unique.size(),
                           jobs);
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j) {
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < unique.size(); i = next++) {
        evaluate(unique[i]);
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

} // namespace

std::function<int()> register_suite_command(CLI::App& app) {
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

  return [options, manifest, jsonl, jobs, only_device]() -> int {
    if (const auto problems = validate(*options); !problems.empty()) {
      for (const auto& problem : problems) {
        std::cerr << "kbench suite: " << problem << "\n";
      }
      return 64;
    }
    std::vector<ManifestEntry> entries;
    try {
      entries = read_manifest(*manifest);
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
    const fs::path base = fs::path(*manifest).parent_path();
    const bool have_gpu = !sched::probe_devices().gpus.empty();
    const std::string suite_device =
        options->device == "auto" ? (have_gpu ? "cuda" : "cpu") : options->device;
    std::vector<report::SuiteRow> rows;
    std::vector<EvalOptions> runs;
    for (const auto& entry : entries) {
      report::SuiteRow row{entry.problem, entry.candidate, "", std::nullopt, "", entry.expect};
      row.device = entry.device == "any" ? suite_device : entry.device;
      if (!only_device->empty() && row.device != *only_device) {
        continue;
      }
      EvalOptions run = *options;
      run.problem = base / entry.problem;
      run.candidate = base / entry.candidate;
      run.device = row.device;
      if (!entry.variant.empty()) {
        run.variant = entry.variant;
      }
      if (entry.run_timeout_s) {
        run.run_timeout = std::chrono::seconds(*entry.run_timeout_s);
      }
      if (entry.world_size) {
        run.world_size = *entry.world_size;
      }
      if (!entry.rules.empty()) {
        run.rules = names_bundled_rule_set(entry.rules) ? std::filesystem::path(entry.rules)
                                                        : base / entry.rules;
      }
      const int gpus = static_cast<int>(sched::probe_devices().gpus.size());
      if (row.device == "cuda" && !have_gpu) {
        row.skipped_reason = "needs a GPU";
      } else if (row.device == "cuda" && entry.world_size && *entry.world_size > gpus) {
        row.skipped_reason = fmt::format("needs {} GPUs, {} here", *entry.world_size, gpus);
      } else {
        runs.push_back(run);
      }
      rows.push_back(std::move(row));
    }
    if (*jobs > 1 && runs.size() > 1) {
      prebuild(runs, *jobs);
    }
    std::size_t next_run = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto& row = rows[i];
      if (!row.skipped_reason.empty()) {
        continue;
      }
      std::cerr << fmt::format("kbench suite: [{}/{}] {} x {} on {}\n", i + 1, rows.size(),
                               row.problem, row.candidate, row.device);
      row.result = evaluate(runs[next_run++]);
      std::cerr << fmt::format("kbench suite:   -> {} ({:.1f} s){}\n",
                               status_name(row.result->status), row.result->wall_s,
                               row.met_expectation() ? "" : ", expected " + row.expect);
      if (lines.is_open()) {
        lines << to_json(*row.result).dump() << std::endl; // flushed: a killed suite keeps its rows
      }
    }
    std::cout << report::format_suite_table(rows);
    const auto missed = std::count_if(rows.begin(), rows.end(),
                                      [](const report::SuiteRow& r) { return !r.met_expectation(); });
    const auto skipped = std::count_if(rows.begin(), rows.end(),
                                       [](const report::SuiteRow& r) { return !r.result.has_value(); });
    std::cout << fmt::format("{} evaluated, {} skipped, {} not as expected\n",
                             rows.size() - static_cast<std::size_t>(skipped), skipped, missed);
    return missed == 0 ? 0 : 1;
  };
}

} // namespace kbench::cli
