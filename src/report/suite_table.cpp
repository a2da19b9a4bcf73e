#include "report/suite_table.hpp"

#include "report/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>

namespace kbench::report {

bool SuiteRow::met_expectation() const {
  if (!result) {
    return true; // skipped rows are reported, not failed
  }
  return expect.empty() || expect == status_name(result->status);
}

namespace {

std::string short_name(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path().filename() / p.filename()).string();
}

// Display width of UTF-8 text: count code points, not bytes ("µs" is two columns, not three).
std::size_t width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

} // namespace

std::string format_suite_table(const std::vector<SuiteRow>& rows) {
  using Row = std::array<std::string, 10>;
  std::vector<Row> table;
  table.push_back({"#", "problem", "candidate", "device", "status", "trials", "max abs err",
                   "candidate", "reference", "speedup"});
  for (std::size_t n = 0; n < rows.size(); ++n) {
    const auto& row = rows[n];
    Row cells{std::to_string(n + 1),
              short_name(row.problem),
              short_name(row.candidate),
              row.device,
              "",
              "",
              "",
              "",
              "",
              ""};
    if (!row.result) {
      cells[4] = "skipped";
      cells[5] = row.skipped_reason;
      table.push_back(cells);
      continue;
    }
    const auto& r = *row.result;
    cells[4] = status_name(r.status);
    if (!row.expect.empty()) {
      cells[4] += row.met_expectation() ? " (as expected)" : " (expected " + row.expect + ")";
    }
    if (!row.note.empty()) {
      cells[4] += " [" + row.note + "]";
    }
    if (!r.trials.empty() && r.status != Status::harness_error) {
      cells[5] = fmt::format("{}/{}", r.trials_passed(), r.trials.size());
      const auto errors = r.error_summary();
      cells[6] = errors ? fmt::format("{:.2e}", errors->max_abs) : "-";
    }
    if (r.timing.candidate) {
      cells[7] = format_duration_us(r.timing.candidate->stats_us.median);
    }
    if (r.timing.reference) {
      cells[8] = format_duration_us(r.timing.reference->stats_us.median);
    }
    if (r.timing.speedup) {
      cells[9] = fmt::format("{:.2f}x{}", *r.timing.speedup,
                             r.timing.speedup_scored ? "" : " (not scored)");
    }
    table.push_back(cells);
  }
  std::array<std::size_t, 10> widths{};
  for (const auto& row : table) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], width(row[i]));
    }
  }
  std::string out;
  for (std::size_t r = 0; r < table.size(); ++r) {
    std::string line;
    for (std::size_t i = 0; i < table[r].size(); ++i) {
      line += table[r][i] + std::string(widths[i] - width(table[r][i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line + "\n";
    if (r == 0) {
      std::size_t total = 0;
      for (auto w : widths) {
        total += w + 2;
      }
      out += std::string(total - 2, '-') + "\n";
    }
  }
  return out;
}

} // namespace kbench::report
