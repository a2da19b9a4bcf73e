#include "sandbox/environment.hpp"

#include <cstdlib>
#include <string_view>
#include <unistd.h>

namespace kbench::sandbox {

const std::vector<std::string>& inherited_variables() {
  static const std::vector<std::string> names = {
      "PATH",
      "HOME",
      "USER",
      "LOGNAME",
      "LANG",
      "LC_ALL",
      "LC_CTYPE",
      "TERM",
      "CUDA_HOME",
      "CUDA_PATH",
      "LD_LIBRARY_PATH",
      "CUDA_VISIBLE_DEVICES",
      "NVIDIA_VISIBLE_DEVICES",
      "CC",
      "CXX",
      "MAX_JOBS",
      "KBENCH_CUDA_HEADER", // python/kbench/light_nvcc.py: `off` builds CUDA units as written
      "KBENCH_CUDA_SPLIT",  // python/kbench/split_build.py: `off` builds each CUDA unit as one
  };
  return names;
}

EnvironmentMap worker_environment(const EnvironmentMap& overrides) {
  EnvironmentMap environment;
  for (const auto& name : inherited_variables()) {
    if (const char* value = std::getenv(name.c_str())) {
      environment[name] = value;
    }
  }
  // PopcornBench's popcorn2 shape knobs (POPCORN2_JITTER_MIN, ...) configure problems, not kbench.
  for (char** entry = environ; *entry; ++entry) {
    const std::string_view text(*entry);
    if (text.starts_with("POPCORN2_")) {
      const auto eq = text.find('=');
      environment[std::string(text.substr(0, eq))] = std::string(text.substr(eq + 1));
    }
  }
  if (!environment.contains("PATH")) {
    environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  }
  // Python's own hygiene: no user site-packages, unbuffered output (so the last lines before a
  // crash reach us), no .pyc files in problem and candidate folders, a fixed hash seed.
  environment["PYTHONNOUSERSITE"] = "1";
  environment["PYTHONUNBUFFERED"] = "1";
  environment["PYTHONDONTWRITEBYTECODE"] = "1";
  environment["PYTHONHASHSEED"] = "0";
  for (const auto& [name, value] : overrides) {
    environment[name] = value;
  }
  // NVLink multicast can take a shared host's GPUs out of service: off in every process.
  environment["NCCL_NVLS_ENABLE"] = "0";
  environment["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1";
  environment["NVSHMEM_DISABLE_NVLS"] = "1";
  return environment;
}

std::vector<std::string> to_envp(const EnvironmentMap& environment) {
  std::vector<std::string> envp;
  envp.reserve(environment.size());
  for (const auto& [name, value] : environment) {
    envp.push_back(name + "=" + value);
  }
  return envp;
}

} // namespace kbench::sandbox
