// kbench suite MANIFEST: evaluates the (problem, candidate) pairs a manifest lists and prints
// one table. `make run` uses it on examples/examples.json.
//
// Manifest (JSON): {"entries": [{"problem": P, "candidate": C, "device": "cpu"|"cuda"|"any",
//                                "expect": STATUS, "variant": V}, ...]}
// Paths are relative to the manifest's directory. "cpu" entries always run on the CPU, "cuda"
// entries only where a GPU is usable (else they are listed as skipped), "any" entries on the
// suite's --device.
#include "cli/commands.hpp"
#include "cli/suite_table.hpp"
#include "core/evaluation.hpp"
#include "core/json_io.hpp"
#include "sched/device_probe.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

struct ManifestEntry {
  std::string problem, candidate, device, expect, variant;
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
        throw std::runtime_error(fmt::format("{}: entries[{}] is not an object", path.string(), index));
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
    ManifestEntry entry{field("problem", nullptr), field("candidate", nullptr),
                        field("device", "any"), field("expect", ""), field("variant", "")};
    if (entry.device != "cpu" && entry.device != "cuda" && entry.device != "any") {
      throw std::runtime_error(fmt::format(
          "{}: entries[{}].device must be cpu, cuda or any, not '{}'", path.string(), index,
          entry.device));
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

} // namespace

std::function<int()> register_suite_command(CLI::App& app) {
  auto* command = app.add_subcommand("suite", "evaluate every pair a manifest lists; print a table");
  auto options = std::make_shared<EvalOptions>();
  auto manifest = std::make_shared<std::string>();
  auto jsonl = std::make_shared<std::string>();
  command->add_option("manifest", *manifest, "suite manifest (JSON)")->required();
  add_shared_eval_options(*command, *options);
  command->add_option("--jsonl", *jsonl, "write every result document, one per line");

  return [options, manifest, jsonl]() -> int {
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
    std::vector<SuiteRow> rows;
    for (const auto& entry : entries) {
      SuiteRow row{entry.problem, entry.candidate, "", std::nullopt, "", entry.expect};
      row.device = entry.device == "any" ? suite_device : entry.device;
      if (row.device == "cuda" && !have_gpu) {
        row.skipped_reason = "needs a GPU";
        rows.push_back(std::move(row));
        continue;
      }
      EvalOptions run = *options;
      run.problem = base / entry.problem;
      run.candidate = base / entry.candidate;
      run.device = row.device;
      if (!entry.variant.empty()) {
        run.variant = entry.variant;
      }
      std::cerr << fmt::format("kbench suite: [{}/{}] {} x {} on {}\n", rows.size() + 1,
                               entries.size(), entry.problem, entry.candidate, row.device);
      row.result = evaluate(run);
      if (lines.is_open()) {
        lines << to_json(*row.result).dump() << "\n";
      }
      rows.push_back(std::move(row));
    }
    std::cout << format_suite_table(rows);
    const auto missed = std::count_if(rows.begin(), rows.end(),
                                      [](const SuiteRow& r) { return !r.met_expectation(); });
    const auto skipped = std::count_if(rows.begin(), rows.end(),
                                       [](const SuiteRow& r) { return !r.result.has_value(); });
    std::cout << fmt::format("{} evaluated, {} skipped, {} not as expected\n",
                             rows.size() - static_cast<std::size_t>(skipped), skipped, missed);
    return missed == 0 ? 0 : 1;
  };
}

} // namespace kbench::cli
