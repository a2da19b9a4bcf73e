// The suite's progress line (report/suite_progress.hpp).
#include "report/suite_progress.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kbench::report {

namespace {

std::string format_eta(double seconds) {
  const auto s = static_cast<long>(std::lround(seconds));
  if (s < 60) {
    return fmt::format("{} s", s);
  }
  if (s < 3600) {
    return fmt::format("{} min {} s", s / 60, s % 60);
  }
  return fmt::format("{} h {} min", s / 3600, (s % 3600) / 60);
}

} // namespace

std::string format_progress(const SuiteProgress& p) {
  std::string line = fmt::format("{}/{} {}", p.done, p.total, p.verb);
  if (p.done > 0 && p.elapsed_s > 0) {
    const double per_minute = 60.0 * static_cast<double>(p.done) / p.elapsed_s;
    line += fmt::format(", {:.1f}/min", per_minute);
    if (p.done < p.total) {
      line += ", ETA " + format_eta(static_cast<double>(p.total - p.done) * p.elapsed_s /
                                    static_cast<double>(p.done));
    }
  }
  line += fmt::format(", {} failed", p.failed);
  if (p.unexpected > 0) {
    line += fmt::format(" ({} not as expected)", p.unexpected);
  }
  return line;
}

} // namespace kbench::report
