#pragma once
// The measurement engine's orchestration (DESIGN section 4): processes R and C, both alive,
// timed in alternating blocks (R eager, C, R under torch.compile, R, C, ...) until every side's
// stopping rule is met; blocks taken while the GPU throttled are dropped; the speedups come
// with bootstrap intervals over the paired blocks; the candidate's timed outputs are
// spot-checked against the reference's for the same inputs.
#include "core/options.hpp"
#include "core/result.hpp"
#include "pipeline/worker_phase.hpp"

#include <filesystem>

namespace kbench {

struct PairedTimingSetup {
  sandbox::WorkerClient* reference = nullptr;
  sandbox::WorkerClient* candidate = nullptr;
  bool cuda = false;
  std::string candidate_path;
  int pool_size = 0;            // input sets R wrote (0: the first trial's inputs)
  std::int64_t input_bytes = 0; // per input set, for the roofline floor
  // The GPU's peak DRAM bandwidth from the peak table (counters/gpu_specs); empty on the CPU.
  std::optional<double> peak_bandwidth_bytes_per_s;
  std::filesystem::path reference_dir; // R's outputs: pool_<k>.outputs.safetensors
};

struct PairedTimingOutcome {
  bool ok = false;
  PhaseOutcome failure; // when !ok: the side that failed, as a phase outcome
  TimingInfo timing;
};

PairedTimingOutcome run_paired_timing(const EvalOptions& options, const PairedTimingSetup& setup);

} // namespace kbench
