#pragma once
// The static check (docs/static-checks.md): runs the static_check op in a compile-role worker and
// reads its verdicts. An evaluation runs it in the compile worker it already has; `kbench check`
// runs it alone, in a worker of its own, without a problem run or a device. Parsing is apart from
// running so that it can be tested without a worker.
#include "core/result.hpp"
#include "pipeline/dynamic_rules.hpp"
#include "pipeline/worker_phase.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct StaticCheckOutcome {
  // The worker's answer; !phase.ok: the check could not run (a bad rule set, a worker that would
  // not start). phase.body also says which backend and rule set the worker settled on.
  PhaseOutcome phase;
  std::vector<StaticVerdict> verdicts;
};

// Sends `request` (requests::static_check) to `worker`, a compile-role worker.
StaticCheckOutcome run_static_check(sandbox::WorkerClient& worker, const nlohmann::json& request,
                                    const std::string& candidate_path);

// An evaluation's static check on `worker`: the verdicts go into `result.static_check` and
// the rule set's own-kernel-share rule, for after timing, into `share`. False, with the result's
// status and message set, when the check could not run or a verdict rejects.
bool judge_statically(sandbox::WorkerClient& worker, const nlohmann::json& request,
                      EvalResult& result, std::optional<OwnKernelShareRule>& share);

// `kbench check`: the same op in a fresh compile-role worker (no GPU, no network) in a scratch
// directory of its own, removed however the check ends. Empty `problem`: none; `rules` nullopt:
// the default set.
StaticCheckOutcome check_alone(const std::filesystem::path& candidate, const std::string& backend,
                               const std::filesystem::path& problem,
                               const std::optional<std::filesystem::path>& rules,
                               const std::filesystem::path& python);

// The answer's verdicts; a verdict missing a field reads as the worker's defaults would.
std::vector<StaticVerdict> parse_verdicts(const nlohmann::json& answer);

// "line 26 fallback: ...; torch-compute-in-forward: ..." for the rejecting verdicts, in their
// order; empty when none rejects.
std::string rejections(const std::vector<StaticVerdict>& verdicts);

} // namespace kbench
