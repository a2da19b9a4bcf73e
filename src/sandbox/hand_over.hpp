#pragma once
// Giving a worker's user the directories kbench made for it (a root kbench whose workers run as
// another user, sandbox/worker_user.hpp). kbench (root) creates the scratch directories and the
// extension build directory; the worker must write them. Only directories are handed over, and
// only those kbench itself still owns: the walk goes down through kbench's own directories alone,
// which the worker's user cannot change, so a link or a renamed entry that the worker planted
// is never followed, and no file is ever chowned.
#include <filesystem>
#include <string>
#include <sys/types.h>

namespace kbench::sandbox {

// Hands `directory` (created when missing) and every directory beneath it that this process's
// euid owns to uid:gid, deepest first. With `keep_top`, `directory` itself stays this process's
// and becomes searchable but not listable by others (mode 0711): the scratch root, whose
// entries the worker must not rename. Returns "" or what failed.
std::string hand_over(const std::filesystem::path& directory, bool keep_top, uid_t uid, gid_t gid);

} // namespace kbench::sandbox
