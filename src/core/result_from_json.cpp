// Reading a `kbench.eval/1` document back into an EvalResult (kbench report, a store). It mirrors
// result.cpp's writers one for one, in the same order, so that writing what was read gives the
// same document; tests/unit/test_result_schema.cpp checks that with every field filled.
#include "core/result.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace kbench {
namespace {

using Reader = JsonObjectReader;

// The writer stores noise as a percentage. p / 100 * 100 gives p back for every value tried, but
// that is not a theorem, so step to a neighbour when it does not and the document stays the same.
double noise_from_percent(double percent) {
  const double noise = percent / 100.0;
  for (double candidate : {noise, std::nextafter(noise, -std::numeric_limits<double>::infinity()),
                           std::nextafter(noise, std::numeric_limits<double>::infinity())}) {
    if (candidate * 100.0 == percent) {
      return candidate;
    }
  }
  return noise;
}

SampleStats read_stats(const Reader& in) {
  SampleStats s;
  in.read("n", s.n);
  in.read("median_us", s.median);
  in.read("mean_us", s.mean);
  in.read("std_us", s.std);
  in.read("min_us", s.min);
  in.read("max_us", s.max);
  in.read("p10_us", s.p10);
  in.read("p90_us", s.p90);
  double percent = 0;
  in.read("noise_pct", percent);
  s.noise = noise_from_percent(percent);
  return s;
}

SampleStats read_stats_field(const Reader& in, const char* key) {
  const auto stats = in.object(key);
  return stats ? read_stats(*stats) : SampleStats{};
}

std::optional<Interval> read_interval(const Reader& in, const char* key) {
  const auto interval = in.object(key);
  if (!interval) {
    return std::nullopt;
  }
  Interval out;
  interval->read("low", out.low);
  interval->read("high", out.high);
  return out;
}

TimingSide read_timing_side(const Reader& in) {
  TimingSide side;
  in.read("method", side.method);
  in.read("l2_flush", side.l2_flush);
  side.stats_us = read_stats_field(in, "stats");
  side.host_stats_us = read_stats_field(in, "host_stats");
  side.median_ci_us = read_interval(in, "median_ci95_us");
  in.read("resolution_us", side.resolution_us);
  in.read("at_resolution", side.at_resolution);
  in.read("stop_reason", side.stop_reason);
  in.read("tracing", side.tracing);
  in.read("tracing_overhead_us", side.tracing_overhead_us);
  in.read("blocks", side.blocks);
  in.read("throttled_samples_dropped", side.throttled_samples_dropped);
  if (const auto sm = in.object("sm_clock_mhz")) {
    sm->read("min", side.min_sm_mhz);
    sm->read("max", side.max_sm_mhz);
    sm->read("default", side.default_sm_mhz);
  }
  if (const auto mem = in.object("mem_clock_mhz")) {
    mem->read("min", side.min_mem_mhz);
    mem->read("max", side.max_mem_mhz);
  }
  in.read("clock_reasons", side.clock_reasons);
  in.read("launches_per_call", side.launches_per_call);
  in.read("kernels_per_call", side.kernels_per_call);
  in.read("own_kernel_share", side.own_kernel_share);
  in.read("peak_memory_bytes", side.peak_memory_bytes);
  in.read("raw_allocated_bytes", side.raw_allocated_bytes);
  in.read("compile_s", side.compile_s);
  in.read("samples_us", side.samples_us);
  for (const auto& [value, path] : in.elements("per_rank")) {
    side.per_rank_us.push_back(read_stats(Reader(*value, path, NullNumbers::nan)));
  }
  return side;
}

std::optional<TimingSide> read_optional_side(const Reader& in, const char* key) {
  const auto side = in.object(key);
  return side ? std::optional(read_timing_side(*side)) : std::nullopt;
}

TimingInfo read_timing(const Reader& in) {
  TimingInfo t;
  in.read("measured", t.measured);
  in.read("skipped_reason", t.skipped_reason);
  t.reference = read_optional_side(in, "reference");
  t.candidate = read_optional_side(in, "candidate");
  t.reference_compiled = read_optional_side(in, "reference_compiled");
  in.read("compiled_skipped_reason", t.compiled_skipped_reason);
  in.read("speedup", t.speedup);
  t.speedup_ci = read_interval(in, "speedup_ci95");
  in.read("speedup_resolution", t.speedup_resolution);
  in.read("speedup_ci_at_resolution", t.speedup_ci_at_resolution);
  in.read("stop_reason", t.stop_reason);
  in.read("speedup_scored", t.speedup_scored);
  in.read("unscored_reason", t.unscored_reason);
  in.read("speedup_vs_compiled", t.speedup_vs_compiled);
  t.speedup_vs_compiled_ci = read_interval(in, "speedup_vs_compiled_ci95");
  in.read("memory_ratio", t.memory_ratio);
  in.read("fusion_ratio", t.fusion_ratio);
  in.read("spot_checks", t.spot_checks);
  in.read("checked_calls", t.checked_calls);
  in.read("wall_s", t.wall_s);
  in.read("started_at_unix_s", t.started_at_unix_s);
  in.read("ended_at_unix_s", t.ended_at_unix_s);
  for (const auto& [value, path] : in.elements("flags")) {
    const Reader flag(*value, path, NullNumbers::nan);
    TimingFlag out;
    flag.read("id", out.id);
    flag.read("message", out.message);
    t.flags.push_back(std::move(out));
  }
  return t;
}

CountersSide read_counters_side(const Reader& in) {
  CountersSide side;
  in.read("collected", side.collected);
  in.read("wall_s", side.wall_s);
  in.read("kernel_count", side.kernels);
  in.read("reason", side.reason);
  if (side.collected) {
    side.call = nlohmann::json::object();
    for (const char* key : {"kernels", "call"}) {
      if (const nlohmann::json* value = in.find(key)) {
        side.call[key] = *value;
      }
    }
  }
  return side;
}

EnergySide read_energy(const Reader& in) {
  EnergySide side;
  in.read("joules_per_call", side.joules_per_call);
  in.read("watts", side.watts);
  in.read("calls", side.calls);
  in.read("seconds", side.seconds);
  in.read("reason", side.reason);
  return side;
}

CountersInfo read_counters(const Reader& in) {
  CountersInfo c;
  in.read("profile", c.profile);
  in.read("skipped_reason", c.skipped_reason);
  in.read("tool", c.tool);
  in.read("gpu", c.gpu);
  if (const auto side = in.object("candidate")) {
    c.candidate = read_counters_side(*side);
  }
  if (const auto side = in.object("reference")) {
    c.reference = read_counters_side(*side);
  }
  in.read("sol_score", c.sol_score);
  in.read("physical_limit_fraction", c.physical_limit_fraction);
  in.read("physical_limit_detail", c.physical_limit_detail);
  in.read("roofline_svg", c.roofline_svg);
  in.read("wall_s", c.wall_s);
  if (const auto energy = in.object("energy")) {
    if (const auto side = energy->object("candidate")) {
      c.candidate_energy = read_energy(*side);
    }
    if (const auto side = energy->object("reference")) {
      c.reference_energy = read_energy(*side);
    }
    energy->read("ratio", c.energy_ratio);
  }
  return c;
}

OutputComparison read_comparison(const Reader& in) {
  OutputComparison output;
  auto& c = output.comparison;
  in.read("name", output.name);
  in.read("passed", c.passed);
  in.read("failure", c.failure);
  in.read("atol", c.tolerance.atol);
  in.read("rtol", c.tolerance.rtol);
  in.read("numel", c.numel);
  in.read("mismatched_elements", c.mismatches);
  in.read("max_abs_err", c.max_abs_err);
  in.read("mean_abs_err", c.mean_abs_err);
  in.read("max_rel_err", c.max_rel_err);
  in.read("mean_rel_err", c.mean_rel_err);
  // Non-finite pairs are left out of these figures, so the only non-finite value the comparator
  // writes (as null) is an overflow of |c - r| to infinity. Reading it back as infinity, not NaN,
  // keeps correctness's figures, recomputed from these, null as the writer had them.
  for (double* figure : {&c.max_abs_err, &c.mean_abs_err, &c.max_rel_err, &c.mean_rel_err}) {
    if (std::isnan(*figure)) {
      *figure = std::numeric_limits<double>::infinity();
    }
  }
  for (const auto& [value, path] : in.elements("first_mismatches")) {
    const Reader mismatch(*value, path, NullNumbers::nan);
    Mismatch m;
    mismatch.read("index", m.index);
    mismatch.read("candidate", m.candidate);
    mismatch.read("reference", m.reference);
    c.first_mismatches.push_back(std::move(m));
  }
  return output;
}

TrialResult read_trial(const Reader& in) {
  TrialResult trial;
  in.read("index", trial.index);
  in.read("seed", trial.seed);
  in.read("held_out", trial.held_out);
  in.read("input_shapes", trial.input_shapes);
  in.read("passed", trial.passed);
  in.read("failure", trial.failure);
  for (const auto& [value, path] : in.elements("outputs")) {
    trial.outputs.push_back(read_comparison(Reader(*value, path, NullNumbers::nan)));
  }
  return trial;
}

// Each element of the array field `key` read by `read_one`, in order.
template <typename T, typename F>
std::vector<T> read_each(const Reader& in, const char* key, F read_one) {
  std::vector<T> out;
  for (const auto& [value, path] : in.elements(key)) {
    out.push_back(read_one(Reader(*value, path, NullNumbers::nan)));
  }
  return out;
}

EvalResult read_result(const Reader& in) {
  EvalResult r;
  if (const nlohmann::json* value = in.find("schema"); value == nullptr || *value != kEvalSchema) {
    throw_field_error("schema", std::string("\"") + kEvalSchema + "\"",
                      value ? *value : nlohmann::json(nullptr));
  }
  in.read("kbench_version", r.kbench_version);
  if (const nlohmann::json* value = in.find("status")) {
    const auto status =
        value->is_string() ? status_from_name(value->get<std::string>()) : std::nullopt;
    if (!status) {
      std::string names;
      for (Status s : all_statuses()) {
        names += (names.empty() ? "" : ", ") + std::string(status_name(s));
      }
      throw_field_error("status", "one of " + names, *value);
    }
    r.status = *status;
  }
  in.read("message", r.message);
  in.read("log", r.log);
  in.read("started_at", r.started_at);
  in.read("wall_s", r.wall_s);
  if (const auto problem = in.object("problem")) {
    problem->read("path", r.problem_path);
    problem->read("sha256", r.problem_sha256);
  }
  if (const auto candidate = in.object("candidate")) {
    candidate->read("path", r.candidate_path);
    candidate->read("sha256", r.candidate_sha256);
  }
  r.forward_seed.clear(); // absent: written before kbench seeded each forward
  if (const auto config = in.object("config")) {
    config->read("device", r.device);
    config->read("device_name", r.device_name);
    config->read("gpu_sharing", r.gpu_sharing);
    config->read("variant", r.variant);
    config->read("precision", r.precision);
    config->read("world_size", r.world_size);
    config->read("seed", r.seed);
    config->read("forward_seed", r.forward_seed);
    config->read("trials", r.trials_requested);
    config->read("atol_override", r.atol_override);
    config->read("rtol_override", r.rtol_override);
  }
  if (const auto environment = in.object("environment")) {
    environment->read("python", r.python);
    environment->read("torch", r.torch_version);
  }
  in.read("warnings", r.warnings);
  r.static_check = read_each<StaticVerdict>(in, "static_check", [](const Reader& v) {
    StaticVerdict out;
    v.read("rule", out.rule);
    v.read("severity", out.severity);
    v.read("message", out.message);
    v.read("line", out.line);
    return out;
  });
  if (const auto compile = in.object("compile")) {
    compile->read("ran", r.compile.ran);
    compile->read("cached", r.compile.cached);
    compile->read("seconds", r.compile.seconds);
    compile->read("extensions_dir", r.compile.extensions_dir);
    compile->read("first_error", r.compile.first_error);
    compile->read("pch", r.compile.pch);
    compile->read("cuda_header", r.compile.cuda_header);
    compile->read("binding_header", r.compile.binding_header);
    compile->read("aten_header", r.compile.aten_header);
    compile->read("log", r.compile.log);
  }
  if (const auto correctness = in.object("correctness")) {
    r.trials = read_each<TrialResult>(*correctness, "trials", read_trial);
  }
  if (const auto timing = in.object("timing")) {
    r.timing = read_timing(*timing);
  }
  if (const auto counters = in.object("counters")) {
    r.counters = read_counters(*counters);
  }
  r.phases = read_each<PhaseRecord>(in, "phases", [](const Reader& p) {
    PhaseRecord out;
    p.read("phase", out.phase);
    p.read("wall_s", out.wall_s);
    p.read("started_at_s", out.started_at_s);
    p.read("exit", out.exit);
    p.read("started", out.started);
    out.requests = read_each<PhaseRequests>(p, "requests", [](const Reader& q) {
      PhaseRequests request;
      q.read("op", request.op);
      q.read("count", request.count);
      q.read("first_at_s", request.first_at_s);
      q.read("seconds", request.seconds);
      return request;
    });
    p.read("stdout", out.stdout_text);
    p.read("stderr", out.stderr_text);
    return out;
  });
  r.sandbox = read_each<SandboxProtection>(in, "sandbox", [](const Reader& p) {
    SandboxProtection out;
    p.read("protection", out.protection);
    p.read("active", out.active);
    p.read("detail", out.detail);
    return out;
  });
  if (const auto cache = in.object("reference_cache")) {
    cache->read("used", r.reference_cache.used);
    cache->read("off_reason", r.reference_cache.off_reason);
    cache->read("key", r.reference_cache.key);
    cache->read("outputs", r.reference_cache.outputs);
    cache->read("outputs_from", r.reference_cache.outputs_from);
    cache->read("compiled_ratio", r.reference_cache.compiled_ratio);
    cache->read("compiled_over_eager", r.reference_cache.compiled_over_eager);
    cache->read("compiled_ratio_from", r.reference_cache.compiled_ratio_from);
    cache->read("inductor_dir", r.reference_cache.inductor_dir);
  }
  return r;
}

} // namespace

Decoded<EvalResult> result_from_json(const nlohmann::json& document) {
  try {
    if (!document.is_object()) {
      throw_field_error("document", "an object (a kbench.eval/1 result)", document);
    }
    return {read_result(Reader(document, "", NullNumbers::nan)), ""};
  } catch (const JsonFieldError& error) {
    return {std::nullopt, error.what()};
  }
}

} // namespace kbench
