#pragma once
// Where kbench finds its worker, its Python package and its caches.
#include <filesystem>

namespace kbench::sched {

// The directory of the running executable (from /proc/self/exe).
std::filesystem::path executable_directory();
// kbench-worker next to kbench, or KBENCH_WORKER when set.
std::filesystem::path worker_executable();
// The cache root: KBENCH_CACHE_DIR, else $XDG_CACHE_HOME/kbench, else ~/.cache/kbench.
std::filesystem::path cache_directory();
// A fresh private scratch directory for one evaluation under $TMPDIR (mode 0700).
std::filesystem::path make_scratch_directory(const char* prefix);

} // namespace kbench::sched
