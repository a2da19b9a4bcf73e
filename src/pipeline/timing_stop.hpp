#pragma once
// The paired loop's stopping judgement and the precision it reports (docs/architecture.md,
// "Stopping"): every side's median within the timing precision or at its timer's resolution,
// then the speedup's bootstrap interval too; or the wall-clock cap. And the intervals that go
// into the result, never narrower than one step of the timers.
#include "core/result.hpp"
#include "measure/median_interval.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stopping_rule.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kbench {

// A bootstrap over fewer blocks than this says nothing (one block: a zero-width interval).
constexpr std::size_t kMinBlocksForInterval = 5;

struct JudgedSide {
  measure::StoppingRule* rule; // judged anew after each block
  std::string label;           // "candidate eager", for the unmet conditions
};

struct StopVerdict {
  bool stop = false;
  std::string reason; // the loop's: converged, or "timeout: " and what was unmet
  std::vector<bool> side_done;
  std::vector<std::string> side_reasons; // converged, resolution, or "timeout: ..."
};

// sides[0] and sides[1] are the eager reference and the candidate, whose `blocks` pair up.
StopVerdict judge_stop(const std::vector<JudgedSide>& sides,
                       const std::vector<measure::PairedBlock>& blocks,
                       const measure::StoppingSettings& settings, double elapsed_s);

// What one step of each side's timer makes of a speedup: s·(step_R/m_R + step_C/m_C); empty
// where a side shows no step.
std::optional<double> speedup_step(double speedup,
                                   const std::optional<measure::MedianInterval>& reference,
                                   const std::optional<measure::MedianInterval>& candidate);

// The median's 95 % interval into `out`, never narrower than one step of the timer.
void report_median_interval(const std::vector<double>& samples, TimingSide& out);

// speedup, speedup_ci (widened to the timers' resolution where the bootstrap's is narrower),
// speedup_resolution, and the same against the compiled reference.
void report_speedups(const std::vector<measure::PairedBlock>& eager,
                     const std::vector<measure::PairedBlock>& compiled,
                     const std::optional<measure::MedianInterval>& reference,
                     const std::optional<measure::MedianInterval>& candidate, TimingInfo& timing);

} // namespace kbench
