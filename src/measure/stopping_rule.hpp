#pragma once
// When one side's sampling may stop (docs/architecture.md, "The measurement contract"): once the
// 95 % interval of its median is within ±`precision` of it, or spans no more than the timer's
// resolution (more samples cannot narrow it), after at least `min_samples` (and, when set,
// `min_time_s` of measured time); else at the wall-clock cap. Judged once per block, when the
// block's samples are all in: the speedup's own interval is the paired loop's to judge
// (pipeline/paired_timing.cpp), as it needs both sides' blocks.
#include "measure/median_interval.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kbench::measure {

struct StoppingSettings {
  std::size_t min_samples = 10;
  double precision = 0.01; // relative half-width of the 95 % intervals (±1 %)
  double min_time_s = 0;   // sum of the measured times; none by default
  double timeout_s = 15.0; // wall clock spent sampling
};

enum class StopReason { none, converged, resolution, timeout };
const char* stop_reason_name(StopReason reason);

class StoppingRule {
public:
  explicit StoppingRule(StoppingSettings settings = {});
  void add(double sample_us);
  // Whether to stop, with the samples added so far and the wall time spent sampling.
  StopReason judge(double elapsed_wall_s);
  std::size_t count() const { return m_samples.size(); }
  // The median's interval as last judged (empty before 6 samples).
  const std::optional<MedianInterval>& interval() const { return m_interval; }
  // For a person: which conditions were unmet at the last judgement ("" when none was).
  std::string unmet() const;

private:
  StoppingSettings m_settings;
  std::vector<double> m_samples;
  double m_sum_us = 0;
  std::optional<MedianInterval> m_interval;
};

} // namespace kbench::measure
