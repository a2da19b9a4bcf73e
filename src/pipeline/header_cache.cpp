#include "pipeline/header_cache.hpp"

#include "pipeline/environment.hpp"
#include "sandbox/environment.hpp"
#include "sched/background_helpers.hpp"
#include "sched/helper_command.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace kbench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::optional<fs::path> pch_root(const fs::path& cache_dir) {
  const char* value = std::getenv("KBENCH_PCH");
  const std::string setting = value ? value : "";
  // Opt-in: finding the flags torch would use costs a Python process that imports torch before
  // a cold build (a cached one skips it: has_built_library), and the header's first build
  // 36-46 s; it pays where many C++ candidates build cold. A CUDA candidate's cold build waits
  // on its CUDA unit either way (docs/architecture.md, "load_inline build time").
  if (setting.empty() || setting == "off") {
    return std::nullopt;
  }
  if (setting != "on") {
    throw std::invalid_argument(fmt::format(
        "KBENCH_PCH={} is not a choice: set it to `on` (load_inline builds its binding unit "
        "against kbench's precompiled torch/extension.h) or `off`, or leave it unset (off)",
        setting));
  }
  return (cache_dir.empty() ? sched::cache_directory() : cache_dir) / "pch";
}

std::optional<fs::path> host_pch_root(const fs::path& cache_dir) {
  const char* value = std::getenv("KBENCH_HOST_PCH");
  const std::string setting = value ? value : "";
  if (setting == "off") {
    return std::nullopt;
  }
  if (!setting.empty() && setting != "on") {
    throw std::invalid_argument(fmt::format(
        "KBENCH_HOST_PCH={} is not a choice: set it to `on` (the default: nvcc's host compile "
        "uses kbench's precompiled headers of cudafe++'s output) or `off`",
        setting));
  }
  return (cache_dir.empty() ? sched::cache_directory() : cache_dir) / "host-pch";
}

namespace {

// Made before the worker starts: its Landlock rules grant reads on the cache's entries that
// exist at the spawn (the cache holds the unreadable reference/), so a folder made later by the
// builder would stay invisible to it.
bool make_shared_root(const fs::path& root) {
  std::error_code error;
  fs::create_directories(root, error);
  if (error || !fs::is_directory(root)) {
    return false;
  }
  fs::permissions(root,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  error);
  return true;
}

bool may_offer(const WorkerLaunch& launch, WorkerRole role) {
  return role != WorkerRole::reference &&
         pch_safe_for_worker(launch.sandbox.restrict_filesystem, launch.sandbox.user.has_value());
}

sandbox::EnvironmentMap helper_overrides() {
  return {{"PYTHONPATH", (fs::path(KBENCH_SOURCE_DIR) / "python").string()}};
}

} // namespace

bool offer_host_pch(WorkerLaunch& launch, WorkerRole role, const fs::path& root) {
  if (!may_offer(launch, role) || !make_shared_root(root)) {
    return false;
  }
  launch.environment["KBENCH_HOST_PCH_DIR"] = root.string();
  return true;
}

void build_host_pch_requests(const fs::path& root, const fs::path& python,
                             const fs::path& extensions_base) {
  bool asked = false;
  std::error_code error;
  for (fs::recursive_directory_iterator it(extensions_base, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().filename() == "kbench-host-pch" && it->is_directory(error)) {
      asked = true;
      break;
    }
  }
  if (!asked) {
    return;
  }
  sandbox::EnvironmentMap overrides = helper_overrides();
  if (const char* cap = std::getenv("KBENCH_HOST_PCH_MAX_ENTRIES")) {
    overrides["KBENCH_HOST_PCH_MAX_ENTRIES"] = cap;
  }
  // The workers' own variables (PATH, CUDA_HOME ...), so the compiler is the one nvcc ran.
  sched::run_helper_in_background({interpreter_of(python).string(), "-m", "kbench.host_pch",
                                   "build", "--root", root.string(), extensions_base.string()},
                                  sandbox::to_envp(sandbox::worker_environment(overrides)),
                                  std::chrono::minutes(10));
}

bool pch_safe_for_worker(bool restrict_filesystem, bool runs_as_other_user) {
  return restrict_filesystem || runs_as_other_user;
}

bool offer_pch(WorkerLaunch& launch, WorkerRole role, const fs::path& root) {
  if (!may_offer(launch, role) || !make_shared_root(root)) {
    return false;
  }
  launch.environment["KBENCH_PCH_DIR"] = root.string();
  return true;
}

std::string prepare_pch(const fs::path& root, const fs::path& python, const std::string& candidate,
                        std::chrono::milliseconds deadline) {
  if (fs::path(candidate).extension() != ".py") {
    return ""; // a native candidate (.cu, .cpp) builds without torch's headers
  }
  const fs::path interpreter = interpreter_of(python);
  const std::vector<std::string> args = {
      interpreter.string(), "-m", "kbench.pch", "--root", root.string(), "--candidate", candidate};
  // The workers' own variables (CUDA_HOME, CXX ...), so torch computes the flags they will.
  sandbox::EnvironmentMap overrides = helper_overrides();
  if (const char* cap = std::getenv("KBENCH_PCH_MAX_ENTRIES")) {
    overrides["KBENCH_PCH_MAX_ENTRIES"] = cap;
  }
  const auto outcome =
      sched::run_helper(args, sandbox::to_envp(sandbox::worker_environment(overrides)), deadline);
  if (!outcome.started) {
    return "precompiled header not prepared: " + outcome.output;
  }
  if (outcome.timed_out) {
    return fmt::format("precompiled header not prepared: kbench.pch ran past {} s; the "
                       "candidate builds without it",
                       deadline.count() / 1000);
  }
  if (outcome.exit_code != 0) {
    std::string output = outcome.output;
    while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
      output.pop_back();
    const auto cut = output.size() > 600 ? output.substr(output.size() - 600) : output;
    return fmt::format("precompiled header not prepared (the candidate builds without it): {}",
                       cut);
  }
  return "";
}

bool has_built_library(const fs::path& extensions_base) {
  std::error_code error;
  for (fs::recursive_directory_iterator it(extensions_base, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().extension() == ".so" && it->is_regular_file(error)) {
      return true;
    }
  }
  return false;
}

CompileOutcome compile_with_pch(sandbox::WorkerClient& worker,
                                const std::optional<fs::path>& pch_dir, const fs::path& python,
                                const std::string& candidate_path, const fs::path& extensions_base,
                                std::chrono::seconds timeout,
                                const std::optional<fs::path>& host_pch_dir) {
  const auto start = Clock::now();
  // A build already in the cache for this source and these settings is loaded, not compiled:
  // the header's flags need not be found (a torch import, 1.3 s of a warm evaluation).
  const bool built = has_built_library(extensions_base);
  const std::string unprepared =
      pch_dir && !built ? prepare_pch(*pch_dir, python, candidate_path, timeout) : "";
  const double prepared_s = std::chrono::duration<double>(Clock::now() - start).count();
  CompileOutcome out = compile_candidate(worker, candidate_path, extensions_base, timeout);
  out.info.seconds += prepared_s;
  if (!unprepared.empty()) {
    out.info.pch = "not used: " + unprepared;
  }
  if (host_pch_dir && !built && out.phase.ok) {
    build_host_pch_requests(*host_pch_dir, python, extensions_base);
  }
  return out;
}

} // namespace kbench
