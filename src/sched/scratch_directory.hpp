#pragma once
// The one owner of an evaluation's scratch directory (a fresh private directory under $TMPDIR):
// it removes the directory when it goes, on every path out, an exception's included, unless it
// was told to keep it (--keep-scratch). Move-only, since two owners would remove it twice.
// `rank_dir` is the layout every phase agrees on: one rank's files are the phase's directory
// itself when there is one rank, as before world sizes, and `rank<N>` below it otherwise.
#include <filesystem>
#include <string>

namespace kbench::sched {

class ScratchDirectory {
public:
  // Makes `prefix`-XXXXXX under $TMPDIR (mode 0700); throws when it cannot.
  static ScratchDirectory create(const char* prefix, int world_size = 1);
  // An evaluation's scratch: compile/, tmp/, and reference/, inputs/ and candidate/ for each rank.
  static ScratchDirectory for_evaluation(int world_size, bool keep);

  ScratchDirectory() = default; // owns nothing
  // Takes ownership of an existing directory.
  explicit ScratchDirectory(std::filesystem::path path, int world_size = 1);
  ~ScratchDirectory();
  ScratchDirectory(ScratchDirectory&& other) noexcept;
  ScratchDirectory& operator=(ScratchDirectory&& other) noexcept;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  // Removes the directory now (unless kept) and owns nothing after.
  void reset();
  // Leaves the directory in place when the owner goes (--keep-scratch).
  void keep(bool keep = true) { m_keep = keep; }

  const std::filesystem::path& path() const { return m_path; }
  bool empty() const { return m_path.empty(); }
  int world_size() const { return m_world_size; }
  std::filesystem::path operator/(const std::filesystem::path& relative) const {
    return m_path / relative;
  }
  // One rank's directory of phase `phase`: `phase` itself with one rank, `phase`/rank<N> else.
  std::filesystem::path rank_dir(const std::string& phase, int rank) const;

private:
  std::filesystem::path m_path;
  int m_world_size = 1;
  bool m_keep = false;
};

} // namespace kbench::sched
