#include "sched/paths.hpp"

#include "core/sha256.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace kbench::sched {

namespace fs = std::filesystem;

fs::path executable_directory() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : self.parent_path();
}

fs::path worker_executable() {
  if (const char* configured = std::getenv("KBENCH_WORKER"); configured && *configured) {
    return configured;
  }
  return executable_directory() / "kbench-worker";
}

fs::path cache_directory() {
  if (const char* configured = std::getenv("KBENCH_CACHE_DIR"); configured && *configured) {
    return configured;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return fs::path(xdg) / "kbench";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache" / "kbench";
  }
  return fs::temp_directory_path() / "kbench-cache";
}

fs::path make_scratch_directory(const char* prefix) {
  std::string pattern = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) {
    throw std::runtime_error("cannot create a scratch directory under " +
                             fs::temp_directory_path().string());
  }
  return pattern;
}

std::filesystem::path extension_build_directory(const std::filesystem::path& cache_dir,
                                                const std::string& source,
                                                const std::string& build_settings) {
  Sha256 key;
  key.update(source);
  key.update(build_settings);
  return (cache_dir.empty() ? cache_directory() : cache_dir) / "extensions" /
         key.hex_digest().substr(0, 32);
}

} // namespace kbench::sched
