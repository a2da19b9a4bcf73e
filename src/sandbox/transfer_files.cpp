#include "sandbox/transfer_files.hpp"

#include "sandbox/unique_fd.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace kbench::sandbox {
namespace fs = std::filesystem;

namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string human(std::uint64_t bytes) {
  if (bytes >= (1ULL << 30)) {
    return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ULL << 30));
  }
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1ULL << 20));
}

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0
             ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page)
             : std::uint64_t{64} << 30;
}

// `path`'s components below `root`, or empty when `path` is not strictly beneath it.
std::vector<fs::path> below(const fs::path& root, const fs::path& path) {
  auto r = root.begin();
  auto p = path.begin();
  for (; r != root.end() && !r->empty(); ++r, ++p) {
    if (p == path.end() || *r != *p) {
      return {};
    }
  }
  std::vector<fs::path> rest;
  for (; p != path.end(); ++p) {
    if (!p->empty()) {
      rest.push_back(*p);
    }
  }
  return rest;
}

} // namespace

TransferFiles::TransferFiles(TransferPolicy policy)
    : m_policy(std::move(policy)),
      m_budget(m_policy.budget_bytes ? m_policy.budget_bytes : physical_memory_bytes()) {
  for (auto& root : m_policy.roots) {
    root = root.lexically_normal();
  }
}

const nlohmann::json* transfer_request(const nlohmann::json& interim) {
  const auto found = interim.find("transfer_file");
  return found != interim.end() && found->is_object() ? &*found : nullptr;
}

nlohmann::json TransferFiles::answer(const nlohmann::json& request) {
  const auto text = [&](const char* key) {
    const auto found = request.find(key);
    return found != request.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  const std::string path = text("path");
  const std::string what = text("what").empty() ? "a tensor file" : text("what");
  const auto bytes = request.find("bytes");
  if (path.empty() || bytes == request.end() || !bytes->is_number_unsigned()) {
    return {{"ok", false},
            {"message", "a transfer_file request needs a string 'path' and an unsigned 'bytes'"}};
  }
  if (m_policy.roots.empty()) {
    // The worker writes the file itself, under its limit (a launch that is not an evaluation's).
    return {{"ok", false},
            {"none_granted", true},
            {"message", "this worker is granted no transfer files (its launch named no "
                        "directories)"}};
  }
  const auto size = bytes->get<std::uint64_t>();
  const std::string error = make(path, size);
  if (error.empty()) {
    m_granted += size;
    return {{"ok", true}};
  }
  return {{"ok", false},
          {"message", fmt::format("cannot pass {} ({} bytes, {}) through {}: {}", what, size,
                                  human(size), path, error)}};
}

std::string TransferFiles::make(const fs::path& path, std::uint64_t bytes) {
  if (bytes > m_budget - std::min(m_granted, m_budget)) {
    return fmt::format("this worker was already granted {} of its {} transfer budget (the "
                       "machine's memory): a problem whose tensors need more than that cannot "
                       "be evaluated here; use a smaller size or a machine with more memory",
                       human(m_granted), human(m_budget));
  }
  if (!path.is_absolute() || path.lexically_normal() != path ||
      path.extension() != ".safetensors") {
    return "the path must be absolute, normalised and end in .safetensors";
  }
  std::vector<fs::path> rest;
  const fs::path* root = nullptr;
  for (const auto& r : m_policy.roots) {
    if (auto parts = below(r, path); !parts.empty()) {
      rest = std::move(parts);
      root = &r;
      break;
    }
  }
  if (root == nullptr) {
    return "the path is not beneath any of the worker's writable directories";
  }
  UniqueFd dir(::open(root->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    return fmt::format("cannot open {}: {}", root->string(), errno_text(errno));
  }
  // The worker owns the directories beneath its roots: none is followed through a link.
  for (std::size_t i = 0; i + 1 < rest.size(); ++i) {
    UniqueFd next(
        ::openat(dir.get(), rest[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      return fmt::format("cannot open the directory {} without following a link: {}",
                         rest[i].string(), errno_text(errno));
    }
    dir = std::move(next);
  }
  // O_PATH descriptors serve openat but not fstatvfs: the free space comes from a real one.
  UniqueFd listing(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct statvfs space {};
  if (listing.valid() && ::fstatvfs(listing.get(), &space) == 0) {
    const auto free_bytes = static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize;
    if (bytes > free_bytes) {
      return fmt::format("{} {} free; point TMPDIR (the scratch directory's parent) at a "
                         "filesystem with more room",
                         kNoScratchRoom, human(free_bytes));
    }
  }
  const fs::path& name = rest.back();
  UniqueFd file(::openat(dir.get(), name.c_str(),
                         O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!file.valid()) {
    return fmt::format("cannot create the file: {}", errno_text(errno));
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_nlink != 1) {
    // A hard link into another directory (the reference's outputs) is not truncated.
    return "a file of that name exists and is not a plain file with one link";
  }
  if (::ftruncate(file.get(), 0) != 0) {
    return fmt::format("cannot empty the file: {}", errno_text(errno));
  }
  if (m_policy.uid && ::fchown(file.get(), *m_policy.uid, m_policy.gid.value_or(-1)) != 0) {
    return fmt::format("cannot hand the file to the worker's user: {}", errno_text(errno));
  }
  if (bytes == 0) {
    return "";
  }
  // Reserved, not just sized: a full disk shows here, with the tensor's name, rather than as a
  // SIGBUS in the worker's store through the mapping.
  if (::fallocate(file.get(), 0, 0, static_cast<off_t>(bytes)) != 0) {
    const int error = errno;
    if (error != EOPNOTSUPP && error != ENOSYS) {
      ::ftruncate(file.get(), 0);
      return fmt::format("cannot reserve its bytes: {}{}", errno_text(error),
                         error == ENOSPC ? "; point TMPDIR at a filesystem with more room" : "");
    }
    if (::ftruncate(file.get(), static_cast<off_t>(bytes)) != 0) {
      return fmt::format("cannot size the file: {}", errno_text(errno));
    }
  }
  return "";
}

} // namespace kbench::sandbox
