#pragma once
// Which user a worker runs as. A worker started by root would ignore RLIMIT_NPROC (the kernel
// exempts root) and could write every root-owned file that Landlock does not cover, so a root
// kbench starts its workers as an unprivileged user instead: KBENCH_WORKER_USER, by default
// `nobody`. The child switches to it between fork and exec (child_setup.cpp); the parent hands
// the evaluation's directories over to it (hand_over.cpp). A kbench that is not root changes
// nothing: its workers already run as its own user.
#include <optional>
#include <string>
#include <sys/types.h>

namespace kbench::sandbox {

inline constexpr const char* kWorkerUserVariable = "KBENCH_WORKER_USER";
inline constexpr uid_t kNobodyId = 65534; // nobody / nogroup on Debian, Ubuntu, Fedora, Arch

struct WorkerUser {
  uid_t uid = kNobodyId;
  gid_t gid = kNobodyId;
  std::string name; // the passwd name, or the number when there is no entry
  // "nobody (uid 65534, gid 65534)"
  std::string describe() const;
};

struct UserChoice {
  std::optional<WorkerUser> user; // switch to this user; none: the worker keeps kbench's user
  // With no user while kbench is root: why the workers stay root (reported as the "user"
  // protection, off, with a warning on every result).
  std::string stays_root;
};

// The choice for a kbench whose effective uid is `euid`, from KBENCH_WORKER_USER's value
// (`setting`, null or empty when unset): unset, `nobody` (65534:65534 where the system has no
// such entry); `NAME` or `UID` (its primary group, or the same number when the uid has no
// entry); `USER:GROUP` (each a name or a number); `root` or `0`: workers stay root. Only a root
// kbench switches: for any other euid the choice is empty and the setting is not read. Throws
// std::runtime_error naming the variable for an unknown user or group, or one whose uid or gid
// is 0 (root's powers or root's group under another name).
UserChoice choose_worker_user(const char* setting, uid_t euid);

} // namespace kbench::sandbox
