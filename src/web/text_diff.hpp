#pragma once
// A line diff between two versions of a kernel, for the run page: the lines the later version
// removed and added, with unchanged context around each change (a unified diff's body).
#include <string>
#include <vector>

namespace kbench::web {

struct DiffLine {
  char kind; // ' ' unchanged, '-' removed, '+' added, '@' a skipped stretch
  std::string text;
};

// Longest-common-subsequence diff, `context` unchanged lines kept around each change.
std::vector<DiffLine> line_diff(const std::string& before, const std::string& after,
                                int context = 3);

} // namespace kbench::web
