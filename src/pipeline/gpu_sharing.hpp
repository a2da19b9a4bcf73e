#pragma once
// How an evaluation shares its GPU with the others a suite runs beside it on the same GPU
// (sched/gpu_lane.hpp). Its trials (reference, candidate, re-run, held-out) hold the lane's
// shared side and its measurement and profiling the exclusive side, so no other evaluation's
// kernels run while it times a call, and the GPU's idle time between one evaluation's timed
// blocks goes to the others' trials. An evaluation holds one side at a time and never waits
// for another evaluation while holding, so the holds cannot deadlock.
#include "core/result.hpp"
#include "sched/gpu_lane.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kbench {

struct GpuSharing {
  sched::GpuLane* lane = nullptr; // none: the GPU is the evaluation's own
  // The exclusive side from start to end: the rerun of an evaluation that ran out of GPU
  // memory beside others.
  bool alone = false;
  int evaluations_per_gpu = 1; // for the result's note
};

// One hold of a lane for as long as it lives; nothing without a lane.
class GpuSection {
public:
  GpuSection(sched::GpuLane* lane, sched::LaneHold::State state);

private:
  std::optional<sched::LaneHold> m_hold;
};

// The result's `gpu_sharing` note: empty when the evaluation had its GPU to itself.
std::string gpu_sharing_note(const GpuSharing& sharing);

// Whether a failed result reads as the GPU running out of memory (torch's and CUDA's words),
// which beside other evaluations may be theirs: such an evaluation is run again alone.
bool ran_out_of_gpu_memory(const EvalResult& result);
// Whether `text` holds those words.
bool reads_as_gpu_out_of_memory(std::string_view text);

} // namespace kbench
