#include "sandbox/protections.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kbench::sandbox {

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

// The parent's reading of the child's records: one Protection per requested protection.
std::vector<Protection> protections_from(const SpawnSpec& spec, const Prepared& prepared,
                                         const StepErrors& step) {
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
    if (!prepared.landlock_fd.valid()) {
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
  if (policy.user) {
    // A failed switch fails the spawn: a worker that started has the user, unless the child
    // never got to the step.
    Protection p{"user", ok(kStepUser), "", ""};
    if (p.active) {
      p.detail = policy.user->describe() + ", no supplementary groups (kbench runs as root)";
    } else {
      p.detail = "off: the switch to " + policy.user->describe() + " was never reported";
      p.warning = "worker user " + p.detail + "; the worker may run as root";
    }
    out.push_back(p);
  } else if (!policy.stays_root.empty()) {
    out.push_back({"user", false, "off: root (" + policy.stays_root + ")",
                   "worker user off: the worker runs as root (" + policy.stays_root +
                       "), so the process limit does not hold"});
  }
  return out;
}

} // namespace kbench::sandbox
