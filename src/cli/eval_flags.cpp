// The flags `kbench eval` and `kbench suite` share (cli/eval_flags.hpp).
#include "cli/eval_flags.hpp"

#include <chrono>

namespace kbench::cli {

void add_shared_eval_options(CLI::App& command, EvalOptions& o) {
  command.add_option("--device", o.device, "cuda, cpu or auto (cuda when a GPU is present)")
      ->capture_default_str();
  command
      .add_option("--backend", o.backend,
                  "what the static check requires: cuda, triton, cute, tilelang, cpu or auto (from the source)")
      ->capture_default_str();
  command.add_option("--rules", o.rules,
                     "rule set (static and dynamic rules): a JSON file or a bundled name "
                     "(default, strict, allow-libraries, partial-torch, structural); see "
                     "docs/static-checks.md");
  command.add_option("--world-size", o.world_size,
                     "ranks of a collective problem, one process and GPU each (default: the "
                     "problem's KBENCH_WORLD_SIZE, else 1)");
  command.add_option("--gpu", o.gpu, "which GPU to use (index among the visible ones)")
      ->capture_default_str();
  command.add_option("--trials", o.trials, "seeded correctness trials")->capture_default_str();
  command.add_option("--seed", o.seed, "base seed: trial seeds and model weights derive from it")
      ->capture_default_str();
  command
      .add_option("--variant", o.variant, "standard (fixed shapes), popcorn or popcorn2 (jittered)")
      ->capture_default_str();
  command
      .add_option("--precision", o.precision,
                  "fp32, fp16 or bf16: the model and floating-point inputs are cast")
      ->capture_default_str();
  command.add_option("--atol", o.atol,
                     "absolute tolerance for floating-point outputs "
                     "(default by dtype: fp32 1e-4, fp16/bf16 1e-2)");
  command.add_option("--rtol", o.rtol, "relative tolerance for floating-point outputs");
  command.add_option_function<int>(
      "--compile-timeout", [&o](int s) { o.compile_timeout = std::chrono::seconds(s); },
      "deadline of the compile phase in seconds (default 600)");
  command.add_option_function<int>(
      "--run-timeout", [&o](int s) { o.run_timeout = std::chrono::seconds(s); },
      "deadline of each reference/candidate phase in seconds (default 300)");
  command.add_option("--min-samples", o.min_samples, "stopping rule: at least this many samples")
      ->capture_default_str();
  command
      .add_option("--timing-precision", o.timing_precision,
                  "stopping rule: half-width of the 95 % intervals of each side's median and of "
                  "the speedup, relative (0.01 = ±1 %)")
      ->capture_default_str();
  command
      .add_option("--min-time", o.min_time,
                  "stopping rule: at least this many seconds of measured time per side (0: none)")
      ->capture_default_str();
  command
      .add_option("--timing-timeout", o.timing_timeout, "wall-clock seconds of sampling at most")
      ->capture_default_str();
  command
      .add_option("--throttle-recovery", o.throttle_recovery,
                  "seconds of idle GPU after a block dropped for a low SM clock")
      ->capture_default_str();
  command.add_flag("--warm", o.warm, "no L2 flush before each sample (warm-cache timing)");
  command.add_flag("--no-compile-baseline", o.no_compile_baseline,
                   "do not time the reference under torch.compile");
  command.add_flag("--no-reference-cache", o.no_reference_cache,
                   "compute the reference side afresh: no cached reference outputs, torch.compile "
                   "build or compiled/eager ratio (see docs/architecture.md)");
  command
      .add_option("--iterations", o.iterations,
                  "fixed timed calls per side, no stopping rule (0: the rule decides)")
      ->capture_default_str();
  command.add_option("--warmup", o.warmup, "untimed calls before timing")->capture_default_str();
  command.add_flag("--no-timing", o.no_timing, "check correctness only");
  command.add_option("--profile", o.profile,
                     "after timing, collect hardware counters with Nsight Compute: sol (speed of "
                     "light, roofline, occupancy, launch) or full (adds caches and warp stalls), "
                     "and energy per call; see docs/counters.md");
  command.add_option("--roofline", o.roofline,
                     "with --profile: write the roofline chart (SVG) of both sides' kernels here");
  command.add_option("--python", o.python,
                     "the Python interpreter of the environment with torch (default: the one "
                     "kbench was built against, or KBENCH_PYTHON)");
  command.add_option("--cache-dir", o.cache_dir, "compile cache (default ~/.cache/kbench)");
  command.add_flag("--keep-scratch", o.keep_scratch,
                   "keep the evaluation's scratch directory (tensor files) for inspection");
}

} // namespace kbench::cli
