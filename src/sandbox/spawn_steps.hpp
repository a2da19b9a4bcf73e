#pragma once
// The contract between the parent and the child of a sandboxed spawn (private to src/sandbox/).
// The parent prepares everything that allocates or reads files (`Prepared`, in
// spawn_prepare.cpp, seccomp_filter.cpp and landlock.cpp) because the child, between fork and
// exec, may make async-signal-safe calls only (child_setup.cpp). The child reports each step
// as a fixed-size `ChildRecord` on the exec-error pipe, and the parent turns the steps into
// Protections (protections.cpp). Keeping the three sides' shared types here keeps them in step.
#include "sandbox/process.hpp"
#include "sandbox/unique_fd.hpp"

#include <array>
#include <cstdint>
#include <linux/filter.h>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace kbench::sandbox {

// Fds the parent makes for the spawn (pipes, the ruleset) are moved above this number so that
// none of them can be one of the child's 0..3 slots while the child rearranges them.
inline constexpr int kHighFd = 16;

// What the child reports on the exec-error pipe, one fixed-size record per step (a pipe write
// of under PIPE_BUF bytes is atomic; a handful of records never fill the pipe).
enum RecordKind : int { kStepRecord = 1, kFatalRecord = 2 };
enum Step : int {
  kStepNetUnshare,  // unshare(CLONE_NEWNET)
  kStepNetUserns,   // unshare(CLONE_NEWUSER | CLONE_NEWNET) and the id maps
  kStepNetLoopback, // lo up in the new namespace
  kStepNoNewPrivs,  // PR_SET_NO_NEW_PRIVS
  kStepLandlock,    // landlock_restrict_self
  kStepSeccomp,     // the filter (with the socket rule when the namespace failed)
  kStepCore,
  kStepNofile,
  kStepFsize,
  kStepCpu,
  kStepNproc,
  kStepUser, // setgroups, setresgid, setresuid to SandboxPolicy::user, verified
  kStepCount
};
// The stages a fatal record names (process.cpp turns them into the spawn's error).
enum FatalStage : int {
  kFatalPipes = 1,
  kFatalWorkingDirectory = 2,
  kFatalExec = 3,
  kFatalUsernsMap = 4,
  kFatalLandlockFd = 5,
  kFatalUser = 6,   // could not become SandboxPolicy::user (`index`: which call, FatalUserCall)
  kFatalReach = 7,  // as that user, Prepared::reach[index] is not reachable
  kFatalForked = 8, // a forked worker could not take over its launch environment or parent
};
enum FatalUserCall : int {
  kCallSetgroups,
  kCallSetgid,
  kCallSetuid,
  kCallVerify,
  kCallRegain,
  kCallDeathSignal
};
struct ChildRecord {
  int kind;
  int step; // Step, or the FatalStage
  int error;
  int index; // for some fatal stages: which call or entry
};

// A step's entry when the child never reported it; otherwise 0 or the errno it failed with.
constexpr int kNotTried = -1;
using StepErrors = std::array<int, kStepCount>;

// Everything the child needs, made in the parent. Move-only: it owns the Landlock ruleset.
struct Prepared {
  Prepared() = default;
  Prepared(Prepared&&) = default;
  Prepared& operator=(Prepared&&) = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  ~Prepared() = default;

  // network
  bool isolate_network = false;
  bool try_plain_netns = false;
  bool try_userns = false;
  std::string uid_map, gid_map; // "uid uid 1\n"
  // seccomp: the program with and without the socket rule (fallback for the network)
  std::vector<sock_filter> filter_plain, filter_with_socket;
  bool filter_syscalls = false;
  // landlock
  UniqueFd landlock_fd; // the ruleset, above kHighFd; none when Landlock is unavailable
  int landlock_abi = 0;
  std::uint64_t landlock_self_rights = 0; // for the child's own /proc/<pid> (added in the child)
  std::string landlock_detail;            // how, when ready
  std::string landlock_unavailable;       // why not, when not
  bool restrict_filesystem = false;
  // limits
  std::optional<rlim_t> nproc;
  std::string nproc_detail;
  bool nproc_exempt = false; // root with CAP_SYS_RESOURCE / CAP_SYS_ADMIN
  // the user (SandboxPolicy::user): the child switches to uid:gid with no supplementary groups
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  // what the child checks with access(2) once it is that user, in this order: for each path
  // the directories above it (search), then the path itself with its mode
  struct ReachStep {
    std::string path;  // checked
    int mode = 0;      // access(2) mode
    std::string of;    // the path that needs it
    std::string what;  // what that path is ("the Python interpreter")
    bool above = true; // a directory above `of` (search), or `of` itself
  };
  std::vector<ReachStep> reach;
};

// The parent's side (spawn_prepare.cpp): what `spec` asks for, made ready for the child.
Prepared prepare(const SpawnSpec& spec);
// The Landlock ruleset for `policy` (landlock.cpp): sets `out.landlock_fd` and the detail, or
// `out.landlock_unavailable`.
void prepare_landlock(const SandboxPolicy& policy, Prepared& out);

// The child's side (child_setup.cpp), between fork and exec. `setup_child` applies every step
// (process group, pipes, fd hygiene, working directory, limits, user, network, Landlock,
// seccomp) and returns the report fd, still open; `exec_child` is it and execve. A worker forked
// by the fork server (fork_server_loop.cpp) runs the same `setup_child`, then its protocol loop.
int setup_child(const SpawnSpec& spec, const Prepared& prepared,
                const std::array<int, 4>& child_ends, int error_fd) noexcept;
void report_fatal(int report_fd, FatalStage stage, int error) noexcept;
// The child's side (child_setup.cpp), between fork and exec. `child_ends` are the pipe ends
// that become the child's fds 0, 1, 2 and kResponseFd; `error_fd` is the exec-error pipe.
[[noreturn]] void exec_child(const SpawnSpec& spec, const Prepared& prepared, char* const* argv,
                             char* const* envp, const std::array<int, 4>& child_ends,
                             int error_fd) noexcept;

} // namespace kbench::sandbox
