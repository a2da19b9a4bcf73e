// Async-signal-safe calls only: everything in this file runs in the child between fork and
// exec, where the parent's other threads may have held the allocator's or any library's lock
// at the fork. So no allocation, no stdio, no exceptions, no UniqueFd (its destructor must not
// run here: the child leaves through execve or _exit only); fds are ints, errors are errno
// ints, and each step is reported to the parent as a ChildRecord (spawn_steps.hpp). What needs
// more was prepared by the parent (spawn_prepare.cpp).
#include "sandbox/landlock.hpp"
#include "sandbox/spawn_steps.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kbench::sandbox {
namespace {

int set_limit(int resource, rlim_t value) {
  const rlimit limit{value, value};
  return setrlimit(resource, &limit) == 0 ? 0 : errno;
}

void report(int fd, int kind, int step, int error, int index = 0) {
  const ChildRecord record{kind, step, error, index};
  [[maybe_unused]] auto written = write(fd, &record, sizeof record);
}

bool write_file(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

int loopback_up() {
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    return errno;
  }
  ifreq request{};
  std::memcpy(request.ifr_name, "lo", 3);
  int error = 0;
  if (ioctl(s, SIOCGIFFLAGS, &request) != 0) {
    error = errno;
  } else {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    if (ioctl(s, SIOCSIFFLAGS, &request) != 0) {
      error = errno;
    }
  }
  close(s);
  return error;
}

// A plain network namespace (privileged: made before the switch to the worker's user, whose
// loopback could not be brought up without CAP_NET_ADMIN afterwards). True when it was made.
bool plain_network_namespace(const Prepared& prepared, int report_fd) {
  if (!prepared.try_plain_netns) {
    return false;
  }
  const int error = unshare(CLONE_NEWNET) == 0 ? 0 : errno;
  report(report_fd, kStepRecord, kStepNetUnshare, error);
  if (error != 0) {
    return false;
  }
  report(report_fd, kStepRecord, kStepNetLoopback, loopback_up());
  return true;
}

// Unprivileged: a user namespace that maps the uid and gid onto themselves, with a network
// namespace of its own. True when it was made.
bool user_network_namespace(const Prepared& prepared, int report_fd) {
  if (!prepared.try_userns) {
    return false;
  }
  if (prepared.switch_user) {
    // The switch made the process undumpable, which leaves its /proc/self files root's: the id
    // maps below could not be written. exec makes it dumpable again anyway.
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }
  const int error = unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno;
  if (error == 0) {
    if (!write_file("/proc/self/setgroups", "deny\n") ||
        !write_file("/proc/self/uid_map", prepared.uid_map) ||
        !write_file("/proc/self/gid_map", prepared.gid_map)) {
      // In a user namespace without a mapping the worker would be nobody: give up.
      const int saved = errno;
      report(report_fd, kFatalRecord, kFatalUsernsMap, saved);
      _exit(127);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL); // credentials changed
  }
  report(report_fd, kStepRecord, kStepNetUserns, error);
  if (error != 0) {
    return false;
  }
  report(report_fd, kStepRecord, kStepNetLoopback, loopback_up());
  return true;
}

[[noreturn]] void fail_user(int report_fd, FatalUserCall call, int error) {
  report(report_fd, kFatalRecord, kFatalUser, error, call);
  _exit(127);
}

// No supplementary groups, then the gid, then the uid (in that order: once the uid is not
// root, the groups can no longer be changed). Raw system calls: glibc's wrappers signal every
// thread of the process, which between fork and exec means taking locks the fork may have left
// held. Verified afterwards, and that root cannot be regained.
void switch_user(const Prepared& prepared, int report_fd) {
  if (syscall(SYS_setgroups, 0, nullptr) != 0) {
    fail_user(report_fd, kCallSetgroups, errno);
  }
  if (syscall(SYS_setresgid, prepared.gid, prepared.gid, prepared.gid) != 0) {
    fail_user(report_fd, kCallSetgid, errno);
  }
  if (syscall(SYS_setresuid, prepared.uid, prepared.uid, prepared.uid) != 0) {
    fail_user(report_fd, kCallSetuid, errno);
  }
  uid_t ruid = 0, euid = 0, suid = 0;
  gid_t rgid = 0, egid = 0, sgid = 0;
  if (syscall(SYS_getresuid, &ruid, &euid, &suid) != 0 ||
      syscall(SYS_getresgid, &rgid, &egid, &sgid) != 0 || ruid != prepared.uid ||
      euid != prepared.uid || suid != prepared.uid || rgid != prepared.gid ||
      egid != prepared.gid || sgid != prepared.gid || ruid == 0 || rgid == 0 ||
      syscall(SYS_getgroups, 0, nullptr) != 0) {
    fail_user(report_fd, kCallVerify, EPERM);
  }
  if (syscall(SYS_setresuid, 0, 0, 0) == 0) {
    fail_user(report_fd, kCallRegain, EPERM);
  }
  // A change of credentials clears the parent-death signal: set it again, and catch a parent
  // that died in between.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    fail_user(report_fd, kCallDeathSignal, errno);
  }
  if (getppid() == 1) {
    _exit(127);
  }
  report(report_fd, kStepRecord, kStepUser, 0);
}

// As the worker's user: each path it needs, with the first one it cannot reach reported.
void check_reach(const Prepared& prepared, int report_fd) {
  for (std::size_t i = 0; i < prepared.reach.size(); ++i) {
    const auto& step = prepared.reach[i];
    if (access(step.path.c_str(), step.mode) != 0) {
      report(report_fd, kFatalRecord, kFatalReach, errno, static_cast<int>(i));
      _exit(127);
    }
  }
}

void apply_sandbox(const SpawnSpec& spec, const Prepared& prepared, int report_fd,
                   int landlock_fd) {
  const auto& limits = spec.limits;
  if (!limits.core_dumps) {
    report(report_fd, kStepRecord, kStepCore, set_limit(RLIMIT_CORE, 0));
  }
  if (limits.open_files) {
    report(report_fd, kStepRecord, kStepNofile, set_limit(RLIMIT_NOFILE, *limits.open_files));
  }
  if (limits.file_size_bytes) {
    report(report_fd, kStepRecord, kStepFsize, set_limit(RLIMIT_FSIZE, *limits.file_size_bytes));
  }
  if (limits.cpu_seconds) {
    report(report_fd, kStepRecord, kStepCpu, set_limit(RLIMIT_CPU, *limits.cpu_seconds));
  }
  if (prepared.nproc) {
    report(report_fd, kStepRecord, kStepNproc, set_limit(RLIMIT_NPROC, *prepared.nproc));
  }
  bool namespaced = prepared.isolate_network && plain_network_namespace(prepared, report_fd);
  if (prepared.switch_user) {
    switch_user(prepared, report_fd);
    check_reach(prepared, report_fd);
  }
  namespaced =
      namespaced || (prepared.isolate_network && user_network_namespace(prepared, report_fd));
  const bool need_filter = prepared.filter_syscalls || (prepared.isolate_network && !namespaced);
  const bool need_landlock = landlock_fd >= 0;
  if (!need_filter && !need_landlock) {
    return;
  }
  const int nnp = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
  report(report_fd, kStepRecord, kStepNoNewPrivs, nnp);
  if (need_landlock) {
    // CUDA's driver writes beneath the process's own /proc/<pid>: without that, cuInit fails
    // with error 304 ("OS call failed"), measured on the H200 machine with
    // scripts/landlock-cuda-probe.py. Only the child knows its pid, so the rule is added here,
    // to the ruleset the parent prepared; open() follows the /proc/self link to /proc/<pid>.
    add_own_proc_rule(landlock_fd, prepared.landlock_self_rights);
    const int error =
        nnp != 0 ? nnp : (syscall(SYS_landlock_restrict_self, landlock_fd, 0) == 0 ? 0 : errno);
    close(landlock_fd);
    report(report_fd, kStepRecord, kStepLandlock, error);
  }
  if (need_filter) {
    // The socket rule only stands in for a namespace that could not be made.
    const bool socket_rule = prepared.isolate_network && !namespaced;
    const auto& filter = socket_rule ? prepared.filter_with_socket : prepared.filter_plain;
    sock_fprog program{static_cast<unsigned short>(filter.size()),
                       const_cast<sock_filter*>(filter.data())};
    const int error =
        nnp != 0 ? nnp
                 : (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0 ? 0 : errno);
    report(report_fd, kStepRecord, kStepSeccomp, error);
  }
}

} // namespace

// Runs in the child between fork and exec (or, for a forked worker, between fork and its
// protocol loop): only async-signal-safe calls. Returns the report fd, still open.
int setup_child(const SpawnSpec& spec, const Prepared& prepared,
                const std::array<int, 4>& child_ends, int error_fd) noexcept {
  auto fail = [&](FatalStage stage) {
    report(error_fd, kFatalRecord, stage, errno);
    _exit(127);
  };
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL); // the worker never outlives kbench
  if (getppid() == 1) {
    _exit(127); // the parent died before prctl took effect
  }
  if (dup2(child_ends[0], 0) < 0 || dup2(child_ends[1], 1) < 0 || dup2(child_ends[2], 2) < 0 ||
      dup2(child_ends[3], kResponseFd) < 0) {
    fail(kFatalPipes);
  }
  // The exec-error report moves just above the response fd (closed by a successful exec);
  // the Landlock ruleset just above it (closed once applied); everything above them goes,
  // whatever the orchestrator (or the fork server: its control socket) had open.
  const int report_fd = kResponseFd + 1;
  if (dup2(error_fd, report_fd) < 0 || fcntl(report_fd, F_SETFD, FD_CLOEXEC) < 0) {
    _exit(127);
  }
  error_fd = report_fd;
  int landlock_fd = -1;
  if (prepared.landlock_fd.valid()) {
    landlock_fd = report_fd + 1;
    if (dup2(prepared.landlock_fd.get(), landlock_fd) < 0) {
      fail(kFatalLandlockFd);
    }
  }
  syscall(SYS_close_range, (landlock_fd >= 0 ? landlock_fd : report_fd) + 1, ~0U, 0);
  signal(SIGPIPE, SIG_DFL);
  if (!spec.working_directory.empty() && chdir(spec.working_directory.c_str()) != 0) {
    fail(kFatalWorkingDirectory);
  }
  apply_sandbox(spec, prepared, error_fd, landlock_fd);
  return report_fd;
}

[[noreturn]] void exec_child(const SpawnSpec& spec, const Prepared& prepared, char* const* argv,
                             char* const* envp, const std::array<int, 4>& child_ends,
                             int error_fd) noexcept {
  const int report_fd = setup_child(spec, prepared, child_ends, error_fd);
  execve(argv[0], argv, envp);
  report(report_fd, kFatalRecord, kFatalExec, errno);
  _exit(127);
}

void report_fatal(int report_fd, FatalStage stage, int error) noexcept {
  report(report_fd, kFatalRecord, stage, error);
}

} // namespace kbench::sandbox
