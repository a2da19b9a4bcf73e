// The texts an agent reads back from its tools (agent/tools.hpp), in the seed run page's style:
// a first line that says PASSED or FAILED and what ran, then the figures with their units. The
// reference's time and the speedup are shown only when the run asks for them.
#include "agent/tools.hpp"
#include "pipeline/static_check.hpp"
#include "report/counters_summary.hpp"

#include <fmt/format.h>

namespace kbench::agent {
namespace {

constexpr std::size_t kMaxLogChars = 6000;

std::string cut(const std::string& text, std::size_t limit) {
  return text.size() > limit ? text.substr(0, limit) + "\n... (cut: the output is longer)" : text;
}

std::string failure(const std::string& tool, const EvalResult& result) {
  std::string text =
      fmt::format("{} FAILED: {}: {}", tool, status_name(result.status), result.message);
  if (!result.log.empty()) {
    text += "\n" + cut(result.log, kMaxLogChars);
  }
  return text;
}

std::string warnings_of(const EvalResult& result) {
  std::string text;
  for (const auto& verdict : result.static_check) {
    if (verdict.severity == "warn") {
      text += fmt::format("\nwarning {}{}: {}", verdict.rule,
                          verdict.line ? fmt::format(" (line {})", *verdict.line) : "",
                          verdict.message);
    }
  }
  return text;
}

std::string errors_of(const EvalResult& result) {
  const auto errors = result.error_summary();
  return errors ? fmt::format("max_abs_err={:.2e} mean_abs_err={:.2e} max_rel_err={:.2e} "
                              "mean_rel_err={:.2e}",
                              errors->max_abs, errors->mean_abs, errors->max_rel, errors->mean_rel)
                : "no outputs compared";
}

std::string us(double value) {
  return fmt::format("{:.2f} µs", value);
}

} // namespace

std::string compile_text(const EvalResult& result) {
  if (result.status != Status::ok) {
    return failure("compile_kernel", result);
  }
  return fmt::format("compile_kernel: compiled ({:.1f} s{}).{}", result.compile.seconds,
                     result.compile.cached ? ", cached build" : "", warnings_of(result));
}

std::string correctness_text(const std::string& tool, const EvalResult& result) {
  if (result.status != Status::ok) {
    return failure(tool, result);
  }
  return fmt::format("{} PASSED: ({} / {}) correctness trials passed.\n{}{}", tool,
                     result.trials_passed(), result.trials.size(), errors_of(result),
                     warnings_of(result));
}

std::string timing_text(const std::string& tool, const EvalResult& result, bool show_reference) {
  if (result.status != Status::ok) {
    return failure(tool, result);
  }
  std::string text = fmt::format("{} PASSED: ({} / {}) correctness trials passed.\n{}", tool,
                                 result.trials_passed(), result.trials.size(), errors_of(result));
  const auto& timing = result.timing;
  if (timing.measured && timing.candidate) {
    const auto& c = *timing.candidate;
    text += fmt::format("\nKernel runtime: median {} (p10 {}, p90 {}, n {}), host latency {}",
                        us(c.stats_us.median), us(c.stats_us.p10), us(c.stats_us.p90), c.stats_us.n,
                        us(c.host_stats_us.median));
    if (c.launches_per_call) {
      text += fmt::format("\nKernel launches per call: {:g}", *c.launches_per_call);
    }
    if (c.peak_memory_bytes) {
      text += fmt::format("\nMemory: {:.2f} MB peak per call",
                          static_cast<double>(*c.peak_memory_bytes) / 1e6);
    }
    if (show_reference && timing.reference) {
      text += fmt::format("\nReference runtime: median {}", us(timing.reference->stats_us.median));
      if (timing.speedup) {
        text += fmt::format("\nSpeedup: {:.2f}x", *timing.speedup);
      }
    }
    for (const auto& flag : timing.flags) {
      text += fmt::format("\nflag {}: {}", flag.id, flag.message);
    }
  } else if (!timing.skipped_reason.empty()) {
    text += "\nTiming: " + timing.skipped_reason;
  }
  if (result.counters) {
    text += "\n" + cut(report::format_counters(*result.counters), kMaxLogChars);
  }
  return text + warnings_of(result);
}

std::string static_check_text(const std::vector<StaticVerdict>& verdicts) {
  if (verdicts.empty()) {
    return "static_check PASSED: no rule fired.";
  }
  const bool rejected = !rejections(verdicts).empty();
  std::string text = rejected ? "static_check FAILED: the kernel would be rejected."
                              : "static_check PASSED: warnings only.";
  for (const auto& verdict : verdicts) {
    text +=
        fmt::format("\n{}{} {}: {}", verdict.line ? fmt::format("line {}: ", *verdict.line) : "",
                    verdict.severity, verdict.rule, verdict.message);
  }
  return text;
}

} // namespace kbench::agent
