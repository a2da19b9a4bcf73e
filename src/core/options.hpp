#pragma once
// Everything one evaluation is configured by. The command line fills it; the suite runner and
// the agent will fill it the same way.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct EvalOptions {
  std::filesystem::path problem;
  std::filesystem::path candidate;
  std::string device = "auto"; // "auto" (cuda when a GPU is present, else cpu), "cuda", "cpu"
  int gpu = 0;                 // which GPU of the machine when device is cuda (the first rank's)
  // Ranks of a collective problem, one process (and GPU) each. 0: the problem's own
  // KBENCH_WORLD_SIZE, else 1.
  int world_size = 0;
  int trials = 5;
  std::uint64_t seed = 42;
  std::string variant = "standard";
  std::string precision = "fp32";   // fp32, fp16 or bf16: the model and floating inputs are cast
  std::optional<double> atol, rtol; // override the per-dtype defaults for floating outputs
  std::chrono::seconds compile_timeout{600};
  std::chrono::seconds run_timeout{300};
  bool no_timing = false;    // correctness only
  bool compile_only = false; // stop after the static check and the build (a suite's prebuild)
  int warmup = 3;
  // Measurement (docs/architecture.md, "The measurement engine"). iterations > 0 fixes the
  // samples per side and turns the stopping rule off (tests, quick looks); 0 samples until the
  // rule is met.
  int iterations = 0;
  int min_samples = 10;
  double max_noise = 0.005;  // relative std
  double min_time = 0.5;     // seconds of measured time per side
  double timing_timeout = 15; // wall-clock seconds per evaluation's sampling
  // Seconds of idle after a block dropped for a low SM clock, so the GPU can recover before the
  // next one (NVBench's --throttle-recovery-delay).
  double throttle_recovery = 0.05;
  bool warm = false;                // no L2 flush before each sample
  bool no_compile_baseline = false; // do not time the reference under torch.compile (GPU only)
  int pool_size = 8;                // input sets R writes for timing
  // Hardware counters after timing (DESIGN section 2, step 7): "" none, "sol" or "full"
  // (src/counters/ncu_metrics.txt); with them, energy per call. `roofline`: where to write the
  // roofline chart as SVG (empty: nowhere).
  std::string profile;
  std::filesystem::path roofline;
  std::string backend = "auto";    // static check's kernel requirement: cuda, triton, cpu, auto
  std::filesystem::path rules;     // static check rule set (JSON); empty: the default set
  std::filesystem::path python;    // the environment's interpreter; empty: the worker's default
  std::filesystem::path cache_dir; // empty: sched::cache_directory()
  bool keep_scratch = false;
  std::size_t output_keep_bytes = 64 * 1024;
};

// Problems in the options a person can act on ("--trials must be at least 1"); empty if none.
std::vector<std::string> validate(const EvalOptions& options);

// "partial-torch" names a bundled rule set (python/kbench/rules); "my/rules.json" is a file.
bool names_bundled_rule_set(const std::filesystem::path& rules);

const std::vector<std::string>& known_variants();
const std::vector<std::string>& known_precisions();

} // namespace kbench
