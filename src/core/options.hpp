#pragma once
// Everything one evaluation is configured by. The command line fills it; the suite runner and
// the agent will fill it the same way, and a service request, a queued job and a stored record
// carry it as JSON (`to_json` / `options_from_json`, docs/result-schema.md, "The options
// document"). Each field is named like its flag, dashes as underscores (--min-time: min_time),
// so the JSON form, the flags and validate's messages share one vocabulary.
#include "core/json_io.hpp"

#include <nlohmann/json.hpp>

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
  // Half-width of the 95 % intervals of each side's median and of the speedup, relative to the
  // estimate: sampling stops once all are within it (or at the timer's resolution).
  double timing_precision = 0.01;
  double min_time = 0;        // seconds of measured time per side; 0: no such floor
  double timing_timeout = 15; // wall-clock seconds per evaluation's sampling
  // Seconds of idle after a block dropped for a low SM clock, so the GPU can recover before the
  // next one (NVBench's --throttle-recovery-delay).
  double throttle_recovery = 0.05;
  bool warm = false;                // no L2 flush before each sample
  bool no_compile_baseline = false; // do not time the reference under torch.compile (GPU only)
  // Compute the reference side afresh instead of reusing the reference-side cache
  // (docs/architecture.md, "Reference-side cache").
  bool no_reference_cache = false;
  // Hardware counters after timing (docs/counters.md): "" none, "sol" or "full"
  // (src/counters/ncu_metrics.txt); with them, energy per call. `roofline`: where to write the
  // roofline chart as SVG (empty: nowhere).
  std::string profile;
  std::filesystem::path roofline;
  std::string backend = "auto";    // static check's kernel requirement: cuda, triton, cpu, auto
  std::filesystem::path rules;     // static check rule set (JSON); empty: the default set
  std::filesystem::path python;    // the environment's interpreter; empty: the worker's default
  std::filesystem::path cache_dir; // empty: sched::cache_directory()
  bool keep_scratch = false;
  // compile_only and this cap on captured worker output are set by the process that runs the
  // evaluation, not by whoever asks for it: no flag sets them, and the JSON form leaves them out.
  std::size_t output_keep_bytes = 64 * 1024;
};

// The canonical JSON form: one key per field that a flag sets, problem and candidate included,
// every key always present. Paths are strings; compile_timeout and run_timeout are integer
// seconds; min_time, timing_timeout and throttle_recovery are seconds as numbers; atol and rtol
// are null when unset. compile_only and output_keep_bytes are not part of it (see above).
nlohmann::json to_json(const EvalOptions& options);

// Reads the canonical form back, starting from the defaults, so a partial document is fine and
// `{}` gives EvalOptions{}. An unknown key, or a key of the wrong type, is an error naming the
// field: "options.trials: expected an integer, got \"five\"". Ranges are validate's job, not
// this one's. `path` names the document in errors ("request.options").
Decoded<EvalOptions> options_from_json(const nlohmann::json& document,
                                       const std::string& path = "options");

// The part of the canonical form that decides what the result is, for a content-derived
// evaluation id. It leaves out what only says where the evaluation runs or where its files go:
// problem and candidate (an id uses their sha256, not their paths), gpu (which of equal GPUs),
// python (the environment is recorded in the result; a store keys on its torch version if it
// must), cache_dir, keep_scratch, roofline (where the chart is written) and no_reference_cache
// (a cached reference side gives the same verdict as a fresh one).
nlohmann::json identity_json(const EvalOptions& options);

// A problem in the options a person can act on. The message keeps the flag's spelling
// ("--trials must be between 1 and 1000"), which is what the command line's users read; `fields`
// names the fields it is about, for a front end that answers in JSON.
struct OptionProblem {
  std::vector<std::string> fields; // "trials"; several when the rule spans them
  std::string message;
};
std::vector<OptionProblem> find_option_problems(const EvalOptions& options);

// The messages of find_option_problems; empty if none.
std::vector<std::string> validate(const EvalOptions& options);

// "partial-torch" names a bundled rule set (python/kbench/rules); "my/rules.json" is a file.
bool names_bundled_rule_set(const std::filesystem::path& rules);

const std::vector<std::string>& known_variants();
const std::vector<std::string>& known_precisions();

} // namespace kbench
