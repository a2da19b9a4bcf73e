#pragma once
// Runs one of kbench's own helper programs (never candidate code): a Python module of kbench's
// with the environment's interpreter, outside every sandbox, under a deadline, its output
// captured. Used for what must run before any worker: the precompiled header
// (pipeline/header_cache.cpp) and the environment's torch version (pipeline/environment.cpp).
#include <chrono>
#include <string>
#include <vector>

namespace kbench::sched {

struct HelperOutcome {
  bool started = false; // false: `output` says why it could not start
  bool timed_out = false;
  int exit_code = -1; // the exit status when it exited; -1 when killed by a signal
  std::string output; // stdout and stderr together, the first 64 KiB
};

// argv[0] is a path (no PATH lookup). The environment is `environment` ("NAME=value" each). The
// helper gets its own process group, stdin from /dev/null, and is killed with its children when
// the deadline passes.
HelperOutcome run_helper(const std::vector<std::string>& argv,
                         const std::vector<std::string>& environment,
                         std::chrono::milliseconds deadline);

} // namespace kbench::sched
