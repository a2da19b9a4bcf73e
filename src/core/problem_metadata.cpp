#include "core/problem_metadata.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

namespace kbench {

std::optional<int> declared_world_size(const std::string& problem_source, std::string& error) {
  static const std::regex line(R"((^|\n)KBENCH_WORLD_SIZE\s*=\s*([^\n#]*))");
  std::smatch match;
  if (!std::regex_search(problem_source, match, line)) {
    return std::nullopt;
  }
  std::string value = match[2].str();
  value.erase(value.find_last_not_of(" \t\r") + 1);
  static const std::regex integer(R"(\d{1,2})");
  if (std::regex_match(value, integer)) {
    const int n = std::stoi(value);
    if (n >= 1 && n <= 64) {
      return n;
    }
  }
  const auto line_number =
      1 + std::count(problem_source.begin(), problem_source.begin() + match.position(2), '\n');
  error = fmt::format("line {}: KBENCH_WORLD_SIZE must be an integer literal between 1 and 64, "
                      "not '{}'",
                      line_number, value);
  return std::nullopt;
}

} // namespace kbench
