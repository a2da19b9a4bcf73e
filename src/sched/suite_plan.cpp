// Reading a suite manifest, planning its runs, expanding problem paths (sched/suite_plan.hpp).
#include "sched/suite_plan.hpp"

#include "core/json_io.hpp"
#include "core/result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

namespace kbench::sched {
namespace fs = std::filesystem;

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

namespace {

// The suite's options with the entry's paths and overrides applied.
EvalOptions run_for(const ManifestEntry& entry, const EvalOptions& options,
                    const fs::path& manifest_dir, const std::string& device) {
  EvalOptions run = options;
  run.problem = manifest_dir / entry.problem;
  run.candidate = manifest_dir / entry.candidate;
  run.device = device;
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
    run.rules =
        names_bundled_rule_set(entry.rules) ? fs::path(entry.rules) : manifest_dir / entry.rules;
  }
  return run;
}

} // namespace

std::vector<PlannedEntry> plan_suite(const std::vector<ManifestEntry>& entries,
                                     const EvalOptions& options, const fs::path& manifest_dir,
                                     const std::string& only_device, int gpu_count) {
  const bool have_gpu = gpu_count > 0;
  const std::string suite_device =
      options.device == "auto" ? (have_gpu ? "cuda" : "cpu") : options.device;
  std::vector<PlannedEntry> planned;
  for (const auto& entry : entries) {
    PlannedEntry plan{entry, entry.device == "any" ? suite_device : entry.device, std::nullopt, ""};
    if (!only_device.empty() && plan.device != only_device) {
      continue;
    }
    if (plan.device == "cuda" && !have_gpu) {
      plan.skipped_reason = "needs a GPU";
    } else if (plan.device == "cuda" && entry.world_size && *entry.world_size > gpu_count) {
      plan.skipped_reason = fmt::format("needs {} GPUs, {} here", *entry.world_size, gpu_count);
    } else {
      plan.run = run_for(entry, options, manifest_dir, plan.device);
    }
    planned.push_back(std::move(plan));
  }
  return planned;
}

std::vector<EvalOptions> distinct_builds(const std::vector<EvalOptions>& runs) {
  std::set<std::pair<fs::path, std::string>> seen;
  std::vector<EvalOptions> builds;
  for (const auto& run : runs) {
    if (seen.insert({fs::weakly_canonical(run.candidate), run.device}).second) {
      EvalOptions build = run;
      build.compile_only = true;
      builds.push_back(std::move(build));
    }
  }
  return builds;
}

std::vector<fs::path> expand_problem_paths(const std::vector<std::string>& paths) {
  std::vector<fs::path> problems;
  for (const auto& path : paths) {
    if (fs::is_directory(path)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().extension() == ".py" &&
            entry.path().filename() != "__init__.py") {
          found.push_back(entry.path());
        }
      }
      std::sort(found.begin(), found.end());
      problems.insert(problems.end(), found.begin(), found.end());
    } else {
      problems.emplace_back(path);
    }
  }
  return problems;
}

} // namespace kbench::sched
