#pragma once
// Landlock helpers shared by the sandboxed spawn (the parent builds the ruleset, the child adds
// its own /proc/<pid> and applies it: child_setup.cpp) and by a worker that confines itself
// because a wrapper stands between kbench and it (src/worker/main.cpp). landlock.cpp also holds
// the spawn's ruleset builder, `prepare_landlock`, declared with the rest of the spawn's
// contract in spawn_steps.hpp so that this header stays free of it.

#include <cstdint>
#include <filesystem>
#include <linux/landlock.h>
#include <string>
#include <vector>

namespace kbench::sandbox {

// The environment variable that carries a wrapped worker's writable directories (a JSON array
// of paths). Under a wrapper (Nsight Compute) the worker is the wrapper's child, so its pid,
// and with it the /proc/<pid> that CUDA must write, is unknown when kbench confines the
// wrapper: that layer lets all of /proc be written, and the worker adds a second layer, writes
// only beneath these directories and its own /proc/<pid>, before it runs any Python.
inline constexpr const char* kWorkerWritableVariable = "KBENCH_WORKER_WRITABLE";

// Read: open files for reading, list directories, execute. LANDLOCK_ACCESS_FS_IOCTL_DEV is not
// handled (GPU device ioctls stay allowed), nor are the network and scope rights.
constexpr std::uint64_t landlock_read_rights() {
  return LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE;
}
// Everything that changes the tree, as far as this kernel's Landlock ABI knows it.
std::uint64_t landlock_write_rights(int abi);
// The kernel's Landlock ABI version, or -errno.
int landlock_abi();
// Adds a path-beneath rule; `rights` is narrowed to the file rights for a non-directory, a
// symbolic link is skipped. Returns 0 or an errno (ENOENT when the path does not exist).
int add_landlock_rule(int ruleset, const std::filesystem::path& path, std::uint64_t rights);
// Grants `rights` beneath this process's own /proc/<pid> (open follows /proc/self), to the
// ruleset. Async-signal-safe: used between fork and exec. Returns 0 or an errno.
int add_own_proc_rule(int ruleset, std::uint64_t rights);
// A second layer for this process: writes only beneath `writable` and its own /proc/<pid>
// (reads are left to the layer below). Returns "" or why it could not be applied.
std::string confine_writes(const std::vector<std::filesystem::path>& writable);

} // namespace kbench::sandbox
