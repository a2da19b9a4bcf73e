#pragma once
// The order in which a suite's builds and evaluations run, apart from what they do, so that
// tests/unit/test_suite_pipeline.cpp checks it with stand-ins (pipeline/suite_runner.hpp gives
// it the real builds and evaluations).
//
// Builds are CPU work: `jobs` threads run them, in the order given. Evaluations run in lanes:
// each queue (one for the CPU, one for the GPUs) is served by a number of lanes (one per GPU),
// each lane runs one evaluation at a time, and a queue hands out its steps in the order given
// (manifest order). A step starts as soon as a lane is free and its build has finished, not
// when every build has: the GPU does not wait for the compiler.
//
// An exclusive step runs with the machine to itself: it waits until no build and no other step
// is running, and while it waits or runs no build or step starts. A suite marks timed CPU
// evaluations so: their times are host times, which a compiler or another evaluation on the
// same cores would inflate.
#include "core/options.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace kbench::sched {

struct PipelineStep {
  std::optional<std::size_t> build; // the build it needs first; none: it builds for itself
  std::size_t queue = 0;            // index into the queues' lane counts
  bool exclusive = false;
};

// Runs build(b) for every b < build_count and run(s, lane) for every step s, where lane is the
// lane of the step's queue that runs it (0 .. lanes-1: the suite maps it to a GPU). Returns
// when all have returned. A build's failure is the evaluation's to report: the step runs
// anyway, once its build has returned. `lanes[q]` is the lane count of queue q (at least one).
// build and run are called from several threads at once; they must not throw.
void run_pipeline(std::size_t build_count, int jobs, const std::vector<int>& lanes,
                  const std::vector<PipelineStep>& steps,
                  const std::function<void(std::size_t build)>& build,
                  const std::function<void(std::size_t step, int lane)>& run);

// How a suite's evaluations map onto the pipeline: queue 0 is the CPU's (one lane), queue 1 the
// GPUs' (`gpu_lanes` lanes). One build per distinct (candidate, device), in the order of first
// need. Exclusive steps:
// - timed CPU evaluations (host times; see above);
// - CUDA evaluations of several ranks when there are several GPU lanes, since their ranks take
//   GPUs that other lanes use (the ranks come from the run's world_size, else the problem's
//   KBENCH_WORLD_SIZE).
// An exclusive step gets no build of its own when jobs is 1: the build could overlap nothing,
// and a separate build costs the evaluation a second compile worker to load it.
struct PipelinePlan {
  std::vector<EvalOptions> builds; // compile-only options
  std::vector<PipelineStep> steps; // one per run, in order
  std::vector<int> lanes;          // {1, gpu_lanes}
};
PipelinePlan plan_pipeline(const std::vector<EvalOptions>& runs, int jobs, int gpu_lanes);

} // namespace kbench::sched
