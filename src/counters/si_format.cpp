#include "counters/si_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace kbench::counters {

std::string format_si(double value, std::string_view unit, bool trim_zeros) {
  if (!std::isfinite(value)) {
    return fmt::format("{} {}", value, unit);
  }
  // Rounding before picking the prefix makes 999.6e9 read "1.00 TFLOP/s", not "1000 GFLOP/s".
  const std::string scientific = fmt::format("{:.2e}", value);
  const std::size_t e = scientific.find('e');
  const double mantissa = std::stod(scientific.substr(0, e));
  const int exponent = std::stoi(scientific.substr(e + 1));
  if (exponent < -4) {
    return unit.empty() ? scientific : fmt::format("{} {}", scientific, unit);
  }
  static constexpr std::string_view prefixes[] = {"", "k", "M", "G", "T", "P"};
  const int prefix = std::clamp(exponent / 3, 0, 5);
  const int digits = exponent - 3 * prefix; // before the decimal point, less one
  std::string number =
      fmt::format("{:.{}f}", mantissa * std::pow(10.0, digits), std::max(0, 2 - digits));
  if (trim_zeros && number.find('.') != std::string::npos) {
    number.erase(number.find_last_not_of('0') + 1);
    if (number.back() == '.') {
      number.pop_back();
    }
  }
  if (unit.empty()) {
    return number + std::string(prefixes[prefix]);
  }
  return fmt::format("{} {}{}", number, prefixes[prefix], unit);
}

} // namespace kbench::counters
