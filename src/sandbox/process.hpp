#pragma once
// Spawning a worker: its own process group, a clean environment, resource limits, no core
// dumps, pipes for stdin/stdout/stderr and a private response channel on fd 3, and a kill of
// the whole group when its time is up (docs/architecture.md, "Processes"). With a SandboxPolicy,
// also no network, a syscall deny-list and a filesystem allow-list, applied in the child between
// fork and exec; which of them took effect is reported back by the child (`Process::protections`).
#include "sandbox/unique_fd.hpp"
#include "sandbox/worker_user.hpp"

#include <array>
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <sys/types.h>
#include <vector>

namespace kbench::sandbox {

struct Limits {
  std::optional<rlim_t> open_files = 4096;
  std::optional<rlim_t> file_size_bytes;
  std::optional<rlim_t> cpu_seconds;
  // RLIMIT_NPROC counts every task (thread) of the user, not of the worker: the limit is the
  // current task count of the user the worker runs as (SandboxPolicy::user, else kbench's) plus
  // this margin. Not enforced by the kernel for root or a process that holds CAP_SYS_RESOURCE
  // or CAP_SYS_ADMIN (reported as such).
  std::optional<rlim_t> processes_above_current;
  bool core_dumps = false;
};

// What the child is confined to. Everything is off by default (a plain spawn); the worker
// launch turns it on (src/pipeline/worker_phase.cpp). See docs/architecture.md, "Sandbox".
struct SandboxPolicy {
  // Own network namespace with only a loopback (unshare CLONE_NEWNET, or CLONE_NEWUSER |
  // CLONE_NEWNET when unprivileged); where neither is allowed, a seccomp filter that denies
  // socket(AF_INET / AF_INET6 / AF_PACKET). AF_UNIX and AF_NETLINK stay allowed.
  bool isolate_network = false;
  // Ranks of a collective evaluation talk over 127.0.0.1 between separate workers: for them
  // network isolation is skipped (and reported off).
  bool allow_loopback_network = false;
  // seccomp deny-list (EPERM): ptrace, process_vm_readv/writev, personality changes, setns,
  // kexec, bpf, perf_event_open, userfaultfd, io_uring_setup.
  bool filter_syscalls = false;
  // Landlock: write only beneath `writable` (created when missing), read everything except
  // beneath `unreadable`. Off when the kernel lacks Landlock (reported).
  bool restrict_filesystem = false;
  std::vector<std::filesystem::path> writable;
  std::vector<std::filesystem::path> unreadable;
  // The program started is a wrapper (Nsight Compute) whose child is the worker: this layer
  // lets all of /proc be written and the worker narrows writes itself (sandbox/landlock.hpp).
  bool worker_confines_writes = false;
  // Set when a person turned protections off (KBENCH_SANDBOX=off or off:NAMES): those of the
  // three above that are false are then reported off with this reason, never silently absent.
  std::string disabled_reason;

  // The user the child becomes before exec (a root kbench, sandbox/worker_user.hpp): no
  // supplementary groups, then the gid, then the uid, each verified; a failure fails the spawn.
  // Reported as the "user" protection.
  std::optional<WorkerUser> user;
  // No `user` although kbench is root: why (the "user" protection, reported off).
  std::string stays_root;
  // With `user`: the directories kbench made for the worker, handed over to it before the
  // fork (sandbox/hand_over.hpp). Each of `handed_over` becomes the user's with every directory
  // of kbench's beneath it; each of `handed_over_beneath` (the scratch root) stays kbench's,
  // searchable only, and what lies beneath it is handed over.
  std::vector<std::filesystem::path> handed_over;
  std::vector<std::filesystem::path> handed_over_beneath;
  // With `user`: what the worker must reach, checked in the child as that user before exec,
  // so that a directory it cannot enter fails the spawn with the path and what to do, rather
  // than as an import error later. The program, the working directory and `handed_over` are
  // added by the spawn itself.
  struct Reach {
    std::filesystem::path path;
    int mode = 4;     // access(2) mode: R_OK 4, W_OK 2, X_OK 1
    std::string what; // "the Python interpreter"
  };
  std::vector<Reach> must_reach;
};

// One protection as it took effect in the child: "network", "syscall_filter", "filesystem",
// "core_dumps", "open_files", "file_size", "cpu_time", "processes", "user".
struct Protection {
  std::string name;
  bool active = false;
  std::string detail;  // how it is enforced, or why it is not
  std::string warning; // non-empty when it is off or degraded: a sentence for the result
};

struct SpawnSpec {
  std::vector<std::string> argv;        // argv[0] is the executable's path
  std::vector<std::string> environment; // "NAME=value", the whole environment
  std::filesystem::path working_directory;
  Limits limits;
  SandboxPolicy sandbox;
  // The directories the orchestrator makes transfer files in when the worker asks
  // (sandbox/transfer_files.hpp); not part of the child's setup, so not sent to a fork server.
  std::vector<std::filesystem::path> transfer_roots;
  // When >= 0: the child's stdin is this descriptor (the fork server's control socket) rather
  // than a pipe, and the Process has no request fd.
  int stdin_fd = -1;
};

struct ExitStatus {
  bool signaled = false;
  int code = 0;                 // exit code when !signaled
  int signal = 0;               // signal number when signaled
  std::string describe() const; // "exited with code 3", "killed by SIGSEGV (segmentation ...)"
};

class SpawnError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The fd on which the child writes protocol responses.
inline constexpr int kResponseFd = 3;

struct Prepared; // spawn_steps.hpp

class Process {
public:
  static Process spawn(const SpawnSpec& spec); // throws SpawnError with the reason
  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete; // owns a process group and its pipes
  Process& operator=(const Process&) = delete;
  ~Process(); // kills the group if it is still running

  pid_t pid() const { return m_pid; }
  int request_fd() const { return m_stdin.get(); } // write end of the child's stdin
  int response_fd() const { return m_response.get(); }
  int stdout_fd() const { return m_stdout.get(); }
  int stderr_fd() const { return m_stderr.get(); }
  void close_request_fd();
  void close_response_fd();
  void close_stdout_fd();
  void close_stderr_fd();

  // SIGKILL to every process of the group (the worker and whatever it started).
  void kill_group();
  std::optional<ExitStatus> try_wait();
  ExitStatus wait();
  bool reaped() const { return m_status.has_value(); }
  // Seconds from the spawn until the process was reaped, or until now while it runs.
  double lifetime_s() const;
  std::chrono::steady_clock::time_point spawned_at() const { return m_spawned_at; }
  // The protections requested by the spawn's limits and policy, as the child reported them.
  const std::vector<Protection>& protections() const { return m_protections; }
  // "spawned" (fork and exec by kbench) or "forked" (by the fork server, fork_server.hpp).
  const std::string& started() const { return m_started; }

  // A worker the fork server forked for `spec` with `prepared` (fork_server_client.cpp): by
  // now kbench's own child (kbench is its subreaper), in its own process group. `ends` are
  // kbench's ends of its stdin, stdout, stderr and response pipes; `errors` the read end of its
  // setup records, read here as for a spawn (throws SpawnError on a fatal one).
  static Process adopt_forked(pid_t pid, std::array<UniqueFd, 4> ends, UniqueFd errors,
                              const SpawnSpec& spec, const Prepared& prepared);
  // Set once kbench made itself the subreaper of its workers' descendants: a reap then also
  // collects the members of the worker's group that were reparented to kbench.
  static void note_subreaper();

private:
  Process() = default;
  // The child's setup records until exec (or the forked worker's setup) closes `errors`.
  void read_setup(const SpawnSpec& spec, const Prepared& prepared, UniqueFd errors);
  void reap_group_orphans();
  void release() noexcept;
  const ExitStatus& note_reaped(ExitStatus status); // the status and the moment of the reap

  pid_t m_pid = -1;
  UniqueFd m_stdin, m_response, m_stdout, m_stderr;
  std::optional<ExitStatus> m_status;
  std::vector<Protection> m_protections;
  std::string m_started = "spawned";
  std::chrono::steady_clock::time_point m_spawned_at, m_reaped_at;
};

} // namespace kbench::sandbox
