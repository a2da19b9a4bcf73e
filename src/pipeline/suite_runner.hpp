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
// results) and returns their results in order. `gpus` are the GPUs the CUDA runs go to (a run's
// gpu is replaced by its lane's; a run of several ranks keeps its own, the first rank's), each
// evaluating up to `evaluations_per_gpu` at once: their trials overlap, their measurements take
// the GPU in turn (pipeline/gpu_sharing.hpp). One that runs out of GPU memory beside others is
// run again alone.
// on_start(i) and on_done(i, result) are called under one lock, from the lanes' threads, so the
// caller may print and append to a file without one of its own.
std::vector<EvalResult>
evaluate_pipelined(const std::vector<EvalOptions>& runs, int jobs, const std::vector<int>& gpus,
                   int evaluations_per_gpu, const std::function<void(std::size_t)>& on_start,
                   const std::function<void(std::size_t, const EvalResult&)>& on_done);

} // namespace kbench
