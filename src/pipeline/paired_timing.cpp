#include "pipeline/paired_timing.hpp"

#include "compare/compare_outputs.hpp"
#include "core/json_io.hpp"
#include "core/options.hpp"
#include "core/stopwatch.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stats.hpp"
#include "pipeline/block_answer.hpp"
#include "pipeline/block_sizing.hpp"
#include "pipeline/seed_exchange.hpp"
#include "pipeline/timed_output_check.hpp"
#include "pipeline/timing_flags.hpp"
#include "pipeline/timing_stop.hpp"
#include "pipeline/worker_requests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

namespace kbench {

TimingSettings timing_settings(const EvalOptions& options) {
  TimingSettings settings;
  settings.iterations = options.iterations;
  settings.warmup = options.warmup;
  settings.warm = options.warm;
  settings.stopping.min_samples = static_cast<std::size_t>(options.min_samples);
  settings.stopping.precision = options.timing_precision;
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

// Elements read of each output of a timed call (python/kbench/worker/timed_inputs.py,
// SAMPLE_ELEMENTS): all of a smaller output.
constexpr int kSampledElements = 1024;

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
  double wall_per_call_s = 0;   // the last block's round trip per call, warm-ups included; 0: none
  std::map<std::string, int> kernels_per_call;
  TimingSide out;
  bool done = false;
};

PhaseOutcome incorrect(std::string message) {
  PhaseOutcome outcome;
  outcome.status = Status::incorrect;
  outcome.message = std::move(message);
  return outcome;
}

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
    m_seen.peak_bandwidth_bytes_per_s = setup.peak_bandwidth_bytes_per_s;
  }

  PairedTimingOutcome run() {
    PairedTimingOutcome result;
    for (int block = 0;; ++block) {
      const int calls = m_settings.iterations > 0 ? m_settings.iterations : m_calls_per_block;
      // Every side times the same calls on the same inputs: a fresh secret seed per call.
      const std::vector<std::uint64_t> seeds = secret_seeds(calls);
      if (!time_candidate_then_reference(block, seeds, result)) {
        return result;
      }
      if (m_sides.size() > 2) {
        requests::TimeBlock compiled = block_request(m_sides[2], block, calls);
        compiled.seeds = seeds;
        if (!time_block(m_sides[2], compiled, {}, result)) {
          // A baseline torch cannot compile is a fact about torch, not the evaluation.
          result.timing.compiled_skipped_reason = result.failure.message;
          result.failure = {};
          m_sides.pop_back();
        }
      }
      if (!m_sides[0].block_us.empty() && !m_sides[1].block_us.empty()) {
        m_seen.blocks.push_back({m_sides[0].block_us, m_sides[1].block_us});
        if (m_sides.size() > 2 && !m_sides[2].block_us.empty()) {
          m_compiled_blocks.push_back({m_sides[2].block_us, m_sides[1].block_us});
        }
      }
      size_next_block();
      if (m_settings.iterations > 0 ? all_fixed_calls_done() : precise_enough(result.timing)) {
        break;
      }
    }
    if (m_settings.iterations > 0) {
      result.timing.stop_reason = "fixed";
    }
    finish(result.timing);
    result.call_bytes = m_seen.input_bytes + m_output_bytes;
    if (const auto impossible = impossible_measurement(result.timing, m_seen, m_settings.warm);
        !impossible.empty()) {
      result.failure.status = Status::impossible_timing;
      result.failure.message = impossible;
      result.timing.speedup.reset();
      result.timing.speedup_ci.reset();
      result.timing.speedup_vs_compiled.reset();
      result.timing.speedup_vs_compiled_ci.reset();
      return result;
    }
    if (const auto decoy = decoy_kernels(result.timing, m_seen); !decoy.empty()) {
      result.failure = incorrect(decoy);
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
            .shape_seed = m_setup.shape_seed,
            .warmup = block == 0 ? m_settings.warmup : 0,
            .memory = block == 0 && side.target == "eager"};
  }

  // The candidate's block first: it learns each call's seed only once the call before returned,
  // and the positions its outputs are read at are drawn as each call returns. Then the eager
  // reference on the same seeds, read at the same positions, and the check of every call.
  bool time_candidate_then_reference(int block, const std::vector<std::uint64_t>& seeds,
                                     PairedTimingOutcome& result) {
    const int calls = static_cast<int>(seeds.size());
    Side& candidate = m_sides[1];
    SeedExchange exchange(seeds);
    const auto theirs = time_block(
        candidate, block_request(candidate, block, calls),
        [&](const nlohmann::json& message) { return exchange(message); }, result);
    if (exchange.violated() || (theirs && !exchange.problem().empty())) {
      result.failure = incorrect("integrity check failed: " + exchange.problem());
      return false;
    }
    if (!theirs) {
      return false;
    }
    Side& reference = m_sides[0];
    requests::TimeBlock request = block_request(reference, block, calls);
    request.seeds = seeds;
    request.sample_seeds = exchange.sample_seeds();
    request.check_inputs = block == 0;
    const auto ours = time_block(reference, request, {}, result);
    if (!ours) {
      return false;
    }
    if (const auto problem = check_block(block, *theirs, *ours); !problem.empty()) {
      result.failure = incorrect(problem);
      result.timing.spot_checks = {problem};
      return false;
    }
    m_checked_calls += calls;
    return true;
  }

  // The candidate's timed outputs of one block against the reference's for the same inputs.
  std::string check_block(int block, const nlohmann::json& theirs, const nlohmann::json& ours) {
    if (theirs.value("input_fingerprint", nlohmann::json()) !=
        ours.value("input_fingerprint", nlohmann::json())) {
      return fmt::format(
          "integrity check failed: in block {} the candidate's process drew other inputs than "
          "the reference's for the same seed (sums {} against {}): code in it changed how "
          "inputs are drawn (torch's RNG, the problem's get_inputs)",
          block, theirs.value("input_fingerprint", nlohmann::json()).dump(),
          ours.value("input_fingerprint", nlohmann::json()).dump());
    }
    const std::string message =
        check_timed_outputs(block_samples(theirs, samples_file(m_setup.candidate_dir, block)),
                            block_samples(ours, samples_file(m_setup.reference_dir, block)), block,
                            m_checked_calls, {m_settings.atol, m_settings.rtol});
    return message.empty() ? message
                           : "an output produced while timing differs from the reference's "
                             "for the same inputs: " +
                                 message;
  }

  // One block of `side`: its answer, or nothing when its worker failed (result.failure says how).
  std::optional<nlohmann::json> time_block(Side& side, const requests::TimeBlock& request,
                                           const sandbox::InterimHandler& on_interim,
                                           PairedTimingOutcome& result) {
    const auto started = Clock::now();
    const PhaseOutcome outcome =
        run_phase(*side.worker, requests::time_block(request), m_settings.run_timeout, side.role,
                  side.role == WorkerRole::candidate ? "timing ModelNew" : "timing the reference",
                  m_setup.candidate_path, on_interim);
    // Warm-up calls cost the harness what timed ones do: left out, block 0 would seem dearer
    // per call and block 1 would shrink to the floor.
    side.wall_per_call_s = seconds_since(started) / std::max(request.calls + request.warmup, 1);
    if (!outcome.ok) {
      result.failure = outcome;
      return std::nullopt;
    }
    if (!fold(side, parse_block(outcome.body))) {
      // A power-capped GPU recovers within tens of ms once idle (bench/timing_fidelity: 1725
      // MHz after 85 ms of fp16 matmul, 1440 MHz after seconds of it).
      std::this_thread::sleep_for(std::chrono::duration<double>(m_settings.throttle_recovery_s));
    }
    return outcome.body;
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
      } else if (side.target == "eager") {
        m_seen.input_bytes = answer.setup->input_bytes;
        m_output_bytes = answer.setup->output_bytes;
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
      } else {
        side.rule.add(call.device_us);
      }
    }
    return true;
  }

  bool all_fixed_calls_done() const {
    return std::all_of(m_sides.begin(), m_sides.end(), [](const Side& side) { return side.done; });
  }

  // The stopping rule after each block (pipeline/timing_stop.hpp): every side's median, then
  // the speedup, precise enough; or the wall-clock cap.
  bool precise_enough(TimingInfo& timing) {
    std::vector<JudgedSide> judged;
    for (auto& side : m_sides) {
      judged.push_back(
          {&side.rule,
           fmt::format("{} {}", side.role == WorkerRole::candidate ? "candidate" : "reference",
                       side.target)});
    }
    const auto verdict = judge_stop(judged, m_seen.blocks, m_settings.stopping, wall_seconds());
    for (std::size_t i = 0; i < m_sides.size(); ++i) {
      m_sides[i].done = verdict.side_done[i];
      m_sides[i].out.stop_reason = verdict.side_reasons[i];
    }
    if (verdict.stop) {
      timing.stop_reason = verdict.reason;
    }
    return verdict.stop;
  }

  // Every side times the same number of calls per block (the same inputs), sized so that the
  // slower of the eager reference and the candidate measures about kBlockTargetUs and takes
  // about kBlockWallTargetS at most (pipeline/block_sizing.hpp).
  void size_next_block() {
    double slowest = 0, slowest_wall_per_call_s = 0;
    for (std::size_t s = 0; s < 2; ++s) {
      if (!m_sides[s].device_us.empty()) {
        slowest = std::max(slowest, measure::percentile(m_sides[s].device_us, 0.5));
      }
      slowest_wall_per_call_s = std::max(slowest_wall_per_call_s, m_sides[s].wall_per_call_s);
    }
    if (slowest > 0) {
      m_calls_per_block = next_block_calls(slowest, slowest_wall_per_call_s);
    }
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

  void finish(TimingInfo& timing) {
    for (auto& side : m_sides) {
      side.out.samples_us = side.device_us;
      side.out.stats_us = measure::summarize(side.device_us);
      report_median_interval(side.device_us, side.out);
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
    timing.checked_calls = m_checked_calls;
    timing.spot_checks = {fmt::format(
        "every timed call checked: {} calls of the candidate, each on a fresh input set, each "
        "output read at up to {} positions drawn after the call returned and compared with the "
        "reference's on the same inputs: passed",
        m_checked_calls, kSampledElements)};
    timing.reference = m_sides[0].out;
    timing.candidate = m_sides[1].out;
    if (m_sides.size() > 2) {
      timing.reference_compiled = m_sides[2].out;
    } else if (timing.compiled_skipped_reason.empty()) {
      timing.compiled_skipped_reason =
          m_setup.cuda ? "turned off (--no-compile-baseline)" : "GPU evaluations only";
    }
    // From all the samples, as the stopping rule does not judge --iterations runs.
    report_speedups(m_seen.blocks, m_compiled_blocks,
                    measure::median_interval(m_sides[0].device_us),
                    measure::median_interval(m_sides[1].device_us), timing);
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
  int m_calls_per_block = kMinBlockCalls;
  int m_checked_calls = 0;
  std::int64_t m_output_bytes = 0;
};

} // namespace

PairedTimingOutcome run_paired_timing(const TimingSettings& settings,
                                      const PairedTimingSetup& setup) {
  return PairedTiming(settings, setup).run();
}

} // namespace kbench
