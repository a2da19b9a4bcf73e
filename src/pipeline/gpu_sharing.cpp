// An evaluation's holds of its GPU's lane (pipeline/gpu_sharing.hpp).
#include "pipeline/gpu_sharing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace kbench {

GpuSection::GpuSection(sched::GpuLane* lane, sched::LaneHold::State state) {
  if (lane != nullptr) {
    m_hold.emplace(*lane);
    m_hold->move_to(state);
  }
}

std::string gpu_sharing_note(const GpuSharing& sharing) {
  if (sharing.lane == nullptr) {
    return "";
  }
  if (sharing.alone) {
    return "alone: run again with the GPU to itself after running out of GPU memory beside other "
           "evaluations";
  }
  return fmt::format("trials beside up to {} other evaluations on this GPU; measurement and "
                     "profiling with the GPU to itself",
                     std::max(0, sharing.evaluations_per_gpu - 1));
}

namespace {

bool contains_lowercase(std::string_view said, std::string_view needle) {
  std::string text(said);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text.find(needle) != std::string::npos;
}

} // namespace

bool reads_as_gpu_out_of_memory(std::string_view text) {
  // torch.OutOfMemoryError ("CUDA out of memory. Tried to allocate ..."), the runtime's
  // cudaErrorMemoryAllocation ("out of memory"), cuBLAS's CUBLAS_STATUS_ALLOC_FAILED.
  constexpr std::array<std::string_view, 3> kWords = {"out of memory", "cudaerrormemoryallocation",
                                                      "cublas_status_alloc_failed"};
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view word) { return contains_lowercase(text, word); });
}

bool ran_out_of_gpu_memory(const EvalResult& result) {
  return result.status != Status::ok &&
         reads_as_gpu_out_of_memory(result.message + "\n" + result.log);
}

} // namespace kbench
