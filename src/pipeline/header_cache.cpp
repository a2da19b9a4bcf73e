#include "pipeline/header_cache.hpp"

#include "pipeline/environment.hpp"
#include "sandbox/environment.hpp"
#include "sched/background_helpers.hpp"
#include "sched/helper_command.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

namespace kbench {

namespace fs = std::filesystem;

std::optional<fs::path> pch_root(const fs::path& cache_dir) {
  const char* value = std::getenv("KBENCH_PCH");
  const std::string setting = value ? value : "";
  if (!setting.empty() && setting != "on" && setting != "off") {
    throw std::invalid_argument(fmt::format(
        "KBENCH_PCH={} is not a choice: set it to `on` (load_inline builds its binding unit "
        "against kbench's precompiled torch/extension.h, built once per flag set) or `off`, or "
        "leave it unset (off)",
        setting));
  }
  // Opt-in: no batch has shown it faster. On the H100 host's batch from a fresh cache the run
  // with it was slower, though mostly before any header existed (docs/gpu-validation.md,
  // seventeenth session); its build is 50 s of one core and 685 MB per flag set.
  if (setting != "on") {
    return std::nullopt;
  }
  return (cache_dir.empty() ? sched::cache_directory() : cache_dir) / "pch";
}

namespace {

// <cache_dir>/<folder> unless `variable` is `off`; unset and `on` are on. `on_means` says what
// `on` does, for the error that names the choices.
std::optional<fs::path> on_unless_off(const char* variable, const char* on_means,
                                      const fs::path& cache_dir, const char* folder) {
  const char* value = std::getenv(variable);
  const std::string setting = value ? value : "";
  if (setting == "off") {
    return std::nullopt;
  }
  if (!setting.empty() && setting != "on") {
    throw std::invalid_argument(
        fmt::format("{}={} is not a choice: set it to `on` (the default: {}) or `off`", variable,
                    setting, on_means));
  }
  return (cache_dir.empty() ? sched::cache_directory() : cache_dir) / folder;
}

} // namespace

std::optional<fs::path> host_pch_root(const fs::path& cache_dir) {
  return on_unless_off("KBENCH_HOST_PCH",
                       "nvcc's host compile uses kbench's precompiled headers of cudafe++'s output",
                       cache_dir, "host-pch");
}

std::optional<fs::path> aten_subset_root(const fs::path& cache_dir) {
  return on_unless_off("KBENCH_ATEN_SUBSET",
                       "units built against torch/types.h read kbench's ATen/Functions.h, which "
                       "includes only the operators they and torch's headers name",
                       cache_dir, "aten-subset");
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

// The entry follows from the torch install alone and takes about 2 s to build, so it is built
// before the first worker that could use it, once per process (then about 0.1 s to find it).
void ensure_aten_subset(const fs::path& root, const fs::path& python) {
  static std::mutex mutex;
  static std::set<std::pair<fs::path, fs::path>> done;
  std::lock_guard lock(mutex);
  if (!done.insert({root, python}).second) {
    return;
  }
  const auto outcome = sched::run_helper(
      {interpreter_of(python).string(), "-m", "kbench.aten_subset", "build", "--root",
       root.string()},
      sandbox::to_envp(sandbox::worker_environment(helper_overrides())), std::chrono::minutes(2));
  if (!outcome.started || outcome.exit_code != 0) {
    // The units build against torch's own header and say so (compile.aten_header).
    fmt::print(stderr, "kbench: kbench's ATen/Functions.h was not built ({}): {}\n",
               outcome.timed_out ? "past 2 minutes" : "the builder failed", outcome.output);
  }
}

} // namespace

bool offer_aten_subset(WorkerLaunch& launch, WorkerRole role, const fs::path& root,
                       const fs::path& python) {
  if (!may_offer(launch, role) || !make_shared_root(root)) {
    return false;
  }
  ensure_aten_subset(root, python);
  launch.environment["KBENCH_ATEN_SUBSET_DIR"] = root.string();
  return true;
}

bool offer_host_pch(WorkerLaunch& launch, WorkerRole role, const fs::path& root) {
  if (!may_offer(launch, role) || !make_shared_root(root)) {
    return false;
  }
  launch.environment["KBENCH_HOST_PCH_DIR"] = root.string();
  return true;
}

namespace {

// A header cache's builder (python/kbench/pch.py, host_pch.py): the folder name of the requests
// workers leave, its module, and the variable capping its entries.
struct HeaderBuilder {
  const char* requests;
  const char* module;
  const char* cap;
};

void build_requests(const HeaderBuilder& builder, const fs::path& root, const fs::path& python,
                    const fs::path& extensions_base) {
  bool asked = false;
  std::error_code error;
  for (fs::recursive_directory_iterator it(extensions_base, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().filename() == builder.requests && it->is_directory(error)) {
      asked = true;
      break;
    }
  }
  if (!asked) {
    return;
  }
  sandbox::EnvironmentMap overrides = helper_overrides();
  if (const char* cap = std::getenv(builder.cap)) {
    overrides[builder.cap] = cap;
  }
  // The workers' own variables (PATH, CUDA_HOME ...), so the compiler is the one they ran.
  sched::run_helper_in_background({interpreter_of(python).string(), "-m", builder.module, "build",
                                   "--root", root.string(), extensions_base.string()},
                                  sandbox::to_envp(sandbox::worker_environment(overrides)),
                                  std::chrono::minutes(10));
}

} // namespace

void build_host_pch_requests(const fs::path& root, const fs::path& python,
                             const fs::path& extensions_base) {
  build_requests({"kbench-host-pch", "kbench.host_pch", "KBENCH_HOST_PCH_MAX_ENTRIES"}, root,
                 python, extensions_base);
}

void build_pch_requests(const fs::path& root, const fs::path& python,
                        const fs::path& extensions_base) {
  build_requests({"kbench-pch", "kbench.pch", "KBENCH_PCH_MAX_ENTRIES"}, root, python,
                 extensions_base);
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
  // A build already in the cache for this source and these settings is loaded, not compiled:
  // it asked for nothing.
  const bool built = has_built_library(extensions_base);
  CompileOutcome out = compile_candidate(worker, candidate_path, extensions_base, timeout);
  if (!built && out.phase.ok) {
    if (host_pch_dir) {
      build_host_pch_requests(*host_pch_dir, python, extensions_base);
    }
    if (pch_dir) {
      build_pch_requests(*pch_dir, python, extensions_base);
    }
  }
  return out;
}

} // namespace kbench
