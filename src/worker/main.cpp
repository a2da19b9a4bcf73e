// kbench-worker: embeds the CPython of the chosen environment and runs evaluation phases for
// the orchestrator (docs/architecture.md, "Processes"). It is started by kbench, never by people,
// with:
//   kbench-worker [--python PATH] [--package-dir DIR]
// Requests arrive on stdin; answers leave on fd 3 so that whatever the problem or the candidate
// prints on stdout cannot be mistaken for an answer by accident.
#include "sandbox/fork_server.hpp"
#include "sandbox/landlock.hpp"
#include "sandbox/process.hpp"
#include "worker/fork_server_mode.hpp"
#include "worker/interpreter.hpp"
#include "worker/protocol_loop.hpp"

#include <Python.h>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path default_package_dir() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error).parent_path();
  for (const fs::path& candidate :
       {self / ".." / "share" / "kbench" / "python", fs::path(KBENCH_SOURCE_DIR) / "python"}) {
    if (fs::exists(candidate / "kbench" / "worker" / "handlers.py")) {
      return fs::weakly_canonical(candidate);
    }
  }
  return fs::path(KBENCH_SOURCE_DIR) / "python";
}

struct Arguments {
  fs::path python;
  fs::path package_dir;
  bool fork_server = false; // started by kbench as its fork server (sandbox/fork_server.hpp)
};

Arguments parse(int argc, char** argv) {
  Arguments args;
  if (const char* env = std::getenv("KBENCH_PYTHON"); env && *env) {
    args.python = env;
  } else {
    args.python = KBENCH_DEFAULT_PYTHON;
  }
  args.package_dir = default_package_dir();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == kbench::sandbox::kForkServerFlag) {
      args.fork_server = true;
    } else if ((arg == "--python" || arg == "--package-dir") && i + 1 < argc) {
      (arg == "--python" ? args.python : args.package_dir) = argv[++i];
    } else {
      std::cerr << "kbench-worker: unknown argument " << arg
                << " (usage: kbench-worker [--python PATH] [--package-dir DIR])\n";
      std::exit(64);
    }
  }
  return args;
}

// Under a wrapper (Nsight Compute) kbench's Landlock layer lets all of /proc be written: this
// worker narrows writes to its directories and its own /proc/<pid> before any Python runs.
std::string confine_writes(const char* writable_json) {
  try {
    const auto paths = nlohmann::json::parse(writable_json).get<std::vector<std::string>>();
    return kbench::sandbox::confine_writes({paths.begin(), paths.end()});
  } catch (const nlohmann::json::exception& error) {
    return std::string(kbench::sandbox::kWorkerWritableVariable) +
           " is not a JSON array of paths: " + error.what();
  }
}

} // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  if (fcntl(kbench::sandbox::kResponseFd, F_GETFD) < 0) {
    std::cerr << "kbench-worker: no response channel on fd 3; this program is started by kbench\n";
    return 64;
  }
  // Tools the environment installs next to its interpreter (ninja for torch's extension
  // builder) must be found by the processes the phases start.
  setenv("PATH", kbench::worker::worker_path(args.python, std::getenv("PATH")).c_str(), 1);
  if (const char* writable = std::getenv(kbench::sandbox::kWorkerWritableVariable)) {
    if (const auto error = confine_writes(writable); !error.empty()) {
      std::cerr << "kbench-worker: cannot confine its own writes under the wrapper: " << error
                << "\n";
      return 66;
    }
  }
  try {
    kbench::worker::start_interpreter({args.python, args.package_dir});
  } catch (const std::exception& error) {
    std::cerr << "kbench-worker: " << error.what() << "\n";
    return 65;
  }
  int code = 0;
  {
    pybind11::gil_scoped_acquire gil;
    code = args.fork_server ? kbench::worker::run_fork_server(args.python)
                            : kbench::worker::run_worker();
  }
  std::fflush(nullptr);
  // No interpreter finalisation: torch and CUDA teardown can hang or crash on exit, and
  // nothing is left to save.
  std::_Exit(code);
}
