#include "pipeline/paired_timing.hpp"

#include "compare/compare_outputs.hpp"
#include "core/json_io.hpp"
#include "core/stopwatch.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/stats.hpp"
#include "measure/stopping_rule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

namespace kbench {
namespace {

// A block should hold about this much measured time: short enough that drift hits R and C
// alike, long enough that the round trip to the worker is small beside it.
constexpr double kBlockTargetUs = 20000;
constexpr int kMinBlockCalls = 10, kMaxBlockCalls = 500;
// A block whose SM clock fell under this share of the default clock is dropped (throttling).
constexpr double kThrottleShare = 0.75;

std::optional<double> optional_number(const nlohmann::json& value) {
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
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
  std::map<std::string, int> kernels_per_call;
  TimingSide out;
  bool done = false;
  int calls_per_block = kMinBlockCalls;
};

class PairedTiming {
public:
  PairedTiming(const EvalOptions& options, const PairedTimingSetup& setup)
      : m_options(options), m_setup(setup) {
    measure::StoppingSettings settings;
    settings.min_samples = static_cast<std::size_t>(options.min_samples);
    settings.max_noise = options.max_noise;
    settings.min_time_s = options.min_time;
    settings.timeout_s = options.timing_timeout;
    m_sides.emplace_back(setup.reference, WorkerRole::reference, "eager", settings);
    m_sides.emplace_back(setup.candidate, WorkerRole::candidate, "eager", settings);
    if (setup.cuda && !options.no_compile_baseline) {
      m_sides.emplace_back(setup.reference, WorkerRole::reference, "compiled", settings);
    }
  }

  PairedTimingOutcome run() {
    PairedTimingOutcome result;
    for (int block = 0;; ++block) {
      std::vector<std::vector<double>> block_samples(m_sides.size());
      for (std::size_t s = 0; s < m_sides.size(); ++s) {
        Side& side = m_sides[s];
        if (!run_block(side, block, block_samples[s], result)) {
          if (side.target == "compiled") {
            // A baseline torch cannot compile is a fact about torch, not the evaluation.
            result.timing.compiled_skipped_reason = result.failure.message;
            m_sides.pop_back();
            block_samples.pop_back();
            continue;
          }
          return result;
        }
      }
      if (!block_samples[0].empty() && !block_samples[1].empty()) {
        m_blocks.push_back({block_samples[0], block_samples[1]});
        if (m_sides.size() > 2 && !block_samples[2].empty()) {
          m_compiled_blocks.push_back({block_samples[2], block_samples[1]});
        }
      }
      const double elapsed = wall_seconds();
      bool all_done = true;
      for (auto& side : m_sides) {
        all_done = all_done && (side.done || elapsed > m_options.timing_timeout);
        if (!side.done && elapsed > m_options.timing_timeout) {
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
    if (const auto decoy = decoy_kernels(result.timing); !decoy.empty()) {
      result.failure.status = Status::incorrect;
      result.failure.message = decoy;
      return result;
    }
    result.ok = true;
    return result;
  }

private:
  nlohmann::json request(const Side& side, int block, int calls) const {
    nlohmann::json r = {{"op", "time_block"},
                        {"block", block},
                        {"calls", calls},
                        {"target", side.target},
                        {"warm", m_options.warm},
                        {"pool_size", m_setup.pool_size},
                        {"warmup", block == 0 ? m_options.warmup : 0},
                        {"memory", block == 0 && side.target == "eager"}};
    if (block == 0 && side.role == WorkerRole::candidate) {
      r["keep_outputs"] = {0};
    }
    return r;
  }

  bool run_block(Side& side, int block, std::vector<double>& kept, PairedTimingOutcome& result) {
    // A side whose rule is met keeps being timed until every side's is: each block must
    // hold R and C together for the paired interval.
    const int fixed = m_options.iterations;
    const int calls = fixed > 0 ? fixed : side.calls_per_block;
    const PhaseOutcome outcome =
        run_phase(*side.worker, request(side, block, calls), m_options.run_timeout, side.role,
                  side.role == WorkerRole::candidate ? "timing ModelNew" : "timing the reference",
                  m_setup.candidate_path);
    if (!outcome.ok) {
      result.failure = outcome;
      return false;
    }
    const auto& body = outcome.body;
    if (body.contains("setup")) {
      const auto& setup = body["setup"];
      side.out.tracing = setup.value("tracing", "");
      side.out.tracing_overhead_us =
          optional_number(setup.value("tracing_overhead_us", nlohmann::json()));
      side.out.default_sm_mhz = optional_number(setup.value("default_sm_mhz", nlohmann::json()));
      side.out.l2_flush = setup.value("l2_flush_bytes", 0) > 0;
      if (side.role == WorkerRole::candidate) {
        m_own_kernels = setup.value("own_kernels", std::vector<std::string>{});
      }
    }
    if (body.contains("memory") && body["memory"].is_object()) {
      const auto& memory = body["memory"];
      if (memory.contains("allocator_peak_bytes")) {
        side.out.peak_memory_bytes = memory["allocator_peak_bytes"].get<std::int64_t>();
      }
      if (memory.contains("raw_allocated_bytes")) {
        side.out.raw_allocated_bytes = memory["raw_allocated_bytes"].get<std::int64_t>();
      }
    }
    if (body.contains("compile_s") && side.target == "compiled" && !side.out.compile_s) {
      side.out.compile_s = optional_number(body["compile_s"]);
      // torch.compile's build (14 s for a ReLU on the H200) is not measurement: left in, it
      // used up the wall-clock cap and every side stopped after one block.
      m_excluded_s += side.out.compile_s.value_or(0);
    }
    if (side.target == "compiled" && side.out.tracing.empty()) {
      // The same process as the eager reference: its setup answer came with that side's block.
      side.out.tracing = m_sides[0].out.tracing;
      side.out.tracing_overhead_us = m_sides[0].out.tracing_overhead_us;
      side.out.default_sm_mhz = m_sides[0].out.default_sm_mhz;
      side.out.l2_flush = m_sides[0].out.l2_flush;
    }
    side.out.method = body.value("method", "");
    side.out.blocks += 1;
    spot_check(body, result.timing);

    const auto host = number_array(body, "host_us");
    const auto device = body.contains("device_us") ? number_array(body, "device_us") : host;
    // Throttling: the block's SM clock, before and after, against the default clock.
    const double low_clock = fold_clock(body, "sm_mhz", side.out.min_sm_mhz, side.out.max_sm_mhz);
    fold_clock(body, "mem_mhz", side.out.min_mem_mhz, side.out.max_mem_mhz);
    for (const auto& reason : body.value("clock_reasons", std::vector<std::string>{})) {
      side.out.clock_reasons.insert(reason);
    }
    if (side.out.default_sm_mhz && low_clock > 0 &&
        low_clock < kThrottleShare * *side.out.default_sm_mhz) {
      side.out.throttled_samples_dropped += device.size();
      // A power-capped GPU recovers within tens of ms once idle (bench/timing_fidelity: 1725
      // MHz after 85 ms of fp16 matmul, 1440 MHz after seconds of it).
      std::this_thread::sleep_for(std::chrono::duration<double>(m_options.throttle_recovery));
      return true;
    }
    const auto calls_facts = body.value("calls", nlohmann::json::array());
    for (std::size_t i = 0; i < device.size(); ++i) {
      if (device[i] < 0 || (i < host.size() && host[i] < 0)) {
        continue;
      }
      side.device_us.push_back(device[i]);
      side.host_us.push_back(i < host.size() ? host[i] : device[i]);
      kept.push_back(device[i]);
      if (i < calls_facts.size()) {
        const auto& facts = calls_facts[i];
        side.launches.push_back(facts.value("kernel_count", 0));
        side.kernel_us.push_back(facts.value("kernel_us", 0.0));
        side.own_us.push_back(facts.value("own_kernel_us", 0.0));
        note_flags(side, facts);
        if (side.kernels_per_call.empty()) {
          side.kernels_per_call = facts.value("kernels_by_name", std::map<std::string, int>{});
        }
      }
      if (fixed > 0) {
        side.done = side.device_us.size() >= static_cast<std::size_t>(fixed);
        side.out.stop_reason = "fixed";
      } else if (!side.done) {
        const auto reason = side.rule.add(device[i], wall_seconds());
        if (reason != measure::StopReason::none) {
          side.done = true;
          // A timeout says which of the rule's conditions were still unmet, whether the side's
          // own rule or the paired loop below saw the cap first.
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

  // Widens the range [low, high] to hold v.
  static void widen(std::optional<double>& low, std::optional<double>& high, double v) {
    low = low ? std::min(*low, v) : v;
    high = high ? std::max(*high, v) : v;
  }

  // Widens [low, high] by the block's readings of one clock; returns the block's lowest (0: none).
  static double fold_clock(const nlohmann::json& body, const char* key, std::optional<double>& low,
                           std::optional<double>& high) {
    double block_low = 0;
    for (const auto& mhz : body.value(key, nlohmann::json::array())) {
      if (mhz.is_number()) {
        const double v = mhz.get<double>();
        block_low = block_low == 0 ? v : std::min(block_low, v);
        widen(low, high, v);
      }
    }
    return block_low;
  }

  // What NVML saw around the blocks of every side, for a sentence about a change of speed.
  std::string clock_facts() const {
    std::optional<double> sm_low, sm_high, mem_low, mem_high;
    std::set<std::string> reasons;
    for (const auto& side : m_sides) {
      for (const auto& v : {side.out.min_sm_mhz, side.out.max_sm_mhz}) {
        if (v) {
          widen(sm_low, sm_high, *v);
        }
      }
      for (const auto& v : {side.out.min_mem_mhz, side.out.max_mem_mhz}) {
        if (v) {
          widen(mem_low, mem_high, *v);
        }
      }
      reasons.insert(side.out.clock_reasons.begin(), side.out.clock_reasons.end());
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

  void note_flags(Side& side, const nlohmann::json& facts) {
    if (side.role != WorkerRole::candidate || side.out.method != "cupti") {
      return;
    }
    if (facts.value("kernel_count", 0) + facts.value("copy_count", 0) +
            facts.value("set_count", 0) ==
        0) {
      ++m_no_work_calls;
    }
    if (facts.value("off_caller_stream", false)) {
      ++m_off_stream_calls;
      m_legacy_stream = m_legacy_stream || facts.value("legacy_stream", false);
      m_off_stream_tail_us = std::max(m_off_stream_tail_us, facts.value("off_stream_tail_us", 0.0));
    }
  }

  // The candidate's timed outputs against the reference's outputs for the same input set.
  void spot_check(const nlohmann::json& body, TimingInfo& timing) {
    for (const auto& kept : body.value("kept_outputs", nlohmann::json::array())) {
      const int pool_index = kept.value("pool_index", 0);
      const auto reference =
          m_setup.pool_size > 0
              ? m_setup.reference_dir / fmt::format("pool_{}.outputs.safetensors", pool_index)
              : m_setup.reference_dir / "trial_0.outputs.safetensors";
      const auto comparison = compare::compare_output_files(kept.value("file", ""), reference,
                                                            {m_options.atol, m_options.rtol});
      timing.spot_checks.push_back(fmt::format("timed call {} (input set {}): {}",
                                               kept.value("call", 0), pool_index,
                                               comparison.passed ? "passed" : comparison.failure));
      if (!comparison.passed) {
        m_spot_failure = fmt::format("an output produced while timing differs from the "
                                     "reference's for the same inputs (input set {}): {}",
                                     pool_index, comparison.failure);
      }
    }
  }

  bool spot_check_last_call(PairedTimingOutcome& result) {
    Side& candidate = m_sides[1];
    nlohmann::json r = request(candidate, 1, 1);
    r["keep_outputs"] = {0};
    r["memory"] = false;
    const PhaseOutcome outcome =
        run_phase(*candidate.worker, r, m_options.run_timeout, WorkerRole::candidate,
                  "timing ModelNew", m_setup.candidate_path);
    if (!outcome.ok) {
      result.failure = outcome;
      return false;
    }
    spot_check(outcome.body, result.timing);
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
    if (const auto estimate = measure::paired_speedup(m_blocks)) {
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
    add_flags(timing);
  }

  // A candidate that declares kernels of its own and never runs them in timed calls did its
  // work with torch's or a library's kernels (hacking.md: decoy kernels).
  std::string decoy_kernels(const TimingInfo& timing) const {
    const auto& cand = *timing.candidate;
    if (m_own_kernels.empty() || cand.method != "cupti" || !cand.own_kernel_share ||
        *cand.own_kernel_share > 0) {
      return {};
    }
    std::string names;
    for (const auto& name : m_own_kernels) {
      names += (names.empty() ? "" : ", ") + name;
    }
    return fmt::format("integrity check failed: the candidate's own kernels ({}) never ran in "
                       "{} timed calls; all of its GPU time was in other kernels (torch's or a "
                       "library's)",
                       names, cand.stats_us.n);
  }

  void add_flags(TimingInfo& timing) {
    const auto& cand = *timing.candidate;
    const std::size_t n = m_sides[1].device_us.size();
    // A sustained tensor-core load can hold the H200 under its power cap at 1440 MHz, below the
    // 75 % line (measured by bench/timing_fidelity): the dropped blocks must be visible.
    for (const auto& side : m_sides) {
      if (side.out.throttled_samples_dropped == 0) {
        continue;
      }
      const std::string who = side.target == "compiled"            ? "the torch.compile baseline"
                              : side.role == WorkerRole::candidate ? "the candidate"
                                                                   : "the reference";
      timing.flags.push_back(
          {"throttled",
           fmt::format("{} of {}'s samples were taken below {:.0f} % of the default SM clock "
                       "({:.0f} MHz) and dropped ({}){}",
                       side.out.throttled_samples_dropped, who, kThrottleShare * 100,
                       side.out.default_sm_mhz.value_or(0), clock_facts(),
                       side.device_us.empty() ? "; none was left, so no time is reported for it"
                                              : "")});
    }
    if (m_no_work_calls > 0) {
      timing.flags.push_back(
          {"no_gpu_work",
           fmt::format("{} of {} timed calls of the candidate caused no GPU work (no kernel, copy "
                       "or set): its result was computed elsewhere or earlier",
                       m_no_work_calls, n)});
    }
    if (m_off_stream_calls > 0) {
      timing.flags.push_back(
          {"off_stream_work",
           fmt::format("in {} of {} timed calls the candidate ran GPU work on {} (up to {:.1f} µs "
                       "after the caller's stream finished): event timing on the caller's stream "
                       "would miss it; the device time here includes it",
                       m_off_stream_calls, n,
                       m_legacy_stream ? "the legacy default stream"
                                       : "a stream other than the caller's",
                       m_off_stream_tail_us)});
    }
    if (const auto& bandwidth = m_setup.peak_bandwidth_bytes_per_s;
        bandwidth && m_setup.input_bytes > 0 && cand.stats_us.n > 0) {
      const double floor_us = static_cast<double>(m_setup.input_bytes) / *bandwidth * 1e6;
      if (cand.stats_us.median < floor_us) {
        timing.flags.push_back(
            {"below_roofline_floor",
             fmt::format("the candidate's median {:.2f} µs is below the time needed just to read "
                         "its inputs once ({} bytes at {:.0f} GB/s = {:.2f} µs): it cannot have "
                         "read them all",
                         cand.stats_us.median, m_setup.input_bytes, *bandwidth / 1e9, floor_us)});
      }
    }
    // A step in speed during timing (seen once on the H200: both sides 1.7x slower for part of
    // the run, SM clock unchanged) makes the ratio of medians wrong; block medians show it.
    constexpr double kUnstableSpread = 1.10;
    if (const auto spread = measure::block_spread(m_blocks);
        m_setup.cuda && spread && spread->worst_ratio > kUnstableSpread) {
      timing.flags.push_back(
          {"unstable_timing",
           fmt::format("the GPU's speed changed during timing: per-block medians ranged "
                       "{:.2f}-{:.2f} µs (reference) and {:.2f}-{:.2f} µs (candidate), a {:.2f}x "
                       "spread ({}): the speedup is unreliable; evaluate again",
                       spread->reference_low, spread->reference_high, spread->candidate_low,
                       spread->candidate_high, spread->worst_ratio, clock_facts())});
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

  const EvalOptions& m_options;
  const PairedTimingSetup& m_setup;
  std::vector<Side> m_sides;
  std::vector<measure::PairedBlock> m_blocks, m_compiled_blocks;
  Clock::time_point m_start = Clock::now();
  double m_excluded_s = 0; // torch.compile's build, not counted against the wall-clock cap
  std::size_t m_no_work_calls = 0, m_off_stream_calls = 0;
  bool m_legacy_stream = false;
  double m_off_stream_tail_us = 0;
  std::string m_spot_failure;
  std::vector<std::string> m_own_kernels;
};

} // namespace

PairedTimingOutcome run_paired_timing(const EvalOptions& options, const PairedTimingSetup& setup) {
  return PairedTiming(options, setup).run();
}

} // namespace kbench
