#include "pipeline/dynamic_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kbench {

namespace {

constexpr const char* kOwnKernelShare = "own-kernel-share";

std::string percent(double share) {
  // Two significant digits: "0.17 %" and "12 %" both say what was measured.
  const double p = share * 100;
  return p >= 10 ? fmt::format("{:.0f} %", p) : fmt::format("{:.2g} %", p);
}

} // namespace

std::optional<OwnKernelShareRule> parse_own_kernel_share(const nlohmann::json& answer) {
  if (!answer.is_object() || !answer.contains("dynamic_rules") ||
      !answer["dynamic_rules"].is_array()) {
    return std::nullopt;
  }
  for (const auto& rule : answer["dynamic_rules"]) {
    if (!rule.is_object() || rule.value("rule", "") != kOwnKernelShare) {
      continue;
    }
    const std::string severity = rule.value("severity", "off");
    if (severity != "reject" && severity != "warn") {
      return std::nullopt;
    }
    return OwnKernelShareRule{severity, rule.value("min_share", 0.0),
                              rule.value("rule_set", "default"),
                              rule.value("own_kernels", std::vector<std::string>{})};
  }
  return std::nullopt;
}

DynamicJudgement judge_own_kernel_share(const OwnKernelShareRule& rule, const TimingInfo& timing,
                                        bool cuda, int world) {
  DynamicJudgement out;
  const std::string not_run = fmt::format(
      "the dynamic rule {} (rule set {}) did not run: ", kOwnKernelShare, rule.rule_set);
  if (!cuda) {
    out.not_run = not_run + "it needs CUPTI's trace of GPU kernels, and a CPU evaluation has "
                            "none; on the CPU only the static rules judge whose code did the work";
    return out;
  }
  if (world > 1) {
    out.not_run = not_run + "the share is not measured across several ranks (their NCCL kernels "
                            "are the problem's communication, not a library doing the compute)";
    return out;
  }
  if (!timing.measured || !timing.candidate) {
    out.not_run = not_run + "the candidate was not timed (" +
                  (timing.skipped_reason.empty() ? "no timing" : timing.skipped_reason) + ")";
    return out;
  }
  const TimingSide& side = *timing.candidate;
  if (side.method != "cupti") {
    out.not_run = not_run + "the candidate's timing was not traced by CUPTI (method " +
                  side.method + (side.tracing.empty() ? "" : "; tracing: " + side.tracing) + ")";
    return out;
  }
  if (rule.own_kernels.empty()) {
    out.not_run = not_run + "no kernel of the candidate's own was found in its source to count";
    return out;
  }
  if (!side.own_kernel_share) {
    out.not_run = not_run + "the candidate's timed calls ran no GPU kernels";
    return out;
  }
  const double share = *side.own_kernel_share;
  if (share >= rule.min_share) {
    return out;
  }
  out.verdict = StaticVerdict{
      kOwnKernelShare, rule.severity,
      fmt::format("the candidate's own kernels ({}) took {} of its GPU kernel time in the timed "
                  "calls, below the rule set's threshold of {} (rule set {}): torch's or a "
                  "library's kernels did the work. Move the work into kernels of your own",
                  fmt::join(rule.own_kernels, ", "), percent(share), percent(rule.min_share),
                  rule.rule_set),
      std::nullopt};
  return out;
}

std::string apply_own_kernel_share(const OwnKernelShareRule& rule, EvalResult& result) {
  DynamicJudgement judged =
      judge_own_kernel_share(rule, result.timing, result.device != "cpu", result.world_size);
  if (!judged.not_run.empty()) {
    result.warnings.push_back(std::move(judged.not_run));
  }
  if (!judged.verdict) {
    return {};
  }
  result.static_check.push_back(*judged.verdict);
  if (judged.verdict->severity != "reject") {
    return {};
  }
  result.timing.speedup.reset();
  result.timing.speedup_ci.reset();
  result.timing.speedup_vs_compiled.reset();
  result.timing.speedup_vs_compiled_ci.reset();
  return judged.verdict->rule + ": " + judged.verdict->message;
}

bool apply_dynamic_rules(const std::optional<OwnKernelShareRule>& share, EvalResult& result) {
  if (!share) {
    return true;
  }
  const std::string rejected = apply_own_kernel_share(*share, result);
  if (!rejected.empty()) {
    result.status = Status::static_rejected;
    result.message = "rejected by the rule set: " + rejected;
  }
  return rejected.empty();
}

} // namespace kbench
