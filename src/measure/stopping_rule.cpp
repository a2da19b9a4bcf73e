#include "measure/stopping_rule.hpp"

#include "measure/stats.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kbench::measure {
namespace {

// Relative std of the last `count` values, through the same summary the samples get.
double recent_noise(const std::vector<double>& values, std::size_t count) {
  return summarize(
             std::vector<double>(values.end() - static_cast<std::ptrdiff_t>(count), values.end()))
      .noise;
}

} // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
  case StopReason::converged:
    return "converged";
  case StopReason::plateau:
    return "plateau";
  case StopReason::timeout:
    return "timeout";
  case StopReason::none:
    break;
  }
  return "none";
}

StoppingRule::StoppingRule(StoppingSettings settings) : m_settings(settings) {}

StopReason StoppingRule::add(double sample_us, double elapsed_wall_s) {
  m_samples.push_back(sample_us);
  m_sum += sample_us;
  m_sum_sq += sample_us * sample_us;
  const double n = static_cast<double>(m_samples.size());
  // Noise only once there are enough samples for the estimate to mean something (NVBench: 5).
  if (m_samples.size() >= 5) {
    const double mean = m_sum / n;
    const double variance = std::max(0.0, (m_sum_sq - n * mean * mean) / (n - 1));
    m_noise = mean > 0 ? std::sqrt(variance) / mean : 0;
    if (std::isfinite(m_noise)) {
      m_noise_history.push_back(m_noise);
    }
  }
  if (elapsed_wall_s >= m_settings.timeout_s) {
    return StopReason::timeout;
  }
  const bool enough =
      m_samples.size() >= m_settings.min_samples && m_sum / 1e6 >= m_settings.min_time_s;
  if (!enough) {
    return StopReason::none;
  }
  if (m_noise < m_settings.max_noise) {
    return StopReason::converged;
  }
  if (m_noise_history.size() > m_settings.plateau_history &&
      m_samples.size() % m_settings.plateau_stride == 0 &&
      recent_noise(m_noise_history, m_settings.plateau_history) < m_settings.plateau_rel_std) {
    return StopReason::plateau;
  }
  return StopReason::none;
}

std::string StoppingRule::unmet() const {
  std::string out;
  auto add = [&](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  if (m_samples.size() < m_settings.min_samples) {
    add(fmt::format("{} samples of the {} required", m_samples.size(), m_settings.min_samples));
  }
  if (m_sum / 1e6 < m_settings.min_time_s) {
    add(fmt::format("{:.3f} s of measured time of the {:.3f} s required", m_sum / 1e6,
                    m_settings.min_time_s));
  }
  if (m_noise >= m_settings.max_noise) {
    add(fmt::format("noise {:.2f} % above {:.2f} %", m_noise * 100, m_settings.max_noise * 100));
  }
  return out;
}

} // namespace kbench::measure
