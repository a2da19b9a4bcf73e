#pragma once
// `kbench problems check` over many problems: `jobs` checks at a time in one kbench process, so
// every worker is forked by the same warm fork server (torch imported once). On cuda the checks
// of one GPU share a sched::GpuLane: their untimed GPU work overlaps, their timed parts (the
// reference's call time and peak memory) run alone on the GPU. And the keys with which
// `--resume` finds the checks a `--jsonl` already holds.
#include "core/options.hpp"
#include "pipeline/problem_checking.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <vector>

namespace kbench {

// One check: check_problem, or a stand-in in the tests.
using ProblemChecker = std::function<ProblemCheckResult(const EvalOptions&, sched::GpuLane*)>;

// Checks every one of `runs` and returns their results in order. on_done(i, result) is called
// under one lock from the checking threads, as each check finishes, so the caller may print and
// append to a file without a lock of its own. A check that throws is reported "not checked"
// with kbench's error, and the others go on. A check that ran out of room while others ran
// beside it (its trial's files refused for want of scratch disk, sandbox::kNoScratchRoom, or
// its reference out of GPU memory) is run again alone once the others are done, and reported
// then, once: several problems of GiBs each fill a disk or a GPU that holds any one of them.
// on_deferred(i, result), under the same lock, says which check was set aside and why.
using CheckReport = std::function<void(std::size_t, const ProblemCheckResult&)>;
std::vector<ProblemCheckResult> check_problems(const std::vector<EvalOptions>& runs, int jobs,
                                               const CheckReport& on_done,
                                               const CheckReport& on_deferred = {},
                                               const ProblemChecker& checker = {});

// What decides a check's result: the problem's content, the variant, precision, kind of device,
// trials, seed, tolerances and the kbench that ran it. None when the problem cannot be read
// (its check says why; such a check is never resumed).
std::optional<nlohmann::json> check_key(const EvalOptions& run);

// One line of --jsonl: the check's report with its key under "check_key".
nlohmann::json check_line(const ProblemCheckResult& result, const nlohmann::json& key);

} // namespace kbench
