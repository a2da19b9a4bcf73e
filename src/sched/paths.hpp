#pragma once
// Where kbench finds its worker, its Python package and its caches.
#include <filesystem>
#include <string>

namespace kbench::sched {

// The directory of the running executable (from /proc/self/exe).
std::filesystem::path executable_directory();
// kbench-worker next to kbench, or KBENCH_WORKER when set.
std::filesystem::path worker_executable();
// The cache root: KBENCH_CACHE_DIR, else $XDG_CACHE_HOME/kbench, else ~/.cache/kbench.
std::filesystem::path cache_directory();
// Where a candidate's extensions are built: keyed by its source and everything that changes the
// build (`build_settings`), so two candidates that both call their extension `my_ext` never
// share a directory and the same source never builds twice. `cache_dir` empty: cache_directory().
std::filesystem::path extension_build_directory(const std::filesystem::path& cache_dir,
                                                const std::string& source,
                                                const std::string& build_settings);
// A fresh private scratch directory for one evaluation under $TMPDIR (mode 0700).
std::filesystem::path make_scratch_directory(const char* prefix);

} // namespace kbench::sched
