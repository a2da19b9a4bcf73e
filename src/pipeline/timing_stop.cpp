#include "pipeline/timing_stop.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kbench {
namespace {

// Empty when the speedup's 95 % interval is within the precision, or no wider than what one
// step of each side's timer makes of it.
std::string speedup_unmet(const std::vector<JudgedSide>& sides,
                          const std::vector<measure::PairedBlock>& blocks, double precision) {
  if (blocks.size() < kMinBlocksForInterval) {
    return fmt::format("{} paired blocks of the {} an interval needs", blocks.size(),
                       kMinBlocksForInterval);
  }
  // Fewer resamples than the reported interval's: this only decides whether to go on.
  const auto estimate = measure::paired_speedup(blocks, 400);
  if (!estimate) {
    return "no positive median on one side";
  }
  const double half =
      measure::relative_half_width(estimate->low, estimate->high, estimate->speedup);
  const auto step =
      speedup_step(estimate->speedup, sides[0].rule->interval(), sides[1].rule->interval());
  if (half <= precision || (step && estimate->high - estimate->low <= *step)) {
    return {};
  }
  return fmt::format("the 95 % interval ±{:.2f} % wider than ±{:.2f} %", half * 100,
                     precision * 100);
}

} // namespace

StopVerdict judge_stop(const std::vector<JudgedSide>& sides,
                       const std::vector<measure::PairedBlock>& blocks,
                       const measure::StoppingSettings& settings, double elapsed_s) {
  StopVerdict verdict;
  std::string unmet;
  auto note = [&](const std::string& text) { unmet += (unmet.empty() ? "" : "; ") + text; };
  bool sides_done = true;
  for (const auto& side : sides) {
    const auto reason = side.rule->judge(elapsed_s);
    const bool done =
        reason == measure::StopReason::converged || reason == measure::StopReason::resolution;
    sides_done = sides_done && done;
    verdict.side_done.push_back(done);
    verdict.side_reasons.push_back(done ? measure::stop_reason_name(reason)
                                        : "timeout: " + side.rule->unmet());
    if (!done) {
      note(side.label + ": " + side.rule->unmet());
    }
  }
  // The speedup's bootstrap is the costly judgement: only once every median is precise.
  const std::string speedup = sides_done ? speedup_unmet(sides, blocks, settings.precision)
                                         : "not judged until every median is precise";
  if (!speedup.empty()) {
    note("speedup: " + speedup);
  }
  if (unmet.empty()) {
    verdict.stop = true;
    verdict.reason = "converged";
  } else if (elapsed_s >= settings.timeout_s) {
    verdict.stop = true;
    verdict.reason = "timeout: " + unmet;
  }
  return verdict;
}

std::optional<double> speedup_step(double speedup,
                                   const std::optional<measure::MedianInterval>& reference,
                                   const std::optional<measure::MedianInterval>& candidate) {
  if (!reference || !candidate || !(reference->median > 0) || !(candidate->median > 0) ||
      reference->resolution <= 0 || candidate->resolution <= 0) {
    return std::nullopt;
  }
  return speedup *
         (reference->resolution / reference->median + candidate->resolution / candidate->median);
}

void report_median_interval(const std::vector<double>& samples, TimingSide& out) {
  const auto interval = measure::median_interval(samples);
  if (!interval) {
    return;
  }
  out.median_ci_us = Interval{interval->low, interval->high};
  if (interval->resolution > 0) {
    out.resolution_us = interval->resolution;
  }
  out.at_resolution = interval->at_resolution;
  if (interval->at_resolution && interval->resolution > 0) {
    const double half = interval->resolution / 2;
    out.median_ci_us = Interval{std::min(interval->low, interval->median - half),
                                std::max(interval->high, interval->median + half)};
  }
}

void report_speedups(const std::vector<measure::PairedBlock>& eager,
                     const std::vector<measure::PairedBlock>& compiled,
                     const std::optional<measure::MedianInterval>& reference,
                     const std::optional<measure::MedianInterval>& candidate, TimingInfo& timing) {
  if (const auto estimate = measure::paired_speedup(eager)) {
    timing.speedup = estimate->speedup;
    if (estimate->blocks >= kMinBlocksForInterval) {
      timing.speedup_ci = Interval{estimate->low, estimate->high};
      timing.speedup_resolution = speedup_step(estimate->speedup, reference, candidate);
      // A quantised timer makes the bootstrap's interval degenerate ([1.37, 1.37] for a
      // 1.7 µs kernel): the resolution is what is known, not a zero-width interval.
      if (timing.speedup_resolution &&
          estimate->high - estimate->low < *timing.speedup_resolution) {
        const double half = *timing.speedup_resolution / 2;
        timing.speedup_ci = Interval{std::min(estimate->low, estimate->speedup - half),
                                     std::max(estimate->high, estimate->speedup + half)};
        timing.speedup_ci_at_resolution = true;
      }
    }
  }
  if (const auto estimate = measure::paired_speedup(compiled)) {
    timing.speedup_vs_compiled = estimate->speedup;
    if (estimate->blocks >= kMinBlocksForInterval) {
      timing.speedup_vs_compiled_ci = Interval{estimate->low, estimate->high};
    }
  }
}

} // namespace kbench
