// The parent's half of a sandboxed spawn: everything that reads files or allocates is done
// here, before fork, so that the child only has to apply it (spawn_steps.hpp).
#include "sandbox/hand_over.hpp"
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/spawn_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

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

// The directories above `path` (not `/`), then those above the path its links resolve to: the
// first one the user cannot search is the one to name.
std::vector<std::string> directories_above(const std::filesystem::path& path) {
  std::vector<std::string> out;
  auto add_ancestors = [&](const std::filesystem::path& p) {
    std::filesystem::path walked = "/";
    const std::filesystem::path relative = p.relative_path();
    for (auto part = relative.begin(); part != relative.end(); ++part) {
      if (std::next(part) == relative.end()) {
        break;
      }
      walked /= *part;
      if (std::find(out.begin(), out.end(), walked.string()) == out.end()) {
        out.push_back(walked.string());
      }
    }
  };
  add_ancestors(path);
  std::error_code ignored;
  if (const auto real = std::filesystem::weakly_canonical(path, ignored); !real.empty()) {
    add_ancestors(real);
  }
  return out;
}

void prepare_user(const SpawnSpec& spec, Prepared& out) {
  const auto& policy = spec.sandbox;
  const WorkerUser& user = *policy.user;
  out.switch_user = true;
  out.uid = user.uid;
  out.gid = user.gid;
  for (const auto& [directories, keep_top] :
       {std::pair{&policy.handed_over, false}, std::pair{&policy.handed_over_beneath, true}}) {
    for (const auto& directory : *directories) {
      if (const std::string error = hand_over(directory, keep_top, user.uid, user.gid);
          !error.empty()) {
        throw SpawnError(fmt::format("cannot hand {} over to the worker's user {}: {}",
                                     directory.string(), user.describe(), error));
      }
    }
  }
  std::vector<SandboxPolicy::Reach> wanted = {{spec.argv[0], X_OK, "the program"}};
  if (!spec.working_directory.empty()) {
    wanted.push_back({spec.working_directory, X_OK, "the working directory"});
  }
  for (const auto& directory : policy.handed_over) {
    wanted.push_back({directory, W_OK | X_OK, "the worker's directory"});
  }
  wanted.insert(wanted.end(), policy.must_reach.begin(), policy.must_reach.end());
  for (const auto& w : wanted) {
    const auto path = std::filesystem::absolute(w.path);
    for (const auto& directory : directories_above(path)) {
      out.reach.push_back({directory, X_OK, path.string(), w.what, true});
    }
    out.reach.push_back({path.string(), w.mode, path.string(), w.what, false});
  }
}

} // namespace

Prepared prepare(const SpawnSpec& spec) {
  Prepared out;
  const auto& policy = spec.sandbox;
  // The ids the worker ends with: the user's, or kbench's own.
  out.switch_user = policy.user.has_value();
  const uid_t uid = out.switch_user ? policy.user->uid : getuid();
  const gid_t gid = out.switch_user ? policy.user->gid : getgid();
  out.isolate_network = policy.isolate_network && !policy.allow_loopback_network;
  if (out.isolate_network) {
    // Privileged (root or CAP_SYS_ADMIN): a plain network namespace, made before the switch
    // to the worker's user; otherwise a user namespace that maps the uid and gid onto
    // themselves.
    out.try_plain_netns = true;
    out.try_userns = true;
    out.uid_map = fmt::format("{} {} 1\n", uid, uid);
    out.gid_map = fmt::format("{} {} 1\n", gid, gid);
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
  if (policy.user) {
    prepare_user(spec, out); // after Landlock, which creates the writable directories it lacks
  }
  if (spec.limits.processes_above_current) {
    const long now = tasks_of_user(uid);
    out.nproc = static_cast<rlim_t>(now) + *spec.limits.processes_above_current;
    // setresuid from root to another uid clears every capability.
    out.nproc_exempt = !out.switch_user && nproc_exempt();
    out.nproc_detail = fmt::format("RLIMIT_NPROC {} tasks of uid {} ({} now + {})", *out.nproc, uid,
                                   now, *spec.limits.processes_above_current);
  }
  return out;
}

} // namespace kbench::sandbox
