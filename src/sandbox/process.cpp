#include "sandbox/process.hpp"

#include "sandbox/landlock.hpp"
#include "sandbox/signals.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <sstream>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

namespace kbench::sandbox {
namespace {

// Pipe fds are moved above this number in the parent so that none of them can be one of the
// child's 0..3 slots while the child rearranges them.
constexpr int kHighFd = 16;

int dup_high(int fd) {
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  const int saved = errno;
  close(fd);
  if (high < 0) {
    throw SpawnError(std::string("cannot duplicate a pipe descriptor: ") + std::strerror(saved));
  }
  return high;
}

struct Pipe {
  int read = -1;
  int write = -1;
};

Pipe make_pipe() {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw SpawnError(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  return Pipe{dup_high(fds[0]), dup_high(fds[1])};
}

void close_fd(int& fd) {
  if (fd >= 0) {
    close(fd);
    fd = -1;
  }
}

// ---------------------------------------------------------------------------------------------
// Sandbox preparation (parent, before fork) and application (child, between fork and exec).

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
  kStepCount
};
struct ChildRecord {
  int kind;
  int step; // Step, or the fatal stage
  int error;
};

constexpr int kNotTried = -1;

struct Prepared {
  // network
  bool isolate_network = false;
  bool try_plain_netns = false;
  bool try_userns = false;
  std::string uid_map, gid_map; // "uid uid 1\n"
  // seccomp: the program with and without the socket rule (fallback for the network)
  std::vector<sock_filter> filter_plain, filter_with_socket;
  bool filter_syscalls = false;
  // landlock
  int landlock_fd = -1;
  int landlock_abi = 0;
  std::uint64_t landlock_self_rights = 0; // for the child's own /proc/<pid> (added in the child)
  std::string landlock_detail;            // how, when ready
  std::string landlock_unavailable;       // why not, when not
  bool restrict_filesystem = false;
  // limits
  std::optional<rlim_t> nproc;
  std::string nproc_detail;
  bool nproc_exempt = false; // root with CAP_SYS_RESOURCE / CAP_SYS_ADMIN

  ~Prepared() {
    if (landlock_fd >= 0) {
      close(landlock_fd);
    }
  }
};

std::string errno_name(int error) {
  switch (error) {
  case EPERM:
    return "EPERM";
  case EACCES:
    return "EACCES";
  case EINVAL:
    return "EINVAL";
  case ENOSYS:
    return "ENOSYS";
  case EOPNOTSUPP:
    return "EOPNOTSUPP";
  case ENOSPC:
    return "ENOSPC";
  case EUSERS:
    return "EUSERS";
  case ENOMEM:
    return "ENOMEM";
  default:
    return std::string(std::strerror(error));
  }
}

// ---- seccomp ----

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif

constexpr std::uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

// Denied with EPERM, each for a reason:
const std::vector<int>& denied_syscalls() {
  static const std::vector<int> list = {
      SYS_ptrace,            // reading or steering another process (the orchestrator's other
      SYS_process_vm_readv,  // workers run as the same user)
      SYS_process_vm_writev, //
      SYS_setns,             // a root worker could re-enter the host's network namespace
      SYS_kexec_load,        // replacing the kernel (root in a container)
#ifdef SYS_kexec_file_load
      SYS_kexec_file_load,
#endif
      SYS_bpf,             // kernel attack surface, and tracing of other processes
      SYS_perf_event_open, // counters and samples of other processes (timing side channels)
      SYS_userfaultfd,     // a classic kernel-exploit primitive
      SYS_io_uring_setup,  // io_uring runs socket()/connect() where seccomp does not see them
  };
  return list;
}

sock_filter stmt(std::uint16_t code, std::uint32_t k) {
  return BPF_STMT(code, k);
}
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}

std::vector<sock_filter> build_filter(bool deny_list, bool deny_inet_sockets) {
  constexpr std::uint32_t arch_offset = offsetof(seccomp_data, arch);
  constexpr std::uint32_t nr_offset = offsetof(seccomp_data, nr);
  constexpr std::uint32_t arg0_offset = offsetof(seccomp_data, args); // low half (little endian)
  std::vector<sock_filter> f;
  f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arch_offset));
  f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
  f.push_back(stmt(BPF_RET | BPF_K, kDeny)); // another ABI (i386 through int 0x80)
  f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset));
#if defined(__x86_64__)
  f.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, 0, 1)); // the x32 ABI
  f.push_back(stmt(BPF_RET | BPF_K, kDeny));
#endif
  if (deny_list) {
    for (const int nr : denied_syscalls()) {
      f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
      f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    }
    // personality(): querying (0xffffffff) and PER_LINUX (0) stay allowed; switching to
    // another execution domain or turning address-space randomisation off is denied.
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 5));
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU, 2, 0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0));
    f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  if (deny_inet_sockets) {
    if (!deny_list) { // io_uring would create sockets behind the filter's back
      f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1));
      f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    }
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 6));
    f.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0));
    f.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_PACKET, 0, 1));
    f.push_back(stmt(BPF_RET | BPF_K, kDeny));
    f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  f.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return f;
}

// ---- Landlock ----

constexpr std::uint64_t kLandlockRead = landlock_read_rights();

bool is_beneath(const std::filesystem::path& path, const std::filesystem::path& base) {
  auto p = path.begin();
  for (auto b = base.begin(); b != base.end(); ++b, ++p) {
    if (p == path.end() || *p != *b) {
      return false;
    }
  }
  return true;
}

// "Read everything except beneath the denied paths": Landlock only grants, so `directory` gets
// read rights on each of its entries but the denied ones, recursing into the entries that
// contain a denied path. The directories on the way down (/, /tmp, the scratch root) are
// therefore not listable themselves, but everything in them but the denied path is readable.
// Entries created after the spawn in those directories are not readable.
int allow_read_except(int ruleset, const std::filesystem::path& directory,
                      const std::vector<std::filesystem::path>& denied) {
  std::error_code error;
  std::filesystem::directory_iterator entries(directory, error);
  if (error) {
    return error.value();
  }
  for (const auto& entry : entries) {
    const auto& path = entry.path();
    bool skip = false, contains = false;
    for (const auto& d : denied) {
      skip = skip || is_beneath(path, d);
      contains = contains || is_beneath(d, path);
    }
    if (skip) {
      continue;
    }
    if (contains && entry.is_directory(error) && !entry.is_symlink(error)) {
      if (const int e = allow_read_except(ruleset, path, denied); e != 0) {
        return e;
      }
      continue;
    }
    if (const int e = add_landlock_rule(ruleset, path, kLandlockRead);
        e != 0 && e != ENOENT && e != EACCES && e != ELOOP) {
      return e;
    }
  }
  return 0;
}

std::filesystem::path normalized(const std::filesystem::path& path) {
  std::error_code ignored;
  auto result = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ignored);
  if (result.empty()) {
    result = std::filesystem::absolute(path).lexically_normal();
  }
  // "a/b/" and "a/b" must compare equal component by component
  if (!result.empty() && result.filename().empty()) {
    result = result.parent_path();
  }
  return result;
}

void prepare_landlock(const SandboxPolicy& policy, Prepared& out) {
  const int abi = landlock_abi();
  if (abi <= 0) {
    out.landlock_unavailable = fmt::format("this kernel has no Landlock (landlock_create_ruleset: "
                                           "{})",
                                           errno_name(-abi));
    return;
  }
  out.landlock_abi = abi;
  std::vector<std::filesystem::path> writable, denied;
  for (const auto& w : policy.writable) {
    std::error_code ignored;
    std::filesystem::create_directories(w, ignored); // a rule needs an existing directory
    writable.push_back(normalized(w));
  }
  for (const auto& d : policy.unreadable) {
    denied.push_back(normalized(d));
  }
  for (const auto& w : writable) {
    for (const auto& d : denied) {
      if (is_beneath(d, w)) {
        out.landlock_unavailable = fmt::format(
            "the writable {} contains the unreadable {} (Landlock cannot take a right back)",
            w.string(), d.string());
        return;
      }
    }
  }
  const std::uint64_t write = landlock_write_rights(abi);
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = kLandlockRead | write;
  const long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0) {
    out.landlock_unavailable = "landlock_create_ruleset failed: " + errno_name(errno);
    return;
  }
  const int ruleset = static_cast<int>(fd);
  int error = denied.empty() ? add_landlock_rule(ruleset, "/", kLandlockRead)
                             : allow_read_except(ruleset, "/", denied);
  for (const auto& w : writable) {
    if (error == 0) {
      error = add_landlock_rule(ruleset, w, kLandlockRead | write);
    }
  }
  if (error == 0 && policy.worker_confines_writes) {
    // The worker is the wrapper's child: its /proc/<pid> is not known here (landlock.hpp).
    error = add_landlock_rule(ruleset, "/proc", kLandlockRead | write);
  }
  if (error != 0) {
    close(ruleset);
    out.landlock_unavailable = "adding the Landlock rules failed: " + errno_name(error);
    return;
  }
  out.landlock_fd = fcntl(ruleset, F_DUPFD_CLOEXEC, kHighFd);
  close(ruleset);
  if (out.landlock_fd < 0) {
    out.landlock_unavailable = "cannot keep the Landlock ruleset: " + errno_name(errno);
    return;
  }
  std::string writes, denies;
  for (const auto& w : writable) {
    writes += (writes.empty() ? "" : ", ") + w.string();
  }
  for (const auto& d : denied) {
    denies += (denies.empty() ? "" : ", ") + d.string();
  }
  out.landlock_self_rights = kLandlockRead | write;
  out.landlock_detail = fmt::format(
      "Landlock ABI {}: writes only beneath {} and the worker's own /proc/<pid>{}; reads "
      "everywhere{}{}",
      abi, writes.empty() ? "nothing" : writes,
      policy.worker_confines_writes ? " (a second layer the worker adds under its wrapper)" : "",
      denies.empty() ? "" : " except ", denies);
}

// ---- processes ----

// Tasks (threads count) of `uid` visible in /proc.
long tasks_of_user(uid_t uid) {
  long count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream status(entry.path() / "status");
    long threads = 0;
    bool mine = false;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) == 0) {
        std::istringstream fields(line.substr(4));
        long real = -1;
        fields >> real;
        mine = real == static_cast<long>(uid);
      } else if (line.rfind("Threads:", 0) == 0) {
        threads = std::atol(line.c_str() + 8);
      }
    }
    if (mine) {
      count += threads > 0 ? threads : 1;
    }
  }
  return count;
}

// Whether this process holds CAP_SYS_ADMIN or CAP_SYS_RESOURCE (RLIMIT_NPROC is not enforced).
bool nproc_exempt() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      const unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (caps & (1ULL << 21)) != 0 || (caps & (1ULL << 24)) != 0;
    }
  }
  return geteuid() == 0;
}

void prepare(const SpawnSpec& spec, Prepared& out) {
  const auto& policy = spec.sandbox;
  out.isolate_network = policy.isolate_network && !policy.allow_loopback_network;
  if (out.isolate_network) {
    // Privileged (root or CAP_SYS_ADMIN): a plain network namespace keeps the uid as it is;
    // otherwise a user namespace that maps the uid and gid onto themselves.
    out.try_plain_netns = true;
    out.try_userns = true;
    out.uid_map = fmt::format("{} {} 1\n", getuid(), getuid());
    out.gid_map = fmt::format("{} {} 1\n", getgid(), getgid());
  }
  out.filter_syscalls = policy.filter_syscalls;
  if (policy.filter_syscalls || out.isolate_network) {
    out.filter_plain = build_filter(policy.filter_syscalls, false);
    out.filter_with_socket = build_filter(policy.filter_syscalls, true);
  }
  out.restrict_filesystem = policy.restrict_filesystem;
  if (policy.restrict_filesystem) {
    prepare_landlock(policy, out);
  }
  if (spec.limits.processes_above_current) {
    const long now = tasks_of_user(getuid());
    out.nproc = static_cast<rlim_t>(now) + *spec.limits.processes_above_current;
    out.nproc_exempt = nproc_exempt();
    out.nproc_detail = fmt::format("RLIMIT_NPROC {} tasks of uid {} ({} now + {})", *out.nproc,
                                   getuid(), now, *spec.limits.processes_above_current);
  }
}

int set_limit(int resource, rlim_t value) {
  const rlimit limit{value, value};
  return setrlimit(resource, &limit) == 0 ? 0 : errno;
}

// ---- child side: async-signal-safe only ----

void report(int fd, int kind, int step, int error) {
  const ChildRecord record{kind, step, error};
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

// Returns true when the network is isolated by a namespace.
bool isolate_network(const Prepared& prepared, int report_fd) {
  int error = kNotTried;
  if (prepared.try_plain_netns) {
    error = unshare(CLONE_NEWNET) == 0 ? 0 : errno;
    report(report_fd, kStepRecord, kStepNetUnshare, error);
  }
  if (error != 0 && prepared.try_userns) {
    error = unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0 ? 0 : errno;
    if (error == 0) {
      if (!write_file("/proc/self/setgroups", "deny\n") ||
          !write_file("/proc/self/uid_map", prepared.uid_map) ||
          !write_file("/proc/self/gid_map", prepared.gid_map)) {
        // In a user namespace without a mapping the worker would be nobody: give up.
        const int saved = errno;
        report(report_fd, kFatalRecord, 4, saved);
        _exit(127);
      }
      prctl(PR_SET_PDEATHSIG, SIGKILL); // credentials changed
    }
    report(report_fd, kStepRecord, kStepNetUserns, error);
  }
  if (error != 0) {
    return false;
  }
  report(report_fd, kStepRecord, kStepNetLoopback, loopback_up());
  return true;
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
  const bool namespaced = prepared.isolate_network && isolate_network(prepared, report_fd);
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

// Runs in the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const SpawnSpec& spec, const Prepared& prepared, char* const* argv,
                             char* const* envp, const std::array<Pipe, 4>& pipes, int error_fd) {
  auto fail = [&](int stage) {
    report(error_fd, kFatalRecord, stage, errno);
    _exit(127);
  };
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL); // the worker never outlives kbench
  if (getppid() == 1) {
    _exit(127); // the parent died before prctl took effect
  }
  if (dup2(pipes[0].read, 0) < 0 || dup2(pipes[1].write, 1) < 0 || dup2(pipes[2].write, 2) < 0 ||
      dup2(pipes[3].write, kResponseFd) < 0) {
    fail(1);
  }
  // The exec-error report moves just above the response fd (closed by a successful exec);
  // the Landlock ruleset just above it (closed once applied); everything above them goes,
  // whatever the orchestrator had open.
  const int report_fd = kResponseFd + 1;
  if (dup2(error_fd, report_fd) < 0 || fcntl(report_fd, F_SETFD, FD_CLOEXEC) < 0) {
    _exit(127);
  }
  error_fd = report_fd;
  int landlock_fd = -1;
  if (prepared.landlock_fd >= 0) {
    landlock_fd = report_fd + 1;
    if (dup2(prepared.landlock_fd, landlock_fd) < 0) {
      fail(5);
    }
  }
  syscall(SYS_close_range, (landlock_fd >= 0 ? landlock_fd : report_fd) + 1, ~0U, 0);
  signal(SIGPIPE, SIG_DFL);
  if (!spec.working_directory.empty() && chdir(spec.working_directory.c_str()) != 0) {
    fail(2);
  }
  apply_sandbox(spec, prepared, error_fd, landlock_fd);
  execve(argv[0], argv, envp);
  fail(3);
  _exit(127); // fail() does not return; this tells the compiler
}

// The parent's reading of the child's records: one Protection per requested protection.
std::vector<Protection> protections_from(const SpawnSpec& spec, const Prepared& prepared,
                                         const std::array<int, kStepCount>& step) {
  std::vector<Protection> out;
  const auto& policy = spec.sandbox;
  if (!policy.disabled_reason.empty()) {
    const std::pair<const char*, bool> requested[] = {{"network", policy.isolate_network},
                                                      {"syscall_filter", policy.filter_syscalls},
                                                      {"filesystem", policy.restrict_filesystem}};
    for (const auto& [name, on] : requested) {
      if (!on) {
        out.push_back({name, false, "off: " + policy.disabled_reason,
                       std::string(name) + " protection off: " + policy.disabled_reason});
      }
    }
  }
  auto tried = [&](Step s) { return step[s] != kNotTried; };
  auto ok = [&](Step s) { return step[s] == 0; };
  const bool nnp_ok = ok(kStepNoNewPrivs);
  // network
  if (policy.allow_loopback_network) {
    out.push_back({"network", false, "off: ranks of a collective evaluation talk over loopback",
                   "network isolation off: ranks of a collective evaluation talk over loopback"});
  } else if (policy.isolate_network) {
    Protection p{"network", false, "", ""};
    std::string namespace_failure;
    if (tried(kStepNetUnshare) && !ok(kStepNetUnshare)) {
      namespace_failure = "unshare(CLONE_NEWNET) failed: " + errno_name(step[kStepNetUnshare]);
    }
    if (tried(kStepNetUserns) && !ok(kStepNetUserns)) {
      namespace_failure += (namespace_failure.empty() ? "" : ", ") +
                           std::string("unshare(CLONE_NEWUSER|CLONE_NEWNET) failed: ") +
                           errno_name(step[kStepNetUserns]);
    }
    if (ok(kStepNetUnshare) || ok(kStepNetUserns)) {
      p.active = true;
      p.detail = ok(kStepNetUnshare) ? "own network namespace (unshare CLONE_NEWNET)"
                                     : "own user and network namespace (unshare "
                                       "CLONE_NEWUSER|CLONE_NEWNET, uid and gid mapped)";
      if (ok(kStepNetLoopback)) {
        p.detail += ", loopback up";
      } else {
        p.detail += ", loopback down (" + errno_name(step[kStepNetLoopback]) + ")";
        p.warning = "network namespace's loopback could not be brought up: " +
                    errno_name(step[kStepNetLoopback]) + "; 127.0.0.1 does not work in workers";
      }
    } else if (ok(kStepSeccomp)) {
      p.active = true;
      p.detail = "seccomp denies socket(AF_INET/AF_INET6/AF_PACKET) (" + namespace_failure + ")";
      p.warning =
          "network isolation off: " + namespace_failure + "; seccomp socket filter used instead";
    } else {
      p.detail = "off: " + namespace_failure + "; the seccomp socket filter failed too (" +
                 errno_name(!nnp_ok ? step[kStepNoNewPrivs] : step[kStepSeccomp]) + ")";
      p.warning = "network isolation " + p.detail;
    }
    out.push_back(p);
  }
  if (policy.filter_syscalls) {
    Protection p{"syscall_filter", ok(kStepSeccomp), "", ""};
    if (p.active) {
      p.detail = "seccomp (EPERM): ptrace, process_vm_readv, process_vm_writev, personality "
                 "changes, setns, kexec, bpf, perf_event_open, userfaultfd, io_uring_setup";
    } else {
      p.detail = "off: seccomp failed: " +
                 errno_name(!nnp_ok ? step[kStepNoNewPrivs] : step[kStepSeccomp]);
      p.warning = "syscall filter " + p.detail;
    }
    out.push_back(p);
  }
  if (policy.restrict_filesystem) {
    Protection p{"filesystem", false, "", ""};
    if (prepared.landlock_fd < 0) {
      p.detail = "off: " + prepared.landlock_unavailable;
    } else if (!ok(kStepLandlock)) {
      p.detail = "off: landlock_restrict_self failed: " +
                 errno_name(!nnp_ok ? step[kStepNoNewPrivs] : step[kStepLandlock]);
    } else {
      p.active = true;
      p.detail = prepared.landlock_detail;
    }
    if (!p.active) {
      p.warning = "filesystem restriction " + p.detail + " (workers may write anywhere)";
    }
    out.push_back(p);
  }
  auto limit = [&](const char* name, Step s, const std::string& detail) {
    Protection p{name, ok(s), detail, ""};
    if (!p.active) {
      p.detail = "off: setrlimit failed: " + errno_name(step[s]) + " (" + detail + ")";
      p.warning = std::string(name) + " limit " + p.detail;
    }
    out.push_back(p);
  };
  const auto& limits = spec.limits;
  if (!limits.core_dumps) {
    limit("core_dumps", kStepCore, "RLIMIT_CORE 0");
  }
  if (limits.open_files) {
    limit("open_files", kStepNofile, fmt::format("RLIMIT_NOFILE {}", *limits.open_files));
  }
  if (limits.file_size_bytes) {
    limit("file_size", kStepFsize, fmt::format("RLIMIT_FSIZE {} bytes", *limits.file_size_bytes));
  }
  if (limits.cpu_seconds) {
    limit("cpu_time", kStepCpu, fmt::format("RLIMIT_CPU {} s", *limits.cpu_seconds));
  }
  if (prepared.nproc) {
    limit("processes", kStepNproc, prepared.nproc_detail);
    auto& p = out.back();
    // In a user namespace of its own the worker has no capability in the initial one.
    if (p.active && prepared.nproc_exempt && !ok(kStepNetUserns)) {
      p.active = false;
      p.detail = "off: " + prepared.nproc_detail +
                 " is set, but the kernel does not enforce it for a process with "
                 "CAP_SYS_RESOURCE or CAP_SYS_ADMIN (the worker runs as root)";
      p.warning = "process limit " + p.detail;
    }
  }
  return out;
}

} // namespace

std::string ExitStatus::describe() const {
  if (signaled) {
    return "was killed by " + signal_name(signal) + " (" + signal_description(signal) + ")";
  }
  return "exited with code " + std::to_string(code);
}

Process Process::spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) {
    throw SpawnError("no program to start");
  }
  std::vector<char*> argv;
  for (const auto& arg : spec.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& entry : spec.environment) {
    envp.push_back(const_cast<char*>(entry.c_str()));
  }
  envp.push_back(nullptr);

  Prepared prepared;
  prepare(spec, prepared);

  std::array<Pipe, 4> pipes{make_pipe(), make_pipe(), make_pipe(), make_pipe()};
  Pipe errors = make_pipe();

  const pid_t pid = fork();
  if (pid < 0) {
    const int saved = errno;
    for (auto& p : pipes) {
      close_fd(p.read);
      close_fd(p.write);
    }
    close_fd(errors.read);
    close_fd(errors.write);
    throw SpawnError(std::string("fork failed: ") + std::strerror(saved));
  }
  if (pid == 0) {
    exec_child(spec, prepared, argv.data(), envp.data(), pipes, errors.write);
  }
  // Also from the parent, so that a kill of the group right after spawn cannot miss the child.
  setpgid(pid, pid);

  Process process;
  process.m_pid = pid;
  process.m_spawned_at = std::chrono::steady_clock::now();
  process.m_stdin = std::exchange(pipes[0].write, -1);
  process.m_stdout = std::exchange(pipes[1].read, -1);
  process.m_stderr = std::exchange(pipes[2].read, -1);
  process.m_response = std::exchange(pipes[3].read, -1);
  for (auto& p : pipes) {
    close_fd(p.read);
    close_fd(p.write);
  }
  close_fd(errors.write);

  // The child's records until exec closes the pipe: each protection step, or a fatal one.
  std::array<int, kStepCount> steps{};
  steps.fill(kNotTried);
  std::optional<ChildRecord> fatal;
  for (;;) {
    ChildRecord record{};
    const ssize_t got = read(errors.read, &record, sizeof record);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got != static_cast<ssize_t>(sizeof record)) {
      break;
    }
    if (record.kind == kFatalRecord) {
      fatal = record;
    } else if (record.kind == kStepRecord && record.step >= 0 && record.step < kStepCount) {
      steps[static_cast<std::size_t>(record.step)] = record.error;
    }
  }
  close_fd(errors.read);
  if (fatal) {
    process.wait();
    static constexpr std::array<const char*, 6> stages = {
        "",     "set up its pipes",           "enter its working directory",
        "exec", "map its user namespace ids", "keep its Landlock ruleset"};
    throw SpawnError(std::string("cannot start ") + spec.argv[0] + ": could not " +
                     stages[static_cast<std::size_t>(fatal->step) % stages.size()] + ": " +
                     std::strerror(fatal->error));
  }
  process.m_protections = protections_from(spec, prepared, steps);
  return process;
}

Process::Process(Process&& other) noexcept {
  *this = std::move(other);
}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    release();
    m_pid = std::exchange(other.m_pid, -1);
    m_stdin = std::exchange(other.m_stdin, -1);
    m_response = std::exchange(other.m_response, -1);
    m_stdout = std::exchange(other.m_stdout, -1);
    m_stderr = std::exchange(other.m_stderr, -1);
    m_status = std::exchange(other.m_status, std::nullopt);
    m_protections = std::exchange(other.m_protections, {});
    m_spawned_at = other.m_spawned_at;
    m_reaped_at = other.m_reaped_at;
  }
  return *this;
}

Process::~Process() {
  release();
}

void Process::release() noexcept {
  if (m_pid > 0 && !m_status) {
    kill_group();
    try {
      wait();
    } catch (...) {
    }
  }
  close_fd(m_stdin);
  close_fd(m_response);
  close_fd(m_stdout);
  close_fd(m_stderr);
  m_pid = -1;
}

void Process::close_request_fd() {
  close_fd(m_stdin);
}
void Process::close_response_fd() {
  close_fd(m_response);
}
void Process::close_stdout_fd() {
  close_fd(m_stdout);
}
void Process::close_stderr_fd() {
  close_fd(m_stderr);
}

void Process::kill_group() {
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL); // in case the worker left its group
  }
}

static ExitStatus to_exit_status(int raw) {
  ExitStatus status;
  if (WIFSIGNALED(raw)) {
    status.signaled = true;
    status.signal = WTERMSIG(raw);
  } else {
    status.code = WEXITSTATUS(raw);
  }
  return status;
}

std::optional<ExitStatus> Process::try_wait() {
  if (m_status || m_pid <= 0) {
    return m_status;
  }
  int raw = 0;
  const pid_t got = waitpid(m_pid, &raw, WNOHANG);
  if (got == m_pid) {
    note_reaped(to_exit_status(raw));
    // Whatever the worker started dies with it: nothing of an evaluation outlives it.
    ::kill(-m_pid, SIGKILL);
  }
  return m_status;
}

ExitStatus Process::wait() {
  if (m_status) {
    return *m_status;
  }
  int raw = 0;
  while (waitpid(m_pid, &raw, 0) < 0) {
    if (errno != EINTR) {
      return note_reaped(ExitStatus{});
    }
  }
  note_reaped(to_exit_status(raw));
  ::kill(-m_pid, SIGKILL);
  return *m_status;
}

const ExitStatus& Process::note_reaped(ExitStatus status) {
  m_status = status;
  m_reaped_at = std::chrono::steady_clock::now();
  return *m_status;
}

double Process::lifetime_s() const {
  const auto end = m_status ? m_reaped_at : std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - m_spawned_at).count();
}

} // namespace kbench::sandbox
