#include "measure/stopping_rule.hpp"

#include <fmt/format.h>

namespace kbench::measure {

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
  case StopReason::converged:
    return "converged";
  case StopReason::resolution:
    return "resolution";
  case StopReason::timeout:
    return "timeout";
  case StopReason::none:
    break;
  }
  return "none";
}

StoppingRule::StoppingRule(StoppingSettings settings) : m_settings(settings) {}

void StoppingRule::add(double sample_us) {
  m_samples.push_back(sample_us);
  m_sum_us += sample_us;
}

StopReason StoppingRule::judge(double elapsed_wall_s) {
  m_interval = median_interval(m_samples);
  const bool enough = m_samples.size() >= m_settings.min_samples &&
                      m_sum_us / 1e6 >= m_settings.min_time_s && m_interval;
  // At the timer's resolution first: a degenerate interval is "within" any precision, but what
  // it says is that the clock cannot resolve the median any better.
  if (enough && m_interval->at_resolution) {
    return StopReason::resolution;
  }
  if (enough && relative_half_width(m_interval->low, m_interval->high, m_interval->median) <=
                    m_settings.precision) {
    return StopReason::converged;
  }
  return elapsed_wall_s >= m_settings.timeout_s ? StopReason::timeout : StopReason::none;
}

std::string StoppingRule::unmet() const {
  std::string out;
  auto add = [&](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  if (m_samples.size() < m_settings.min_samples) {
    add(fmt::format("{} samples of the {} required", m_samples.size(), m_settings.min_samples));
  }
  if (m_sum_us / 1e6 < m_settings.min_time_s) {
    add(fmt::format("{:.3f} s of measured time of the {:.3f} s required", m_sum_us / 1e6,
                    m_settings.min_time_s));
  }
  if (m_interval && !m_interval->at_resolution) {
    const double half = relative_half_width(m_interval->low, m_interval->high, m_interval->median);
    if (half > m_settings.precision) {
      add(fmt::format("the median's 95 % interval ±{:.2f} % wider than ±{:.2f} %", half * 100,
                      m_settings.precision * 100));
    }
  } else if (!m_interval) {
    add("fewer than 6 samples: no interval for the median");
  }
  return out;
}

} // namespace kbench::measure
