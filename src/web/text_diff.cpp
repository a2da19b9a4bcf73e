#include "web/text_diff.hpp"

#include <fmt/format.h>

#include <sstream>

namespace kbench::web {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

} // namespace

std::vector<DiffLine> line_diff(const std::string& before, const std::string& after, int context) {
  const auto a = lines_of(before), b = lines_of(after);
  const std::size_t n = a.size(), m = b.size();
  // Kernel files are hundreds of lines: the quadratic table is small.
  std::vector<std::vector<int>> common(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      common[i][j] =
          a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::vector<DiffLine> all;
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      all.push_back({' ', a[i++]});
      ++j;
    } else if (i < n && (j == m || common[i + 1][j] >= common[i][j + 1])) {
      all.push_back({'-', a[i++]}); // a changed line reads old, then new
    } else {
      all.push_back({'+', b[j++]});
    }
  }
  // Keep `context` unchanged lines around each change; a longer stretch becomes one '@' line.
  std::vector<bool> keep(all.size(), false);
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k].kind != ' ') {
      const std::size_t from = k >= static_cast<std::size_t>(context) ? k - context : 0;
      for (std::size_t c = from; c <= std::min(all.size() - 1, k + context); ++c) {
        keep[c] = true;
      }
    }
  }
  std::vector<DiffLine> out;
  std::size_t skipped = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (keep[k]) {
      if (skipped > 0) {
        out.push_back({'@', fmt::format("... {} unchanged line(s)", skipped)});
        skipped = 0;
      }
      out.push_back(all[k]);
    } else {
      ++skipped;
    }
  }
  if (skipped > 0 && !out.empty()) {
    out.push_back({'@', fmt::format("... {} unchanged line(s)", skipped)});
  }
  return out;
}

} // namespace kbench::web
