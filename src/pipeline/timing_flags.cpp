#include "pipeline/timing_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <utility>

namespace kbench {
namespace {

// The timed sides in the loop's order, each with the name a sentence gives it.
std::vector<std::pair<const TimingSide*, const char*>> sides_of(const TimingInfo& timing) {
  std::vector<std::pair<const TimingSide*, const char*>> sides;
  if (timing.reference) {
    sides.emplace_back(&*timing.reference, "the reference");
  }
  if (timing.candidate) {
    sides.emplace_back(&*timing.candidate, "the candidate");
  }
  if (timing.reference_compiled) {
    sides.emplace_back(&*timing.reference_compiled, "the torch.compile baseline");
  }
  return sides;
}

// Widens the range [low, high] to hold v.
void widen(std::optional<double>& low, std::optional<double>& high, double v) {
  low = low ? std::min(*low, v) : v;
  high = high ? std::max(*high, v) : v;
}

} // namespace

bool throttled_block(double block_low_sm_mhz, std::optional<double> default_sm_mhz) {
  return default_sm_mhz && block_low_sm_mhz > 0 &&
         block_low_sm_mhz < kThrottleShare * *default_sm_mhz;
}

std::string clock_facts(const TimingInfo& timing) {
  std::optional<double> sm_low, sm_high, mem_low, mem_high;
  std::set<std::string> reasons;
  for (const auto& [side, name] : sides_of(timing)) {
    for (const auto& v : {side->min_sm_mhz, side->max_sm_mhz}) {
      if (v) {
        widen(sm_low, sm_high, *v);
      }
    }
    for (const auto& v : {side->min_mem_mhz, side->max_mem_mhz}) {
      if (v) {
        widen(mem_low, mem_high, *v);
      }
    }
    reasons.insert(side->clock_reasons.begin(), side->clock_reasons.end());
  }
  if (!sm_low) {
    return "no NVML clock readings; another process on the GPU is one cause";
  }
  return fmt::format("SM clock {:.0f}-{:.0f} MHz, memory clock {:.0f}-{:.0f} MHz, NVML's "
                     "reasons for lower clocks: {}; with steady clocks, suspect another process "
                     "on the GPU",
                     *sm_low, *sm_high, mem_low.value_or(0), mem_high.value_or(0),
                     reasons.empty() ? "none" : fmt::format("{}", fmt::join(reasons, ", ")));
}

// A candidate that declares kernels of its own and never runs them in timed calls did its
// work with torch's or a library's kernels (docs/integrity.md: decoy kernels).
std::string decoy_kernels(const TimingInfo& timing, const TimingObservations& seen) {
  const auto& cand = *timing.candidate;
  if (seen.own_kernels.empty() || cand.method != "cupti" || !cand.own_kernel_share ||
      *cand.own_kernel_share > 0) {
    return {};
  }
  std::string names;
  for (const auto& name : seen.own_kernels) {
    names += (names.empty() ? "" : ", ") + name;
  }
  return fmt::format("integrity check failed: the candidate's own kernels ({}) never ran in "
                     "{} timed calls; all of its GPU time was in other kernels (torch's or a "
                     "library's)",
                     names, cand.stats_us.n);
}

std::string impossible_measurement(const TimingInfo& timing, const TimingObservations& seen,
                                   bool warm) {
  const auto& cand = *timing.candidate;
  if (seen.no_work_calls > 0) {
    return fmt::format("{} of {} timed calls of the candidate caused no GPU work (no kernel, copy "
                       "or set) on a CUDA device: its results were computed elsewhere or "
                       "earlier, so its time is not the time of its work",
                       seen.no_work_calls, cand.samples_us.size());
  }
  const auto& bandwidth = seen.peak_bandwidth_bytes_per_s;
  if (!bandwidth || seen.input_bytes <= 0 || cand.stats_us.n == 0 || warm) {
    return {}; // warm: the inputs may sit in L2, which is faster than the floor assumes
  }
  const double floor_us = static_cast<double>(seen.input_bytes) / *bandwidth * 1e6;
  // A reference that is itself faster than the floor does not read all its inputs (a problem
  // that uses part of one): the floor then bounds nothing.
  const bool reference_reads_all = timing.reference && timing.reference->stats_us.n > 0 &&
                                   timing.reference->stats_us.median >= floor_us;
  if (cand.stats_us.median >= floor_us || !reference_reads_all) {
    return {};
  }
  return fmt::format("the candidate's median {:.2f} µs is below the time needed just to read its "
                     "inputs once from DRAM ({} bytes at the GPU's peak {:.0f} GB/s = {:.2f} µs; "
                     "the reference takes {:.2f} µs, and the L2 is flushed before each call): it "
                     "cannot have read them all",
                     cand.stats_us.median, seen.input_bytes, *bandwidth / 1e9, floor_us,
                     timing.reference->stats_us.median);
}

std::string unstable_timing_message(const TimingInfo& timing, const measure::SpeedChange& change) {
  // The ratio of medians over all samples moves when a change covers more of one side's
  // samples than the other's (the H200's step: 1.61x against 0.95x in four other runs); the
  // median per-block ratio does not. In a steady run both estimate the same ratio, well within
  // 5 % (the speedup's bootstrap interval is ±0.1-1.2 % wide on the H200).
  constexpr double kAgreement = 1.05;
  std::string verdict;
  if (timing.speedup && change.block_ratio > 0) {
    const double apart =
        std::max(*timing.speedup / change.block_ratio, change.block_ratio / *timing.speedup);
    verdict =
        apart > kAgreement
            ? fmt::format("the speedup {:.2f}x (ratio of medians over all samples) differs from "
                          "the median per-block ratio {:.2f}x, which a change that hits both "
                          "sides alike does not move: the speedup is unreliable; evaluate again",
                          *timing.speedup, change.block_ratio)
            : fmt::format("the speedup {:.2f}x agrees with the median per-block ratio {:.2f}x, "
                          "which a change that hits both sides alike does not move; each side's "
                          "times depend on when they were taken",
                          *timing.speedup, change.block_ratio);
  } else {
    verdict = "each side's times depend on when they were taken; evaluate again";
  }
  return fmt::format(
      "the GPU's speed changed during timing: in {} of {} paired blocks both sides' medians "
      "moved the same way by {:.2f}x or more (furthest: reference {:.2f} µs and candidate {:.2f} "
      "µs, against {:.2f} µs and {:.2f} µs in a typical block, {:.2f}x {}) ({}): {}",
      change.changed_blocks, change.blocks, measure::kSpeedChangeFactor,
      change.reference_changed_us, change.candidate_changed_us, change.reference_typical_us,
      change.candidate_typical_us, change.factor >= 1 ? change.factor : 1 / change.factor,
      change.factor >= 1 ? "slower" : "faster", clock_facts(timing), verdict);
}

void add_flags(TimingInfo& timing, const TimingObservations& seen) {
  const auto& cand = *timing.candidate;
  const std::size_t n = cand.samples_us.size();
  // A sustained tensor-core load can hold the H200 under its power cap at 1440 MHz, below the
  // 75 % line (measured by bench/timing_fidelity): the dropped blocks must be visible.
  for (const auto& [side, who] : sides_of(timing)) {
    if (side->throttled_samples_dropped == 0) {
      continue;
    }
    timing.flags.push_back(
        {"throttled",
         fmt::format("{} of {}'s samples were taken below {:.0f} % of the default SM clock "
                     "({:.0f} MHz) and dropped ({}){}",
                     side->throttled_samples_dropped, who, kThrottleShare * 100,
                     side->default_sm_mhz.value_or(0), clock_facts(timing),
                     side->samples_us.empty() ? "; none was left, so no time is reported for it"
                                              : "")});
  }
  if (seen.off_stream_calls > 0) {
    timing.flags.push_back(
        {"off_stream_work",
         fmt::format("in {} of {} timed calls the candidate left GPU work running on a stream "
                     "other than the caller's after forward returned (up to {:.1f} µs after the "
                     "caller's stream was done): the caller's stream never waited for it, so "
                     "event timing on that stream would miss it; the device time here includes it",
                     seen.off_stream_calls, n, seen.off_stream_tail_us)});
  }
  if (seen.cuda) {
    if (const auto change = measure::speed_change(seen.blocks); change && change->changed()) {
      timing.flags.push_back({"unstable_timing", unstable_timing_message(timing, *change)});
    }
  }
  if (timing.speedup && *timing.speedup > 10) {
    timing.flags.push_back(
        {"speedup_above_10x",
         fmt::format("speedup {:.1f}x over the eager reference: worth a look for a shortcut "
                     "(cached results, skipped work) before it is believed",
                     *timing.speedup)});
  }
  if (cand.method == "cupti" && cand.stats_us.median > 0 &&
      cand.host_stats_us.median > 3 * cand.stats_us.median) {
    timing.flags.push_back(
        {"launch_bound",
         fmt::format("host latency {:.1f} µs is over 3x the device time {:.1f} µs: launches and "
                     "Python, not the kernels, decide this call's time",
                     cand.host_stats_us.median, cand.stats_us.median)});
  }
}

} // namespace kbench
