#pragma once
// Warm workers (DESIGN §3, docs/architecture.md "Processes"): a fork server is a kbench-worker
// that imported torch and kbench's worker modules once, never touched CUDA, and forks one child
// per job. kbench asks it over a socketpair (SCM_RIGHTS carries the job's pipe ends and its
// Landlock ruleset); the child applies every layer a spawned worker gets, from the same code
// (setup_child in child_setup.cpp), then runs the protocol loop. kbench is the subreaper of its
// workers and the server double-forks, so the child is kbench's own child: it is waited for,
// killed and reported exactly like a spawned one (Process).
#include "sandbox/process.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kbench::sandbox {

inline constexpr const char* kForkServerVariable = "KBENCH_FORK_SERVER";
inline constexpr const char* kForkServerFlag = "--fork-server";

// KBENCH_FORK_SERVER: unset or "on" forks workers, "off" spawns every one. Anything else
// throws, naming the variable and the choices.
bool fork_server_wanted();

// Variables of a launch environment that a fork server's child may take over after the
// interpreter started (Python and torch read them when they are used, not at start): every
// other variable is part of the server's key, so a job whose PYTHONPATH, locale or library path
// differs gets a server of its own.
const std::vector<std::string>& per_job_variables();

struct ForkAttempt {
  std::optional<Process> process; // the forked worker; empty: spawn it instead
  std::string warning; // why the server could not be used, for the result (once per server)
};

// `spec` as a child of the fork server for its key (started on first use): a Process, or an
// empty one with the warning when the server cannot start or died. Throws SpawnError as
// Process::spawn does when the child's setup fails.
ForkAttempt start_forked(const SpawnSpec& spec);

// The fork server's side (kbench-worker --fork-server, src/worker/fork_server_mode.cpp).
struct ForkHooks {
  std::function<void()> before_fork;       // in the server, around its fork (the interpreter's
  std::function<void()> after_fork_parent; // own fork handling)
  std::function<void()> after_fork_child;  // in the child, once every layer is in place
  // In the child: take over the launch environment (C environ and the interpreter's); empty,
  // or what went wrong.
  std::function<std::string(const std::vector<std::string>& environment)> take_environment;
  std::function<int()> run_job; // the protocol loop; the child's exit code
};
// Serves jobs on `control_fd` until kbench closes it. Returns the server's exit code.
int serve_fork_requests(int control_fd, const ForkHooks& hooks);

} // namespace kbench::sandbox
