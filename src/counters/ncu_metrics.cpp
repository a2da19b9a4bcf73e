#include "counters/ncu_metrics.hpp"

#include "counters/embedded_data.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kbench::counters {
namespace {

struct MetricEntry {
  std::string name;
  std::vector<std::string> sets;
};

const std::vector<MetricEntry>& entries() {
  static const std::vector<MetricEntry> parsed = [] {
    std::vector<MetricEntry> out;
    std::istringstream lines{std::string(embedded::kNcuMetrics)};
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      MetricEntry entry;
      if (!(words >> entry.name) || entry.name.starts_with('#')) {
        continue;
      }
      for (std::string set; words >> set;) {
        entry.sets.push_back(set);
      }
      out.push_back(std::move(entry));
    }
    return out;
  }();
  return parsed;
}

} // namespace

const std::vector<std::string>& profile_sets() {
  static const std::vector<std::string> sets = {"sol", "full"};
  return sets;
}

std::vector<std::string> metrics_for_set(const std::string& set) {
  if (std::find(profile_sets().begin(), profile_sets().end(), set) == profile_sets().end()) {
    throw std::runtime_error(
        fmt::format("unknown profile set '{}' (known: {})", set, fmt::join(profile_sets(), ", ")));
  }
  std::vector<std::string> out;
  for (const auto& entry : entries()) {
    if (std::find(entry.sets.begin(), entry.sets.end(), set) != entry.sets.end()) {
      out.push_back(entry.name);
    }
  }
  return out;
}

bool collected_by(std::string_view name, const std::string& set) {
  return std::any_of(entries().begin(), entries().end(), [&](const MetricEntry& entry) {
    return entry.name.starts_with(name) &&
           std::find(entry.sets.begin(), entry.sets.end(), set) != entry.sets.end();
  });
}

std::optional<std::filesystem::path> find_ncu(std::string& why_not) {
  if (const char* set = std::getenv("KBENCH_NCU"); set && *set) {
    if (std::filesystem::exists(set)) {
      return std::filesystem::path(set);
    }
    why_not = fmt::format("KBENCH_NCU={} does not exist", set);
    return std::nullopt;
  }
  std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) {
    if (!dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / "ncu")) {
      return std::filesystem::path(dir) / "ncu";
    }
  }
  if (std::filesystem::exists("/usr/local/cuda/bin/ncu")) {
    return std::filesystem::path("/usr/local/cuda/bin/ncu");
  }
  why_not = "Nsight Compute (ncu) is not installed: not on PATH, not in /usr/local/cuda/bin; set "
            "KBENCH_NCU to its path";
  return std::nullopt;
}

std::optional<std::string> counters_need_admin(const std::string& driver_params) {
  std::istringstream lines(driver_params);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("RmProfilingAdminOnly:", 0) == 0) {
      const std::string value = line.substr(line.find(':') + 1);
      if (value.find_first_not_of(" \t0") == std::string::npos) {
        return std::nullopt;
      }
      return fmt::format("the NVIDIA driver lets only administrators read GPU performance "
                         "counters (RmProfilingAdminOnly:{} in {}; the nvidia module option "
                         "NVreg_RestrictProfilingToAdminUsers=0 lifts this)",
                         value, kNvidiaDriverParams);
    }
  }
  return std::nullopt;
}

std::optional<std::string> counters_need_admin() {
  std::ifstream params(kNvidiaDriverParams);
  if (!params) {
    return std::nullopt; // no NVIDIA driver: Nsight Compute has nothing to profile
  }
  std::stringstream text;
  text << params.rdbuf();
  return counters_need_admin(text.str());
}

std::vector<std::string> ncu_arguments(const std::filesystem::path& ncu, const std::string& set,
                                       const std::filesystem::path& log_file) {
  return {ncu.string(),
          "--profile-from-start",
          "off",
          "--target-processes",
          "application-only",
          "--metrics",
          fmt::format("{}", fmt::join(metrics_for_set(set), ",")),
          "--csv",
          "--page",
          "raw",
          "--print-units",
          "base",
          "--log-file",
          log_file.string(),
          "--force-overwrite"};
}

} // namespace kbench::counters
