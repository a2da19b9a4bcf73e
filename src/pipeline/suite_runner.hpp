#pragma once
// Runs a suite's evaluations through the pipeline of sched/suite_pipeline.hpp: builds ahead on
// the CPU cores into the compile cache, one measurement lane per GPU and one for the CPU. It
// lives in pipeline/ because it calls `evaluate`; the order is sched's.
#include "core/options.hpp"
#include "core/result.hpp"

#include <functional>
#include <vector>

namespace kbench {

// Evaluates every one of `runs` (each once: the caller has removed duplicates and resumed
// results) and returns their results in order. `gpus` are the GPUs with a lane each (a run's
// gpu is replaced by its lane's; a run of several ranks keeps its own, the first rank's).
// on_start(i) and on_done(i, result) are called under one lock, from the lanes' threads, so the
// caller may print and append to a file without one of its own.
std::vector<EvalResult>
evaluate_pipelined(const std::vector<EvalOptions>& runs, int jobs, const std::vector<int>& gpus,
                   const std::function<void(std::size_t)>& on_start,
                   const std::function<void(std::size_t, const EvalResult&)>& on_done);

} // namespace kbench
