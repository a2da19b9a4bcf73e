#include "report/summary.hpp"

#include "report/counters_summary.hpp"
#include "report/summary_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kbench::report {

std::string format_duration_us(double us) {
  if (!std::isfinite(us)) {
    return "n/a";
  }
  if (us >= 1e6) {
    return fmt::format("{:.3f} s", us / 1e6);
  }
  if (us >= 1e4) {
    return fmt::format("{:.2f} ms", us / 1e3);
  }
  if (us >= 100) {
    return fmt::format("{:.1f} µs", us);
  }
  return fmt::format("{:.2f} µs", us);
}

namespace {

std::string timing_line(const TimingSide& side) {
  const auto& s = side.stats_us;
  const std::string interval =
      side.median_ci_us ? fmt::format(" [{}, {}]{}", format_duration_us(side.median_ci_us->low),
                                      format_duration_us(side.median_ci_us->high),
                                      side.at_resolution && side.resolution_us
                                          ? fmt::format(" at the timer's {} step",
                                                        format_duration_us(*side.resolution_us))
                                          : "")
                        : "";
  std::string text = fmt::format("median {}{} (p10 {}, p90 {}, noise {:.1f} %, n {}, {}{}",
                                 format_duration_us(s.median), interval, format_duration_us(s.p10),
                                 format_duration_us(s.p90), s.noise * 100.0, s.n, side.method,
                                 side.l2_flush ? ", L2 flushed" : "");
  if (side.host_stats_us.n > 0 && side.method != "perf_counter") {
    text += fmt::format("; host {}", format_duration_us(side.host_stats_us.median));
  }
  if (!side.stop_reason.empty()) {
    text += "; stopped: " + side.stop_reason;
  }
  return text + ")";
}

std::string speedup_text(double speedup, const std::optional<Interval>& ci) {
  return ci ? fmt::format("{:.2f}x [{:.2f}, {:.2f}]", speedup, ci->low, ci->high)
            : fmt::format("{:.2f}x", speedup);
}

// Each rank's own median, after the overall span: a slow rank shows up here.
std::string per_rank_line(const TimingSide& side) {
  std::string text;
  for (std::size_t rank = 0; rank < side.per_rank_us.size(); ++rank) {
    text += fmt::format("{}rank {} {}", rank ? ", " : "", rank,
                        format_duration_us(side.per_rank_us[rank].median));
  }
  return text;
}

} // namespace

std::string format_summary(const EvalResult& r) {
  std::string out;
  auto line = [&](const char* label, const std::string& value) {
    append_summary_line(out, label, value);
  };
  line("problem", r.problem_path.empty() ? "-" : r.problem_path);
  line("candidate", r.candidate_path.empty() ? "-" : r.candidate_path);
  // The backend/precision pair, as run pages show it ("cuda fp32").
  const std::string backend = r.device.rfind("cuda", 0) == 0 ? "cuda" : r.device;
  const std::string where =
      backend == "cuda" ? fmt::format(" on {} ({})", r.device, r.device_name) : std::string();
  line("device",
       fmt::format("{} {}{}, variant {}{}", backend.empty() ? "-" : backend, r.precision, where,
                   r.variant, r.world_size > 1 ? fmt::format(", {} ranks", r.world_size) : ""));
  line("status", status_name(r.status));
  if (!r.message.empty()) {
    line("message", r.message);
  }
  for (const auto& warning : r.warnings) {
    line("warning", warning);
  }
  for (const auto& v : r.static_check) {
    if (v.severity != "reject") {
      line("warning", fmt::format("{}{}: {}", v.line ? fmt::format("line {} ", *v.line) : "",
                                  v.rule, v.message));
    }
  }
  if (r.compile.ran) {
    line("compile", fmt::format("{:.1f} s{}", r.compile.seconds,
                                r.compile.cached ? " (cached build reused)" : ""));
  }
  if (!r.trials.empty()) {
    const auto held_out = std::count_if(r.trials.begin(), r.trials.end(),
                                        [](const TrialResult& t) { return t.held_out; });
    line("trials", fmt::format("{}/{} passed{}", r.trials_passed(), r.trials.size(),
                               held_out ? fmt::format(" ({} held out)", held_out) : ""));
    if (const auto e = r.error_summary()) {
      line("abs error", fmt::format("max {:.3e}, mean {:.3e}", e->max_abs, e->mean_abs));
      line("rel error", fmt::format("max {:.3e}, mean {:.3e}", e->max_rel, e->mean_rel));
    }
  }
  if (r.timing.candidate) {
    line("cand time", timing_line(*r.timing.candidate));
    if (!r.timing.candidate->per_rank_us.empty()) {
      line("cand ranks", per_rank_line(*r.timing.candidate));
    }
  }
  if (r.timing.reference) {
    line("ref time", timing_line(*r.timing.reference));
    if (!r.timing.reference->per_rank_us.empty()) {
      line("ref ranks", per_rank_line(*r.timing.reference));
    }
  }
  if (r.timing.reference_compiled) {
    line("compiled", timing_line(*r.timing.reference_compiled));
  }
  if (r.timing.speedup) {
    std::string text = speedup_text(*r.timing.speedup, r.timing.speedup_ci) + " vs eager";
    if (r.timing.speedup_vs_compiled) {
      text += ", " + speedup_text(*r.timing.speedup_vs_compiled, r.timing.speedup_vs_compiled_ci) +
              " vs torch.compile";
      if (r.reference_cache.compiled_ratio == "cache") {
        text += " (its ratio to eager from the reference cache)";
      }
    }
    line("speedup", text + (r.timing.speedup_ci ? r.timing.speedup_ci_at_resolution
                                                      ? " (ratio of medians, 95 % interval "
                                                        "widened to the timers' resolution)"
                                                      : " (ratio of medians, 95 % interval)"
                                                : " (ratio of medians)"));
    if (r.timing.fusion_ratio || r.timing.memory_ratio) {
      line("launches",
           fmt::format("{} per call (reference {}), memory peak {} of the reference's",
                       r.timing.candidate && r.timing.candidate->launches_per_call
                           ? fmt::format("{:.0f}", *r.timing.candidate->launches_per_call)
                           : "-",
                       r.timing.reference && r.timing.reference->launches_per_call
                           ? fmt::format("{:.0f}", *r.timing.reference->launches_per_call)
                           : "-",
                       r.timing.memory_ratio ? fmt::format("{:.2f}x", *r.timing.memory_ratio)
                                             : "-"));
    }
    for (const auto& flag : r.timing.flags) {
      line("flag", flag.id + ": " + flag.message);
    }
  } else if (!r.timing.skipped_reason.empty()) {
    line("timing", "not measured: " + r.timing.skipped_reason);
  }
  if (!r.timing.speedup_scored) {
    line("score", "speedup not scored: " + r.timing.unscored_reason);
  }
  if (r.counters) {
    out += format_counters(*r.counters);
  }
  line("wall time", fmt::format("{:.1f} s", r.wall_s));
  return out;
}

int exit_code_for(Status status) {
  switch (status) {
  case Status::ok:
    return 0;
  case Status::harness_error:
  case Status::unsupported:
    return 2;
  default:
    return 1;
  }
}

} // namespace kbench::report
