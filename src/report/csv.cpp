#include "report/csv.hpp"

#include <charconv>

namespace kbench::report {
namespace {

bool is_number(const std::string& text) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, value);
  return !text.empty() && parsed.ec == std::errc() && parsed.ptr == end;
}

} // namespace

std::string csv_cell(const std::string& value) {
  std::string text = value;
  if (!text.empty() && std::string("=+-@\t\r").find(text.front()) != std::string::npos &&
      !is_number(text)) {
    text = "'" + text;
  }
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c == '"' ? "\"\"" : std::string(1, c);
  }
  return quoted + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    line += (i ? "," : "") + csv_cell(cells[i]);
  }
  return line + "\r\n";
}

} // namespace kbench::report
