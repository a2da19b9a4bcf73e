#include "agent/evaluation_gate.hpp"

#include "pipeline/evaluation.hpp"
#include "pipeline/gpu_sharing.hpp"
#include "pipeline/worker_phase.hpp"

#include <algorithm>

namespace kbench::agent {

EvaluationGate::EvaluationGate(std::vector<int> gpus, int evaluations_per_gpu)
    : m_gpus(std::move(gpus)), m_per_gpu(std::max(1, evaluations_per_gpu)) {
  for (std::size_t g = 0; g < m_gpus.size(); ++g) {
    m_lanes.push_back(std::make_unique<sched::GpuLane>());
  }
}

EvalResult EvaluationGate::evaluate(EvalOptions run, int run_index) {
  const DeviceChoice choice = choose_device(run.device, run.gpu, std::max(1, run.world_size));
  if (choice.device == "cpu" && !run.no_timing && !run.compile_only) {
    std::lock_guard lock(m_cpu_timing);
    return kbench::evaluate(run);
  }
  GpuSharing sharing;
  if (choice.device != "cpu" && !m_gpus.empty()) {
    const auto gpu = static_cast<std::size_t>(std::max(0, run_index)) % m_gpus.size();
    run.gpu = m_gpus[gpu];
    sharing = {m_lanes[gpu].get(), false, m_per_gpu};
  }
  EvalResult result = kbench::evaluate(run, {}, sharing);
  if (sharing.lane != nullptr && ran_out_of_gpu_memory(result)) {
    sharing.alone = true; // beside other runs' evaluations the memory may have been theirs
    result = kbench::evaluate(run, {}, sharing);
  }
  return result;
}

} // namespace kbench::agent
