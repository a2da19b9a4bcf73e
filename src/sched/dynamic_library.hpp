#pragma once
// Opening a shared library at run time and looking up its entry points. kbench links no GPU
// library (libcuda, libcupti, libnvidia-ml), so that it builds and runs on machines without a
// GPU; the loaders of those three (sched/device_probe.cpp, measure/cupti_library.cpp,
// measure/nvml_clocks.cpp) share this. A library that loads stays loaded for the life of the
// process: nothing here calls dlclose, since the handles back function pointers kept in statics.
#include <fmt/format.h>

#include <dlfcn.h>
#include <string>
#include <vector>

namespace kbench::sched {

// Looks `name` up in `library` into `out`, which holds the entry point's type (often
// decltype(&entry_point), so a signature change in a header is a compile error here rather than
// a crash). false, and `out` null, when the library lacks it.
template <typename F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

struct OpenedLibrary {
  void* handle = nullptr;            // null when no candidate loaded
  std::string candidate;             // the one that loaded, as given
  std::vector<std::string> failures; // "candidate (dlerror)" for each tried before, in order
};

// Tries each candidate in turn (sonames, paths) and keeps the first that loads, with RTLD_NOW so
// that a missing dependency shows up here and RTLD_LOCAL so that its symbols stay its own.
inline OpenedLibrary open_first_library(const std::vector<std::string>& candidates) {
  OpenedLibrary library;
  for (const std::string& candidate : candidates) {
    library.handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library.handle) {
      library.candidate = candidate;
      break;
    }
    const char* error = dlerror();
    library.failures.push_back(fmt::format("{} ({})", candidate, error ? error : "not found"));
  }
  return library;
}

} // namespace kbench::sched
