#include "pipeline/paired_timing.hpp"

#include "compare/compare_outputs.hpp"
#include "core/json_io.hpp"
#include "core/options.hpp"
#include "core/stopwatch.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stats.hpp"
#include "pipeline/block_answer.hpp"
#include "pipeline/timing_flags.hpp"
#include "pipeline/worker_requests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

namespace kbench {

TimingSettings timing_settings(const EvalOptions& options) {
  TimingSettings settings;
  settings.iterations = options.iterations;
  settings.warmup = options.warmup;
  settings.warm = options.warm;
  settings.stopping.min_samples = static_cast<std::size_t>(options.min_samples);
  settings.stopping.max_noise = options.max_noise;
  settings.stopping.min_time_s = options.min_time;
  settings.stopping.timeout_s = options.timing_timeout;
  settings.throttle_recovery_s = options.throttle_recovery;
  settings.compile_baseline = !options.no_compile_baseline;
  settings.atol = options.atol;
  settings.rtol = options.rtol;
  settings.run_timeout = options.run_timeout;
  return settings;
}

namespace {

// A block should hold about this much measured time: short enough that drift hits R and C
// alike, long enough that the round trip to the worker is small beside it.
constexpr double kBlockTargetUs = 20000;
constexpr int kMinBlockCalls = 10, kMaxBlockCalls = 500;

// Widens [low, high] by a block's readings of one clock; returns the block's lowest (0: none).
double fold_clock(const std::vector<double>& readings, std::optional<double>& low,
                  std::optional<double>& high) {
  double block_low = 0;
  for (const double v : readings) {
    block_low = block_low == 0 ? v : std::min(block_low, v);
    low = low ? std::min(*low, v) : v;
    high = high ? std::max(*high, v) : v;
  }
  return block_low;
}

// One side's samples and what its blocks reported.
struct Side {
  Side(sandbox::WorkerClient* worker_, WorkerRole role_, std::string target_,
       const measure::StoppingSettings& settings)
      : worker(worker_), role(role_), target(std::move(target_)), rule(settings) {}

  sandbox::WorkerClient* worker;
  WorkerRole role;
  std::string target; // eager or compiled
  measure::StoppingRule rule;
  std::vector<double> device_us, host_us, launches;
  std::vector<double> kernel_us, own_us;
  std::vector<double> block_us; // the last block's samples, for the paired blocks
  std::map<std::string, int> kernels_per_call;
  TimingSide out;
  bool done = false;
  int calls_per_block = kMinBlockCalls;
};

class PairedTiming {
public:
  PairedTiming(const TimingSettings& settings, const PairedTimingSetup& setup)
      : m_settings(settings), m_setup(setup) {
    m_sides.emplace_back(setup.reference, WorkerRole::reference, "eager", settings.stopping);
    m_sides.emplace_back(setup.candidate, WorkerRole::candidate, "eager", settings.stopping);
    if (setup.cuda && settings.compile_baseline) {
      m_sides.emplace_back(setup.reference, WorkerRole::reference, "compiled", settings.stopping);
    }
    m_seen.cuda = setup.cuda;
    m_seen.input_bytes = setup.input_bytes;
    m_seen.peak_bandwidth_bytes_per_s = setup.peak_bandwidth_bytes_per_s;
  }

  PairedTimingOutcome run() {
    PairedTimingOutcome result;
    for (int block = 0;; ++block) {
      std::vector<std::vector<double>> block_samples(m_sides.size());
      for (std::size_t s = 0; s < m_sides.size(); ++s) {
        Side& side = m_sides[s];
        if (!time_block(side, block, result)) {
          if (side.target == "compiled") {
            // A baseline torch cannot compile is a fact about torch, not the evaluation.
            result.timing.compiled_skipped_reason = result.failure.message;
            m_sides.pop_back();
            block_samples.pop_back();
            continue;
          }
          return result;
        }
        block_samples[s] = side.block_us;
      }
      if (!block_samples[0].empty() && !block_samples[1].empty()) {
        m_seen.blocks.push_back({block_samples[0], block_samples[1]});
        if (m_sides.size() > 2 && !block_samples[2].empty()) {
          m_compiled_blocks.push_back({block_samples[2], block_samples[1]});
        }
      }
      const double elapsed = wall_seconds();
      const double cap_s = m_settings.stopping.timeout_s;
      bool all_done = true;
      for (auto& side : m_sides) {
        all_done = all_done && (side.done || elapsed > cap_s);
        if (!side.done && elapsed > cap_s) {
          side.out.stop_reason = "timeout: " + side.rule.unmet();
        }
      }
      if (all_done) {
        break;
      }
    }
    if (!spot_check_last_call(result)) {
      return result;
    }
    finish(result.timing);
    if (const auto decoy = decoy_kernels(result.timing, m_seen); !decoy.empty()) {
      result.failure.status = Status::incorrect;
      result.failure.message = decoy;
      return result;
    }
    result.ok = true;
    return result;
  }

private:
  requests::TimeBlock block_request(const Side& side, int block, int calls) const {
    return {.block = block,
            .calls = calls,
            .target = side.target,
            .warm = m_settings.warm,
            .pool_size = m_setup.pool_size,
            .warmup = block == 0 ? m_settings.warmup : 0,
            .memory = block == 0 && side.target == "eager",
            .keep_first_output = block == 0 && side.role == WorkerRole::candidate};
  }

  // One block of `side`; false when its worker failed (result.failure says how).
  bool time_block(Side& side, int block, PairedTimingOutcome& result) {
    // A side whose rule is met keeps being timed until every side's is: each block must
    // hold R and C together for the paired interval.
    const int fixed = m_settings.iterations;
    const int calls = fixed > 0 ? fixed : side.calls_per_block;
    const PhaseOutcome outcome =
        run_phase(*side.worker, requests::time_block(block_request(side, block, calls)),
                  m_settings.run_timeout, side.role,
                  side.role == WorkerRole::candidate ? "timing ModelNew" : "timing the reference",
                  m_setup.candidate_path);
    if (!outcome.ok) {
      result.failure = outcome;
      return false;
    }
    const BlockAnswer answer = parse_block(outcome.body);
    spot_check(answer.kept_outputs, result.timing);
    if (!fold(side, answer)) {
      // A power-capped GPU recovers within tens of ms once idle (bench/timing_fidelity: 1725
      // MHz after 85 ms of fp16 matmul, 1440 MHz after seconds of it).
      std::this_thread::sleep_for(std::chrono::duration<double>(m_settings.throttle_recovery_s));
    }
    return true;
  }

  // Adds one block's answer to its side; false when the block ran throttled and was dropped.
  bool fold(Side& side, const BlockAnswer& answer) {
    side.block_us.clear();
    if (answer.setup) {
      side.out.tracing = answer.setup->tracing;
      side.out.tracing_overhead_us = answer.setup->tracing_overhead_us;
      side.out.default_sm_mhz = answer.setup->default_sm_mhz;
      side.out.l2_flush = answer.setup->l2_flush;
      if (side.role == WorkerRole::candidate) {
        m_seen.own_kernels = answer.setup->own_kernels;
      }
    }
    if (answer.peak_memory_bytes) {
      side.out.peak_memory_bytes = answer.peak_memory_bytes;
    }
    if (answer.raw_allocated_bytes) {
      side.out.raw_allocated_bytes = answer.raw_allocated_bytes;
    }
    if (answer.compile_s && side.target == "compiled" && !side.out.compile_s) {
      side.out.compile_s = answer.compile_s;
      // torch.compile's build (14 s for a ReLU on the H200) is not measurement: left in, it
      // used up the wall-clock cap and every side stopped after one block.
      m_excluded_s += *side.out.compile_s;
    }
    if (side.target == "compiled" && side.out.tracing.empty()) {
      // The same process as the eager reference: its setup answer came with that side's block.
      side.out.tracing = m_sides[0].out.tracing;
      side.out.tracing_overhead_us = m_sides[0].out.tracing_overhead_us;
      side.out.default_sm_mhz = m_sides[0].out.default_sm_mhz;
      side.out.l2_flush = m_sides[0].out.l2_flush;
    }
    side.out.method = answer.method;
    side.out.blocks += 1;

    // Throttling: the block's SM clock, before and after, against the default clock.
    const double low_clock = fold_clock(answer.sm_mhz, side.out.min_sm_mhz, side.out.max_sm_mhz);
    fold_clock(answer.mem_mhz, side.out.min_mem_mhz, side.out.max_mem_mhz);
    side.out.clock_reasons.insert(answer.clock_reasons.begin(), answer.clock_reasons.end());
    if (throttled_block(low_clock, side.out.default_sm_mhz)) {
      side.out.throttled_samples_dropped += answer.timed_calls;
      return false;
    }
    const int fixed = m_settings.iterations;
    for (const TimedCall& call : answer.calls) {
      side.device_us.push_back(call.device_us);
      side.host_us.push_back(call.host_us);
      side.block_us.push_back(call.device_us);
      if (call.facts) {
        side.launches.push_back(call.facts->kernel_count);
        side.kernel_us.push_back(call.facts->kernel_us);
        side.own_us.push_back(call.facts->own_kernel_us);
        note_flags(side, *call.facts);
        if (side.kernels_per_call.empty()) {
          side.kernels_per_call = call.facts->kernels_by_name;
        }
      }
      if (fixed > 0) {
        side.done = side.device_us.size() >= static_cast<std::size_t>(fixed);
        side.out.stop_reason = "fixed";
      } else if (!side.done) {
        const auto reason = side.rule.add(call.device_us, wall_seconds());
        if (reason != measure::StopReason::none) {
          side.done = true;
          // A timeout says which of the rule's conditions were still unmet, whether the side's
          // own rule or the paired loop saw the cap first.
          side.out.stop_reason = reason == measure::StopReason::timeout
                                     ? "timeout: " + side.rule.unmet()
                                     : measure::stop_reason_name(reason);
        }
      }
    }
    if (!side.device_us.empty()) {
      const double median = measure::percentile(side.device_us, 0.5);
      side.calls_per_block = std::clamp(static_cast<int>(kBlockTargetUs / std::max(median, 1.0)),
                                        kMinBlockCalls, kMaxBlockCalls);
    }
    return true;
  }

  double wall_seconds() const { return seconds_since(m_start) - m_excluded_s; }

  // What the flags count: the candidate's calls as CUPTI traced them.
  void note_flags(const Side& side, const CallFacts& call) {
    if (side.role != WorkerRole::candidate || side.out.method != "cupti") {
      return;
    }
    if (call.kernel_count + call.copy_count + call.set_count == 0) {
      ++m_seen.no_work_calls;
    }
    if (call.unjoined_stream_work) {
      ++m_seen.off_stream_calls;
      m_seen.off_stream_tail_us = std::max(m_seen.off_stream_tail_us, call.unjoined_tail_us);
    }
  }

  // The candidate's timed outputs against the reference's outputs for the same input set.
  void spot_check(const std::vector<KeptOutput>& kept_outputs, TimingInfo& timing) {
    for (const auto& kept : kept_outputs) {
      const auto reference =
          m_setup.pool_size > 0
              ? m_setup.reference_dir / fmt::format("pool_{}.outputs.safetensors", kept.pool_index)
              : m_setup.reference_dir / "trial_0.outputs.safetensors";
      const auto comparison =
          compare::compare_output_files(kept.file, reference, {m_settings.atol, m_settings.rtol});
      timing.spot_checks.push_back(fmt::format("timed call {} (input set {}): {}", kept.call,
                                               kept.pool_index,
                                               comparison.passed ? "passed" : comparison.failure));
      if (!comparison.passed) {
        m_spot_failure = fmt::format("an output produced while timing differs from the "
                                     "reference's for the same inputs (input set {}): {}",
                                     kept.pool_index, comparison.failure);
      }
    }
  }

  bool spot_check_last_call(PairedTimingOutcome& result) {
    Side& candidate = m_sides[1];
    requests::TimeBlock last = block_request(candidate, 1, 1);
    last.keep_first_output = true;
    last.memory = false;
    const PhaseOutcome outcome =
        run_phase(*candidate.worker, requests::time_block(last), m_settings.run_timeout,
                  WorkerRole::candidate, "timing ModelNew", m_setup.candidate_path);
    if (!outcome.ok) {
      result.failure = outcome;
      return false;
    }
    spot_check(kept_outputs(outcome.body), result.timing);
    if (!m_spot_failure.empty()) {
      result.failure.status = Status::incorrect;
      result.failure.message = m_spot_failure;
      return false;
    }
    return true;
  }

  void finish(TimingInfo& timing) {
    for (auto& side : m_sides) {
      side.out.samples_us = side.device_us;
      side.out.stats_us = measure::summarize(side.device_us);
      side.out.host_stats_us = measure::summarize(side.host_us);
      side.out.kernels_per_call = side.kernels_per_call;
      if (!side.launches.empty()) {
        side.out.launches_per_call = measure::percentile(side.launches, 0.5);
      }
      double kernel = 0, own = 0;
      for (std::size_t i = 0; i < side.kernel_us.size(); ++i) {
        kernel += side.kernel_us[i];
        own += side.own_us[i];
      }
      if (side.role == WorkerRole::candidate && kernel > 0) {
        side.out.own_kernel_share = own / kernel;
      }
    }
    timing.measured = true;
    timing.reference = m_sides[0].out;
    timing.candidate = m_sides[1].out;
    if (m_sides.size() > 2) {
      timing.reference_compiled = m_sides[2].out;
    } else if (timing.compiled_skipped_reason.empty()) {
      timing.compiled_skipped_reason =
          m_setup.cuda ? "turned off (--no-compile-baseline)" : "GPU evaluations only";
    }
    // A bootstrap over fewer blocks than this says nothing (one block: a zero-width interval).
    constexpr std::size_t kMinBlocksForInterval = 5;
    if (const auto estimate = measure::paired_speedup(m_seen.blocks)) {
      timing.speedup = estimate->speedup;
      if (estimate->blocks >= kMinBlocksForInterval) {
        timing.speedup_ci = Interval{estimate->low, estimate->high};
      }
    }
    if (const auto estimate = measure::paired_speedup(m_compiled_blocks)) {
      timing.speedup_vs_compiled = estimate->speedup;
      if (estimate->blocks >= kMinBlocksForInterval) {
        timing.speedup_vs_compiled_ci = Interval{estimate->low, estimate->high};
      }
    }
    const auto& ref = *timing.reference;
    const auto& cand = *timing.candidate;
    if (ref.peak_memory_bytes && cand.peak_memory_bytes && *ref.peak_memory_bytes > 0) {
      timing.memory_ratio = static_cast<double>(*cand.peak_memory_bytes) /
                            static_cast<double>(*ref.peak_memory_bytes);
    }
    if (ref.launches_per_call && cand.launches_per_call && *cand.launches_per_call > 0) {
      timing.fusion_ratio = *ref.launches_per_call / *cand.launches_per_call;
    }
    add_flags(timing, m_seen);
  }

  const TimingSettings m_settings; // copied once, as nvbench's measurers do
  const PairedTimingSetup& m_setup;
  std::vector<Side> m_sides;
  TimingObservations m_seen; // what the flags and the decoy check weigh
  std::vector<measure::PairedBlock> m_compiled_blocks;
  Clock::time_point m_start = Clock::now();
  double m_excluded_s = 0; // torch.compile's build, not counted against the wall-clock cap
  std::string m_spot_failure;
};

} // namespace

PairedTimingOutcome run_paired_timing(const TimingSettings& settings,
                                      const PairedTimingSetup& setup) {
  return PairedTiming(settings, setup).run();
}

} // namespace kbench
