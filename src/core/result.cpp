#include "core/result.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace kbench {
namespace {

constexpr std::array<std::pair<Status, const char*>, 10> kStatusNames = {{
    {Status::ok, "ok"},
    {Status::incorrect, "incorrect"},
    {Status::impossible_timing, "impossible_timing"},
    {Status::static_rejected, "static_rejected"},
    {Status::compile_error, "compile_error"},
    {Status::runtime_error, "runtime_error"},
    {Status::timeout, "timeout"},
    {Status::crashed, "crashed"},
    {Status::harness_error, "harness_error"},
    {Status::unsupported, "unsupported"},
}};

// JSON has no NaN or infinity: such values are written as null, never as a made-up number.
nlohmann::json number(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

nlohmann::json stats_json(const SampleStats& s) {
  return {{"n", s.n},
          {"median_us", number(s.median)},
          {"mean_us", number(s.mean)},
          {"std_us", number(s.std)},
          {"min_us", number(s.min)},
          {"max_us", number(s.max)},
          {"p10_us", number(s.p10)},
          {"p90_us", number(s.p90)},
          {"noise_pct", number(s.noise * 100.0)}};
}

template <typename T>
nlohmann::json maybe(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json counters_side_json(const CountersSide& side) {
  nlohmann::json out = {{"collected", side.collected}, {"wall_s", side.wall_s}};
  if (side.collected) {
    out["kernel_count"] = side.kernels;
    out["kernels"] = side.call.value("kernels", nlohmann::json::array());
    out["call"] = side.call.value("call", nlohmann::json::object());
  } else {
    out["reason"] = side.reason;
  }
  return out;
}

nlohmann::json energy_json(const EnergySide& side) {
  nlohmann::json out = {{"joules_per_call", maybe(side.joules_per_call)},
                        {"watts", maybe(side.watts)},
                        {"calls", side.calls},
                        {"seconds", side.seconds}};
  if (!side.joules_per_call) {
    out["reason"] = side.reason;
  }
  return out;
}

nlohmann::json counters_json(const CountersInfo& c) {
  return {{"profile", c.profile},
          {"skipped_reason", c.skipped_reason},
          {"tool", c.tool},
          {"gpu", c.gpu},
          {"candidate", counters_side_json(c.candidate)},
          {"reference", counters_side_json(c.reference)},
          {"sol_score", maybe(c.sol_score)},
          {"physical_limit_fraction", maybe(c.physical_limit_fraction)},
          {"physical_limit_detail", c.physical_limit_detail},
          {"roofline_svg", c.roofline_svg},
          {"wall_s", c.wall_s},
          {"energy",
           {{"candidate", energy_json(c.candidate_energy)},
            {"reference", energy_json(c.reference_energy)},
            {"ratio", maybe(c.energy_ratio)}}}};
}

nlohmann::json interval_json(const std::optional<Interval>& interval) {
  return interval ? nlohmann::json{{"low", interval->low}, {"high", interval->high}}
                  : nlohmann::json(nullptr);
}

nlohmann::json timing_side_json(const TimingSide& side) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& stats : side.per_rank_us) {
    ranks.push_back(stats_json(stats));
  }
  return {{"method", side.method},
          {"l2_flush", side.l2_flush},
          {"stats", stats_json(side.stats_us)},
          {"host_stats", stats_json(side.host_stats_us)},
          {"median_ci95_us", interval_json(side.median_ci_us)},
          {"resolution_us", maybe(side.resolution_us)},
          {"at_resolution", side.at_resolution},
          {"stop_reason", side.stop_reason},
          {"tracing", side.tracing},
          {"tracing_overhead_us", maybe(side.tracing_overhead_us)},
          {"blocks", side.blocks},
          {"throttled_samples_dropped", side.throttled_samples_dropped},
          {"sm_clock_mhz",
           {{"min", maybe(side.min_sm_mhz)},
            {"max", maybe(side.max_sm_mhz)},
            {"default", maybe(side.default_sm_mhz)}}},
          {"mem_clock_mhz", {{"min", maybe(side.min_mem_mhz)}, {"max", maybe(side.max_mem_mhz)}}},
          {"clock_reasons", side.clock_reasons},
          {"launches_per_call", maybe(side.launches_per_call)},
          {"kernels_per_call", side.kernels_per_call},
          {"own_kernel_share", maybe(side.own_kernel_share)},
          {"peak_memory_bytes", maybe(side.peak_memory_bytes)},
          {"raw_allocated_bytes", maybe(side.raw_allocated_bytes)},
          {"compile_s", maybe(side.compile_s)},
          {"samples_us", side.samples_us},
          {"per_rank", ranks}};
}

nlohmann::json comparison_json(const OutputComparison& output) {
  const auto& c = output.comparison;
  nlohmann::json mismatches = nlohmann::json::array();
  for (const auto& m : c.first_mismatches) {
    mismatches.push_back({{"index", m.index},
                          {"candidate", number(m.candidate)},
                          {"reference", number(m.reference)}});
  }
  return {{"name", output.name},
          {"passed", c.passed},
          {"failure", c.failure},
          {"atol", c.tolerance.atol},
          {"rtol", c.tolerance.rtol},
          {"numel", c.numel},
          {"mismatched_elements", c.mismatches},
          {"max_abs_err", number(c.max_abs_err)},
          {"mean_abs_err", number(c.mean_abs_err)},
          {"max_rel_err", number(c.max_rel_err)},
          {"mean_rel_err", number(c.mean_rel_err)},
          {"first_mismatches", mismatches}};
}

nlohmann::json correctness_summary(const EvalResult& r) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& trial : r.trials) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& output : trial.outputs) {
      outputs.push_back(comparison_json(output));
    }
    trials.push_back({{"index", trial.index},
                      {"seed", trial.seed},
                      {"held_out", trial.held_out},
                      {"input_shapes", trial.input_shapes},
                      {"passed", trial.passed},
                      {"failure", trial.failure},
                      {"outputs", outputs}});
  }
  const auto errors = r.error_summary();
  auto figure = [&](double ErrorSummary::*field) {
    return errors ? number((*errors).*field) : nlohmann::json(nullptr);
  };
  return {{"trials_requested", r.trials_requested},
          {"trials_run", r.trials.size()},
          {"trials_passed", r.trials_passed()},
          {"max_abs_err", figure(&ErrorSummary::max_abs)},
          {"mean_abs_err", figure(&ErrorSummary::mean_abs)},
          {"max_rel_err", figure(&ErrorSummary::max_rel)},
          {"mean_rel_err", figure(&ErrorSummary::mean_rel)},
          {"trials", trials}};
}

} // namespace

const char* status_name(Status status) {
  for (const auto& [value, name] : kStatusNames) {
    if (value == status) {
      return name;
    }
  }
  return "harness_error";
}

std::optional<Status> status_from_name(const std::string& name) {
  for (const auto& [value, text] : kStatusNames) {
    if (name == text) {
      return value;
    }
  }
  return std::nullopt;
}

const std::vector<Status>& all_statuses() {
  static const std::vector<Status> statuses = [] {
    std::vector<Status> out;
    for (const auto& entry : kStatusNames) {
      out.push_back(entry.first);
    }
    return out;
  }();
  return statuses;
}

int EvalResult::trials_passed() const {
  return static_cast<int>(
      std::count_if(trials.begin(), trials.end(), [](const TrialResult& t) { return t.passed; }));
}

std::optional<ErrorSummary> EvalResult::error_summary() const {
  ErrorSummary e;
  bool any = false;
  for (const auto& trial : trials) {
    for (const auto& output : trial.outputs) {
      const auto& c = output.comparison;
      if (c.numel == 0) {
        continue; // failed before any element was compared (shape, dtype, count)
      }
      any = true;
      e.max_abs = std::max(e.max_abs, c.max_abs_err);
      e.max_rel = std::max(e.max_rel, c.max_rel_err);
      e.mean_abs += c.mean_abs_err * static_cast<double>(c.numel);
      e.mean_rel += c.mean_rel_err * static_cast<double>(c.numel);
      e.elements += c.numel;
    }
  }
  if (!any) {
    return std::nullopt;
  }
  e.mean_abs /= static_cast<double>(e.elements);
  e.mean_rel /= static_cast<double>(e.elements);
  return e;
}

nlohmann::json to_json(const EvalResult& r) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : r.static_check) {
    verdicts.push_back({{"rule", v.rule},
                        {"severity", v.severity},
                        {"message", v.message},
                        {"line", v.line ? nlohmann::json(*v.line) : nlohmann::json(nullptr)}});
  }
  nlohmann::json timing = {{"measured", r.timing.measured},
                           {"skipped_reason", r.timing.skipped_reason}};
  timing["reference"] = r.timing.reference ? timing_side_json(*r.timing.reference) : nullptr;
  timing["candidate"] = r.timing.candidate ? timing_side_json(*r.timing.candidate) : nullptr;
  timing["reference_compiled"] =
      r.timing.reference_compiled ? timing_side_json(*r.timing.reference_compiled) : nullptr;
  timing["compiled_skipped_reason"] = r.timing.compiled_skipped_reason;
  timing["speedup"] = r.timing.speedup ? number(*r.timing.speedup) : nlohmann::json(nullptr);
  timing["speedup_ci95"] = interval_json(r.timing.speedup_ci);
  timing["speedup_resolution"] = maybe(r.timing.speedup_resolution);
  timing["speedup_ci_at_resolution"] = r.timing.speedup_ci_at_resolution;
  timing["stop_reason"] = r.timing.stop_reason;
  timing["speedup_scored"] = r.timing.speedup_scored;
  timing["unscored_reason"] = r.timing.unscored_reason;
  timing["speedup_vs_compiled"] = maybe(r.timing.speedup_vs_compiled);
  timing["speedup_vs_compiled_ci95"] = interval_json(r.timing.speedup_vs_compiled_ci);
  timing["memory_ratio"] = maybe(r.timing.memory_ratio);
  timing["fusion_ratio"] = maybe(r.timing.fusion_ratio);
  timing["spot_checks"] = r.timing.spot_checks;
  timing["checked_calls"] = r.timing.checked_calls;
  timing["wall_s"] = maybe(r.timing.wall_s);
  timing["started_at_unix_s"] = maybe(r.timing.started_at_unix_s);
  timing["ended_at_unix_s"] = maybe(r.timing.ended_at_unix_s);
  nlohmann::json flags = nlohmann::json::array();
  for (const auto& flag : r.timing.flags) {
    flags.push_back({{"id", flag.id}, {"message", flag.message}});
  }
  timing["flags"] = flags;

  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : r.phases) {
    nlohmann::json phase = {
        {"phase", p.phase},       {"wall_s", p.wall_s},   {"started_at_s", p.started_at_s},
        {"exit", p.exit},         {"started", p.started}, {"stdout", p.stdout_text},
        {"stderr", p.stderr_text}};
    // Absent rather than empty: documents written before the field read back unchanged.
    for (const auto& q : p.requests) {
      phase["requests"].push_back(
          {{"op", q.op}, {"count", q.count}, {"first_at_s", q.first_at_s}, {"seconds", q.seconds}});
    }
    phases.push_back(std::move(phase));
  }
  nlohmann::json sandbox = nlohmann::json::array();
  for (const auto& p : r.sandbox) {
    sandbox.push_back({{"protection", p.protection}, {"active", p.active}, {"detail", p.detail}});
  }
  auto optional_number = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  nlohmann::json document = {
      {"schema", kEvalSchema},
      {"kbench_version", r.kbench_version},
      {"status", status_name(r.status)},
      {"message", r.message},
      {"log", r.log},
      {"started_at", r.started_at},
      {"wall_s", r.wall_s},
      {"problem", {{"path", r.problem_path}, {"sha256", r.problem_sha256}}},
      {"candidate", {{"path", r.candidate_path}, {"sha256", r.candidate_sha256}}},
      {"config",
       {{"device", r.device},
        {"device_name", r.device_name},
        {"variant", r.variant},
        {"precision", r.precision},
        {"world_size", r.world_size},
        {"seed", r.seed},
        {"forward_seed", r.forward_seed},
        {"trials", r.trials_requested},
        {"atol_override", optional_number(r.atol_override)},
        {"rtol_override", optional_number(r.rtol_override)}}},
      {"environment", {{"python", r.python}, {"torch", r.torch_version}}},
      {"warnings", r.warnings},
      {"static_check", verdicts},
      {"compile",
       {{"ran", r.compile.ran},
        {"cached", r.compile.cached},
        {"seconds", r.compile.seconds},
        {"extensions_dir", r.compile.extensions_dir},
        {"first_error", r.compile.first_error},
        {"pch", r.compile.pch},
        {"cuda_header", r.compile.cuda_header},
        {"binding_header", r.compile.binding_header},
        {"aten_header", r.compile.aten_header},
        {"log", r.compile.log}}},
      {"correctness", correctness_summary(r)},
      {"timing", timing},
      {"counters", r.counters ? counters_json(*r.counters) : nlohmann::json(nullptr)},
      {"phases", phases},
      {"sandbox", sandbox},
      {"reference_cache",
       {{"used", r.reference_cache.used},
        {"off_reason", r.reference_cache.off_reason},
        {"key", r.reference_cache.key},
        {"outputs", r.reference_cache.outputs},
        {"outputs_from", r.reference_cache.outputs_from},
        {"compiled_ratio", r.reference_cache.compiled_ratio},
        {"compiled_over_eager", optional_number(r.reference_cache.compiled_over_eager)},
        {"compiled_ratio_from", r.reference_cache.compiled_ratio_from},
        {"inductor_dir", r.reference_cache.inductor_dir}}},
  };
  // Absent rather than empty: most evaluations have their GPU to themselves.
  if (!r.gpu_sharing.empty()) {
    document["config"]["gpu_sharing"] = r.gpu_sharing;
  }
  return document;
}

} // namespace kbench
