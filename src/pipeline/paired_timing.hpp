#pragma once
// The measurement engine's orchestration (docs/architecture.md, "The measurement engine"):
// processes R and C, both alive, timed in alternating blocks (R eager, C, R under torch.compile,
// R, C, ...) until every side's stopping rule is met; blocks taken while the GPU throttled are
// dropped; the speedups come with bootstrap intervals over the paired blocks. Every timed call
// runs on a fresh input set drawn from a secret per-call seed, the same for every side, and
// every candidate call's outputs are checked against the reference's for the same inputs
// (pipeline/timed_output_check.hpp). The engine sees
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
  // min_samples, precision, min_time_s and timeout_s, the last also the paired loop's cap.
  measure::StoppingSettings stopping;
  double throttle_recovery_s = 0.05;     // idle after a block dropped for a low SM clock
  bool compile_baseline = true;          // time the reference under torch.compile too (GPU only)
  std::optional<double> atol, rtol;      // the timed outputs' check: tolerance overrides
  std::chrono::seconds run_timeout{300}; // per block
};

TimingSettings timing_settings(const EvalOptions& options);

struct PairedTimingSetup {
  sandbox::WorkerClient* reference = nullptr;
  sandbox::WorkerClient* candidate = nullptr;
  bool cuda = false;
  std::string candidate_path;
  std::uint64_t shape_seed = 0; // the first trial's seed: the timed inputs take its sizes
  // The GPU's peak DRAM bandwidth from the peak table (counters/gpu_specs); empty on the CPU.
  std::optional<double> peak_bandwidth_bytes_per_s;
  // Where R and C write each block's samples (timed_<block>.samples.safetensors).
  std::filesystem::path reference_dir, candidate_dir;
};

struct PairedTimingOutcome {
  bool ok = false;
  PhaseOutcome failure; // when !ok: the side that failed, as a phase outcome
  TimingInfo timing;    // with impossible_timing too: what was measured, without a speedup
  std::int64_t call_bytes = 0; // one call's inputs and outputs, as the reference reported them
};

PairedTimingOutcome run_paired_timing(const TimingSettings& settings,
                                      const PairedTimingSetup& setup);

} // namespace kbench
