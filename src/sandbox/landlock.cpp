#include "sandbox/landlock.hpp"

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

} // namespace kbench::sandbox
