#pragma once
// The rule set's dynamic rules (docs/static-checks.md, "Dynamic rules"): a rule set holds static
// rules, which the worker applies to the source, and dynamic ones, which judge what the timing
// measured. The static check's answer carries the dynamic rules that are on (`dynamic_rules`);
// the evaluation applies them after timing. Pure functions: tested without a worker or a GPU.
#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kbench {

// own-kernel-share: the candidate's own kernels must take at least `min_share` of its GPU kernel
// time in the timed calls (TimingSide::own_kernel_share, from CUPTI).
struct OwnKernelShareRule {
  std::string severity;                 // "reject" or "warn"
  double min_share = 0;                 // a fraction: 0.01 is 1 %
  std::string rule_set;                 // the rule set that holds it, for messages
  std::vector<std::string> own_kernels; // the kernel names the candidate's source declares
};

// The rule from the static check's answer; nullopt when the rule set has it off or lacks it.
std::optional<OwnKernelShareRule> parse_own_kernel_share(const nlohmann::json& answer);

struct DynamicJudgement {
  std::optional<StaticVerdict> verdict; // the rule fired, with its severity
  std::string not_run;                  // why it could not judge: a warning for the result
};

// Judges one evaluation's timing. `cuda`: the evaluation ran on a GPU; `world`: its ranks.
DynamicJudgement judge_own_kernel_share(const OwnKernelShareRule& rule, const TimingInfo& timing,
                                        bool cuda, int world);

// Applies the rule to a timed evaluation: a verdict joins result.static_check, a rule that cannot
// judge adds a warning, and a reject drops the speedups (the times stay, as the evidence).
// Returns the rejection ("own-kernel-share: ..."), empty when the rule does not reject.
std::string apply_own_kernel_share(const OwnKernelShareRule& rule, EvalResult& result);

// The rule set's dynamic rules (`share`, when it has one) on a timed evaluation. False, with the
// result `static_rejected` and the rejection as its message, when one rejects.
bool apply_dynamic_rules(const std::optional<OwnKernelShareRule>& share, EvalResult& result);

} // namespace kbench
