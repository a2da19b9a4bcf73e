#pragma once
// The wire format between kbench and its workers, defined once: every request the pipeline sends
// a worker is built here, and every sender uses these builders, as pygpubench's protocol.h is
// included by both of its sides. python/kbench/worker/handlers.py, the receiving side, points
// here. One JSON object per line each way (src/sandbox/worker_client.hpp).
//
// The builders take what the worker needs, typed, and no options struct: what a request carries
// is then read here, not worked out from EvalOptions at each sender. Paths go as the caller gives
// them; a worker runs in a scratch directory of its own, so callers give absolute ones.
#include "core/tensor_comparison.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kbench::requests {

// ---- The evaluation's phases: hello, static_check, compile, reference, candidate, time,
// ---- problem_check.

// The worker's versions (python, torch); a candidate worker's first request, which also pays
// for its torch import while other phases run.
nlohmann::json hello();

// How a rule set is named to the worker: a bundled set's name ("partial-torch": no '/', no .json
// extension) as it is, since the worker finds the bundled file; anything else as an absolute path,
// since the worker runs in another directory. Empty stays empty (the default set).
std::string rule_set_argument(const std::filesystem::path& rules);

// The static rules' verdicts on `candidate` (no import, no torch). `problem` (its size constants
// feed shape-specialised) goes when not empty. `rules` goes through rule_set_argument when
// given; absent and empty both mean the default set to the worker. An evaluation always gives
// it, `kbench check` only when --rules was given: kept so, to send what each sent before.
nlohmann::json static_check(const std::filesystem::path& candidate, const std::string& backend,
                            const std::filesystem::path& problem,
                            const std::optional<std::filesystem::path>& rules);

// Imports the candidate with the GPU hidden so that load_inline builds, in `extensions_dir`.
nlohmann::json compile(const std::filesystem::path& candidate,
                       const std::filesystem::path& extensions_dir);

// Every rank runs the same trials under the same seeds (PopcornBench's semantics: a problem
// that wants different data per rank draws it with get_rank()).
// R's trials ({index, seed} each): it draws the inputs under each trial's seed and writes them
// to `inputs_dir`, its outputs to `outputs_dir`.
nlohmann::json reference(const std::filesystem::path& problem, const std::string& device,
                         const std::string& variant, const std::string& precision,
                         std::uint64_t init_seed, const nlohmann::json& trials,
                         const std::filesystem::path& inputs_dir,
                         const std::filesystem::path& outputs_dir);

// C's trials: it reads the inputs R wrote (`trials` carry indices only: C must not know the
// seeds) and writes its outputs. It loads `problem` before the candidate: the timed calls'
// inputs are drawn there by the problem's get_inputs(), under `variant`'s sizes.
nlohmann::json candidate(const std::filesystem::path& candidate,
                         const std::filesystem::path& problem, const std::string& device,
                         const std::string& variant, const std::string& precision,
                         const std::filesystem::path& extensions_dir, std::uint64_t init_seed,
                         const nlohmann::json& trials, const std::filesystem::path& inputs_dir,
                         const std::filesystem::path& outputs_dir);

// Times the session's model on its first trial's inputs, with the L2 flushed before each call
// (the ranks of a collective evaluation; one process is timed by time_block instead).
nlohmann::json time(int warmup, int iterations);

// The reference-side measurements of `kbench problems check`: R runs `trials` twice each and
// writes what the judge reads to `outputs_dir`.
// `passthrough_bound`: compare::loosest_tolerance of the check's tolerance; the worker leaves
// out of its files the inputs farther than that from every output they could pass for.
nlohmann::json problem_check(const std::filesystem::path& problem, const std::string& device,
                             const std::string& variant, const std::string& precision,
                             std::uint64_t init_seed, const nlohmann::json& trials,
                             const std::filesystem::path& outputs_dir,
                             const Tolerance& passthrough_bound);

// ---- The measurement engine and profiling: time_block, energy, profile.

// One block of paired timing: `calls` timed calls of `target` ("eager" or "compiled"), each on a
// fresh input set drawn from its seed (python/kbench/worker/timed_inputs.py). The loop's policy
// (warmup and memory on the first block only) is the sender's; the fields are named for the
// receiver, whose handler reads them by these names.
//   - `seeds` absent (process C): the worker asks for each call's seed once the previous call
//     has returned, an interim message answered with the seed and the returned call's sample
//     seed (pipeline/paired_timing.cpp);
//   - `seeds` given (process R, trusted): the calls' seeds, and with `sample_seeds` the positions
//     at which each call's outputs are read, the candidate's drawn after its calls returned.
struct TimeBlock {
  int block = 0;
  int calls = 0;
  std::string target;
  bool warm = false;            // no L2 flush before each call
  std::uint64_t shape_seed = 0; // the first trial's seed: the timed inputs take its sizes
  int warmup = 0;
  bool memory = false;       // measure the allocator peak and raw allocations of one call
  bool check_inputs = false; // draw the first seed twice: get_inputs() must be reproducible
  std::optional<std::vector<std::uint64_t>> seeds, sample_seeds;
};
nlohmann::json time_block(const TimeBlock& block);

// Energy per call from NVML's counter, the model called back to back for `seconds`.
nlohmann::json energy(double seconds);

// One call between cudaProfilerStart and Stop, in a worker started under Nsight Compute.
nlohmann::json profile();

} // namespace kbench::requests
