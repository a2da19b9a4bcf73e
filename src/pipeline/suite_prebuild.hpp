#pragma once
// Builds a suite's candidates ahead of its evaluations. Builds are CPU work and run in
// parallel; timed evaluations are GPU work and run one at a time, so a suite builds everything
// first and its evaluations then find their builds in the compile cache. It lives in pipeline/
// because it calls `evaluate`; which builds to make is sched::distinct_builds
// (sched/suite_plan.hpp), so this file only holds the thread pool.
#include "core/options.hpp"
#include "core/result.hpp"

#include <vector>

namespace kbench {

// Evaluates each of `builds` (compile-only options), `jobs` at a time (at least one), and
// returns their results, in order, when all have finished. A suite drops them (the evaluation
// that follows each build reports how it went); `suite --build-only` prints them.
std::vector<EvalResult> prebuild(const std::vector<EvalOptions>& builds, int jobs);

} // namespace kbench
