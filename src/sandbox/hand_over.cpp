#include "sandbox/hand_over.hpp"

#include "sandbox/protections.hpp"
#include "sandbox/unique_fd.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kbench::sandbox {
namespace {

namespace fs = std::filesystem;

// Deep enough for every directory kbench makes (scratch/phase/rank/outputs), shallow enough that
// a bug cannot walk a whole file system.
constexpr int kMaxDepth = 8;

// Opens `path` (absolute, without symbolic links) one component at a time, never following a
// link, so that what is opened is the directory that was named.
UniqueFd open_directory(const fs::path& path, int& error) {
  UniqueFd fd(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (const auto& part : path.relative_path()) {
    if (!fd.valid()) {
      break;
    }
    fd = UniqueFd(openat(fd.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  error = fd.valid() ? 0 : errno;
  return fd;
}

// The names of the directories beneath `dir` that `owner` owns (read before any is changed).
std::vector<std::string> owned_subdirectories(int dir, uid_t owner) {
  std::vector<std::string> names;
  const int listing = fcntl(dir, F_DUPFD_CLOEXEC, 0);
  DIR* stream = listing >= 0 ? fdopendir(listing) : nullptr;
  if (!stream) {
    if (listing >= 0) {
      close(listing);
    }
    return names;
  }
  while (const dirent* entry = readdir(stream)) {
    const std::string name = entry->d_name;
    struct stat info {};
    if (name == "." || name == ".." ||
        fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    if (S_ISDIR(info.st_mode) && info.st_uid == owner) {
      names.push_back(name);
    }
  }
  closedir(stream);
  return names;
}

// Every directory beneath `dir` that `owner` owns, deepest first, then `dir` itself.
std::string hand_over_tree(int dir, const std::string& shown, uid_t owner, uid_t uid, gid_t gid,
                           int depth, bool chown_self) {
  if (depth < kMaxDepth) {
    for (const auto& name : owned_subdirectories(dir, owner)) {
      UniqueFd sub(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      struct stat info {};
      if (!sub.valid() || fstat(sub.get(), &info) != 0 || info.st_uid != owner) {
        continue; // gone, or no longer kbench's since it was listed
      }
      if (auto error =
              hand_over_tree(sub.get(), shown + "/" + name, owner, uid, gid, depth + 1, true);
          !error.empty()) {
        return error;
      }
    }
  }
  if (chown_self && fchown(dir, uid, gid) != 0) {
    return fmt::format("chown {}: {}", shown, errno_name(errno));
  }
  return "";
}

} // namespace

std::string hand_over(const fs::path& directory, bool keep_top, uid_t uid, gid_t gid) {
  std::error_code error;
  fs::create_directories(directory, error);
  const fs::path path = fs::weakly_canonical(fs::absolute(directory), error);
  if (error) {
    return fmt::format("{}: {}", directory.string(), error.message());
  }
  int open_error = 0;
  const UniqueFd top = open_directory(path, open_error);
  struct stat info {};
  if (!top.valid() || fstat(top.get(), &info) != 0) {
    return fmt::format("open {}: {}", path.string(), errno_name(top.valid() ? errno : open_error));
  }
  const uid_t owner = geteuid();
  if (info.st_uid != owner) {
    return ""; // not kbench's to give: whoever owns it decided (the reachability check says more)
  }
  if (keep_top && fchmod(top.get(), 0711) != 0) {
    return fmt::format("chmod 0711 {}: {}", path.string(), errno_name(errno));
  }
  return hand_over_tree(top.get(), path.string(), owner, uid, gid, 0, !keep_top);
}

} // namespace kbench::sandbox
