#include "sched/scratch_directory.hpp"

#include "sched/paths.hpp"

#include <fmt/format.h>

#include <utility>

namespace kbench::sched {

namespace fs = std::filesystem;

ScratchDirectory ScratchDirectory::create(const char* prefix, int world_size) {
  return ScratchDirectory(make_scratch_directory(prefix), world_size);
}

ScratchDirectory::ScratchDirectory(fs::path path, int world_size)
    : m_path(std::move(path)), m_world_size(world_size) {}

ScratchDirectory::~ScratchDirectory() {
  reset();
}

ScratchDirectory::ScratchDirectory(ScratchDirectory&& other) noexcept
    : m_path(std::exchange(other.m_path, {})), m_world_size(other.m_world_size),
      m_keep(other.m_keep) {}

ScratchDirectory& ScratchDirectory::operator=(ScratchDirectory&& other) noexcept {
  if (this != &other) {
    reset();
    m_path = std::exchange(other.m_path, {});
    m_world_size = other.m_world_size;
    m_keep = other.m_keep;
  }
  return *this;
}

void ScratchDirectory::reset() {
  if (!m_keep && !m_path.empty()) {
    // A directory that cannot be removed (a file a worker left read-only) is left behind
    // rather than thrown about: this runs in destructors.
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
  m_path.clear();
}

fs::path ScratchDirectory::rank_dir(const std::string& phase, int rank) const {
  return m_world_size == 1 ? m_path / phase : m_path / phase / fmt::format("rank{}", rank);
}

ScratchDirectory ScratchDirectory::for_evaluation(int world_size, bool keep) {
  ScratchDirectory scratch = create("kbench-eval", world_size);
  scratch.keep(keep);
  std::filesystem::create_directories(scratch / "compile");
  std::filesystem::create_directories(scratch / "tmp");
  for (const char* sub : {"reference", "inputs", "candidate"}) {
    for (int rank = 0; rank < world_size; ++rank) {
      std::filesystem::create_directories(scratch.rank_dir(sub, rank));
    }
  }
  return scratch;
}

} // namespace kbench::sched
