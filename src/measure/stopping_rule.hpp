#pragma once
// When to stop sampling, like NVBench's `stdrel` criterion (docs/architecture.md, "The measurement
// contract"): at least `min_samples`, relative standard deviation under `max_noise`, at least
// `min_time_s` of measured time; or the noise has plateaued (it will not fall further); or the
// wall-clock cap.
#include <cstddef>
#include <string>
#include <vector>

namespace kbench::measure {

struct StoppingSettings {
  std::size_t min_samples = 10;
  double max_noise = 0.005; // relative std (0.5 %)
  double min_time_s = 0.5;  // sum of the measured times
  double timeout_s = 15.0;  // wall clock spent sampling
  // Plateau: every `plateau_stride` samples, once more than `plateau_history` noise values
  // exist, stop if the relative std of the recent noise values is under `plateau_rel_std`.
  std::size_t plateau_stride = 16;
  std::size_t plateau_history = 64;
  double plateau_rel_std = 0.05;
};

enum class StopReason { none, converged, plateau, timeout };
const char* stop_reason_name(StopReason reason);

class StoppingRule {
public:
  explicit StoppingRule(StoppingSettings settings = {});
  // Adds one sample (µs) and the wall time spent so far; returns why to stop, or none.
  StopReason add(double sample_us, double elapsed_wall_s);
  double noise() const { return m_noise; } // current relative std (0 before 5 samples)
  std::size_t count() const { return m_samples.size(); }
  // For a person: which conditions were not met when sampling stopped on the timeout.
  std::string unmet() const;

private:
  StoppingSettings m_settings;
  std::vector<double> m_samples;
  std::vector<double> m_noise_history;
  double m_sum = 0, m_sum_sq = 0, m_noise = 0;
};

} // namespace kbench::measure
