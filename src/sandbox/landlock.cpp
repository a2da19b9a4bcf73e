#include "sandbox/landlock.hpp"

#include "sandbox/protections.hpp"
#include "sandbox/spawn_steps.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kbench::sandbox {
namespace {

constexpr std::uint64_t kLandlockFileRights =
    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE;

// Grants `rights` beneath the file `fd` is open on, then closes it; 0 or an errno.
// Async-signal-safe (used between fork and exec).
int add_rule_and_close(int ruleset, int fd, std::uint64_t rights) {
  landlock_path_beneath_attr rule{};
  rule.allowed_access = rights;
  rule.parent_fd = fd;
  const long done = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  const int saved = errno;
  close(fd);
  return done == 0 ? 0 : saved;
}

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

} // namespace

std::uint64_t landlock_write_rights(int abi) {
  std::uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                         LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                         LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                         LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                         LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
  if (abi >= 2) {
    rights |= LANDLOCK_ACCESS_FS_REFER;
  }
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
  if (abi >= 3) {
    rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
  }
#endif
  return rights;
}

int landlock_abi() {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0,
                           static_cast<std::uint32_t>(LANDLOCK_CREATE_RULESET_VERSION));
  return abi < 0 ? -errno : static_cast<int>(abi);
}

int add_landlock_rule(int ruleset, const std::filesystem::path& path, std::uint64_t rights) {
  const int fd = open(path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return errno;
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || S_ISLNK(info.st_mode)) {
    // A symbolic link is reached through its target, which has its own rule (following it
    // here could grant a denied directory through a link that points into it).
    close(fd);
    return 0;
  }
  if (!S_ISDIR(info.st_mode)) {
    rights &= kLandlockFileRights;
  }
  return add_rule_and_close(ruleset, fd, rights);
}

int add_own_proc_rule(int ruleset, std::uint64_t rights) {
  const int self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
  return self < 0 ? errno : add_rule_and_close(ruleset, self, rights);
}

std::string confine_writes(const std::vector<std::filesystem::path>& writable) {
  const int abi = landlock_abi();
  if (abi <= 0) {
    return fmt::format("this kernel has no Landlock: {}", std::strerror(-abi));
  }
  const std::uint64_t write = landlock_write_rights(abi);
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = write;
  const long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (fd < 0) {
    return fmt::format("landlock_create_ruleset: {}", std::strerror(errno));
  }
  const int ruleset = static_cast<int>(fd);
  int error = add_own_proc_rule(ruleset, write);
  std::string failed = "/proc/self";
  for (const auto& w : writable) {
    if (error == 0) {
      std::error_code ignored; // a symbolic link would be skipped: its target gets the rule
      const auto resolved = std::filesystem::weakly_canonical(w, ignored);
      error = add_landlock_rule(ruleset, resolved.empty() ? w : resolved, write);
      failed = w.string();
    }
  }
  if (error == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    error = errno;
    failed = "no_new_privs";
  }
  if (error == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    error = errno;
    failed = "landlock_restrict_self";
  }
  close(ruleset);
  return error == 0 ? "" : fmt::format("{}: {}", failed, std::strerror(error));
}

// ---- the ruleset of a sandboxed spawn, made in the parent ----

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
  const UniqueFd ruleset(static_cast<int>(fd));
  int error = denied.empty() ? add_landlock_rule(ruleset.get(), "/", kLandlockRead)
                             : allow_read_except(ruleset.get(), "/", denied);
  for (const auto& w : writable) {
    if (error == 0) {
      error = add_landlock_rule(ruleset.get(), w, kLandlockRead | write);
    }
  }
  if (error == 0 && policy.worker_confines_writes) {
    // The worker is the wrapper's child: its /proc/<pid> is not known here (landlock.hpp).
    error = add_landlock_rule(ruleset.get(), "/proc", kLandlockRead | write);
  }
  if (error != 0) {
    out.landlock_unavailable = "adding the Landlock rules failed: " + errno_name(error);
    return;
  }
  out.landlock_fd = UniqueFd(fcntl(ruleset.get(), F_DUPFD_CLOEXEC, kHighFd));
  if (!out.landlock_fd.valid()) {
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

} // namespace kbench::sandbox
