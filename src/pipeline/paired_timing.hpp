#pragma once
// The measurement engine's orchestration (docs/architecture.md, "The measurement engine"):
// processes R and C, both alive, timed in alternating blocks (R eager, C, R under torch.compile,
// R, C, ...) until every side's stopping rule is met; blocks taken while the GPU throttled are
// dropped; the speedups come with bootstrap intervals over the paired blocks; the candidate's
// timed outputs are spot-checked against the reference's for the same inputs. The engine sees
// only TimingSettings, made once from the options at the pipeline's boundary, and the verdicts on
// what it measured are in pipeline/timing_flags.hpp.
#include "core/result.hpp"
#include "measure/stopping_rule.hpp"
#include "pipeline/worker_phase.hpp"

#include <chrono>
#include <filesystem>
#include <optional>

namespace kbench {

struct EvalOptions;

// What paired timing reads from the evaluation's options, and nothing else.
struct TimingSettings {
  // > 0: this many samples per side, the stopping rule off; 0: sample until the rule is met.
  int iterations = 0;
  int warmup = 3;    // calls before the first block of each side
  bool warm = false; // no L2 flush before each sample
  // min_samples, max_noise, min_time_s and timeout_s, the last also the paired loop's cap.
  measure::StoppingSettings stopping;
  double throttle_recovery_s = 0.05;     // idle after a block dropped for a low SM clock
  bool compile_baseline = true;          // time the reference under torch.compile too (GPU only)
  std::optional<double> atol, rtol;      // the spot checks' tolerance overrides
  std::chrono::seconds run_timeout{300}; // per block
};

TimingSettings timing_settings(const EvalOptions& options);

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

PairedTimingOutcome run_paired_timing(const TimingSettings& settings,
                                      const PairedTimingSetup& setup);

} // namespace kbench
