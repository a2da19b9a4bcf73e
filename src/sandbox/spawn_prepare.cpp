// The parent's half of a sandboxed spawn: everything that reads files or allocates is done
// here, before fork, so that the child only has to apply it (spawn_steps.hpp).
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/spawn_steps.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace kbench::sandbox {
namespace {

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

} // namespace

Prepared prepare(const SpawnSpec& spec) {
  Prepared out;
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
  return out;
}

} // namespace kbench::sandbox
