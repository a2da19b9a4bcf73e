#pragma once
// How concurrent agent runs share the machine's devices for their tool calls: builds and
// correctness runs overlap freely; a GPU's timed windows are its own (each GPU's lane, as in a
// suite: pipeline/gpu_sharing.hpp), and a timed CPU evaluation has the CPU to itself (its times
// are host times). Runs are spread over the GPUs by their index.
#include "core/options.hpp"
#include "core/result.hpp"
#include "sched/gpu_lane.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace kbench::agent {

class EvaluationGate {
public:
  // `gpus`: the GPUs agent runs use (empty: none); `evaluations_per_gpu` share each.
  EvaluationGate(std::vector<int> gpus, int evaluations_per_gpu);
  // evaluate(run) on run `run_index`'s GPU (when the run is for a GPU), waiting as above.
  EvalResult evaluate(EvalOptions run, int run_index);

private:
  std::vector<int> m_gpus;
  int m_per_gpu;
  std::vector<std::unique_ptr<sched::GpuLane>> m_lanes;
  std::mutex m_cpu_timing;
};

} // namespace kbench::agent
