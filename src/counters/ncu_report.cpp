#include "counters/ncu_report.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

namespace kbench::counters {
namespace {

// One CSV record starting at `pos` (quoted cells, "" for a quote); advances `pos` past its
// newline. ncu never puts newlines inside cells, but a quoted one is kept all the same.
std::vector<std::string> read_record(std::string_view text, std::size_t& pos) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        cells.back() += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c == '\n') {
      ++pos;
      break;
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

// "86,978,973,407.54" -> 86978973407.54; anything that is not wholly a number -> false.
bool parse_number(const std::string& cell, double& out) {
  std::string digits;
  for (const char c : cell) {
    if (c != ',') {
      digits += c;
    }
  }
  if (digits.empty()) {
    return false;
  }
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return error == std::errc() && end == digits.data() + digits.size();
}

} // namespace

const double* NcuKernel::find(const std::string& metric) const {
  const auto it = values.find(metric);
  return it == values.end() ? nullptr : &it->second;
}

NcuReport parse_ncu_csv(std::string_view text) {
  NcuReport report;
  std::size_t pos = 0;
  std::size_t line = 0;
  std::vector<std::string> header, units;
  while (pos < text.size()) {
    const std::size_t start = pos;
    ++line;
    // ncu's own messages ("==WARNING== ...", or a bare sentence such as "Set the HOME
    // environment variable to a writable directory.") precede the table.
    if (text[pos] == '=' || (header.empty() && text[pos] != '"')) {
      const std::size_t end = text.find('\n', pos);
      report.messages.emplace_back(
          text.substr(pos, end == std::string_view::npos ? end : end - pos));
      pos = end == std::string_view::npos ? text.size() : end + 1;
      continue;
    }
    auto cells = read_record(text, pos);
    if (cells.size() == 1 && cells[0].empty()) {
      continue;
    }
    if (header.empty()) {
      if (cells[0] != "ID") {
        throw std::runtime_error(
            fmt::format("ncu report line {}: expected the header row (\"ID\", ...), found \"{}\"",
                        line, text.substr(start, std::min<std::size_t>(60, pos - start))));
      }
      header = std::move(cells);
      continue;
    }
    if (cells.size() != header.size()) {
      throw std::runtime_error(fmt::format("ncu report line {}: {} cells, the header has {}", line,
                                           cells.size(), header.size()));
    }
    if (units.empty()) {
      units = std::move(cells);
      continue;
    }
    NcuKernel kernel;
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == "Kernel Name") {
        kernel.name = cells[i];
      }
      double number = 0;
      if (parse_number(cells[i], number)) {
        kernel.values[header[i]] = number;
        kernel.units[header[i]] = units[i];
      } else {
        kernel.text[header[i]] = cells[i];
      }
    }
    report.kernels.push_back(std::move(kernel));
  }
  return report;
}

} // namespace kbench::counters
