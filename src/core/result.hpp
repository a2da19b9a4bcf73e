#pragma once
// The result of one evaluation: the `kbench.eval/1` document (docs/result-schema.md). `to_json`
// writes it; `result_from_json` reads a stored one back (kbench report), so that writing what was
// read gives the same document again.
#include "core/json_io.hpp"
#include "core/sample_stats.hpp"
#include "core/seeding.hpp"
#include "core/tensor_comparison.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kbench {

inline constexpr const char* kEvalSchema = "kbench.eval/1";

enum class Status {
  ok,
  incorrect,
  impossible_timing, // the timing shows work that cannot have happened: no GPU work in a timed
                     // call, or a median below the roofline floor (docs/architecture.md)
  static_rejected,
  compile_error,
  runtime_error,
  timeout,
  crashed,
  harness_error,
  unsupported,
};

const char* status_name(Status status);
std::optional<Status> status_from_name(const std::string& name);
const std::vector<Status>& all_statuses();

struct StaticVerdict {
  std::string rule;
  std::string severity; // "reject" or "warn"
  std::string message;
  std::optional<int> line;
};

struct CompileInfo {
  bool ran = false;
  bool cached = false; // the library was already built for this source and these flags
  double seconds = 0;
  std::string extensions_dir;
  std::string first_error;
  std::string log; // the whole compiler output on failure
  // load_inline's binding unit: the precompiled header's directory, "not used: <why>", or
  // empty when no compile ran
  std::string pch;
  // load_inline's CUDA units (python/kbench/light_nvcc.py): "torch/types.h in place of
  // torch/extension.h", or "as written: <why>"; empty when no CUDA unit was built here
  std::string cuda_header;
  // load_inline's binding units (python/kbench/light_cxx.py): "torch/types.h and torch/python.h
  // in place of torch/extension.h", or "as written: <why>"; empty when none was built here
  std::string binding_header;
  // Both kinds of unit built against torch/types.h (python/kbench/aten_subset.py): "kbench's
  // ATen/Functions.h: N of M operators (K named by the unit)", or "torch's ATen/Functions.h:
  // kbench's not used: <why>"; empty when no such unit was built here
  std::string aten_header;
};

struct OutputComparison {
  std::string name; // "output.0"
  TensorComparison comparison;
};

struct TrialResult {
  int index = 0;
  std::uint32_t seed = 0;
  bool held_out = false; // seeded at run time, not from --seed: no one can know it in advance
  nlohmann::json input_shapes;
  bool passed = false;
  std::string failure; // first reason it failed, for people
  std::vector<OutputComparison> outputs;
};

struct Interval {
  double low = 0, high = 0; // 95 %
};

struct TimingSide {
  std::string method; // "cupti", "cuda_event", "perf_counter", "barrier_to_last_rank"
  bool l2_flush = false;
  SampleStats stats_us;      // device time per call (host time on the CPU)
  SampleStats host_stats_us; // host latency: call to device idle
  // The 95 % interval of the median of stats_us (order statistics), never narrower than one
  // step of the timer: where the samples cannot resolve it, it spans that step, centred on the
  // median, and at_resolution says so.
  std::optional<Interval> median_ci_us;
  std::optional<double> resolution_us; // the smallest step between distinct samples
  bool at_resolution = false;
  // converged (the interval within the timing precision), resolution (at the timer's step),
  // fixed (--iterations), or "timeout: " and what was unmet
  std::string stop_reason;
  std::string tracing; // "cupti" or why not ("unsupported: ...")
  std::optional<double> tracing_overhead_us;
  std::size_t blocks = 0, throttled_samples_dropped = 0;
  std::optional<double> min_sm_mhz, max_sm_mhz, default_sm_mhz;
  std::optional<double> min_mem_mhz, max_mem_mhz;
  std::set<std::string> clock_reasons;     // NVML's reasons for lowered clocks, seen around blocks
  std::optional<double> launches_per_call; // median kernels per call
  std::map<std::string, int> kernels_per_call;     // by name, in one typical call
  std::optional<double> own_kernel_share;          // of kernel time: the candidate's own kernels
  std::optional<std::int64_t> peak_memory_bytes;   // allocator peak above the inputs, one call
  std::optional<std::int64_t> raw_allocated_bytes; // cudaMalloc seen by CUPTI in that call
  std::optional<double> compile_s;                 // torch.compile's first calls (compiled side)
  std::vector<double> samples_us;       // with several ranks: barrier to the slowest rank's end
  std::vector<SampleStats> per_rank_us; // each rank's own spans; empty for one rank
};

// Something about the timing a reader must know, with a sentence saying what and why.
struct TimingFlag {
  std::string id; // throttled, off_stream_work, unstable_timing, speedup_above_10x, launch_bound
  std::string message;
};

struct TimingInfo {
  bool measured = false;
  std::string skipped_reason;
  std::optional<TimingSide> reference;
  std::optional<TimingSide> candidate;
  std::optional<TimingSide> reference_compiled; // the reference under torch.compile
  std::optional<double> speedup;                // reference median / candidate median
  // False when the speedup must not count as a score, whatever it is: a trivial answer (zeros,
  // a constant, each trial's mean) passes the problem's tolerance on every trial, so the problem
  // cannot tell a kernel that does the work from one that does none. The reason says which.
  bool speedup_scored = true;
  std::string unscored_reason;
  std::optional<Interval> speedup_ci;
  // One step of each side's timer, carried into the speedup: s·(step_R/median_R +
  // step_C/median_C). A bootstrap interval narrower than it is widened to it, and
  // speedup_ci_at_resolution says so.
  std::optional<double> speedup_resolution;
  bool speedup_ci_at_resolution = false;
  // Why the paired loop stopped: converged (every interval within the timing precision, or at
  // the timer's resolution), fixed (--iterations), or "timeout: " and what was still unmet.
  std::string stop_reason;
  std::optional<double> speedup_vs_compiled;
  std::optional<Interval> speedup_vs_compiled_ci;
  std::string compiled_skipped_reason;
  std::optional<double> memory_ratio;   // candidate peak / reference peak
  std::optional<double> fusion_ratio;   // reference launches per call / candidate's
  std::vector<std::string> spot_checks; // what the check of the timed outputs found, in words
  int checked_calls = 0;                // the candidate's timed calls whose outputs were checked
  std::vector<TimingFlag> flags;
  std::optional<double> wall_s; // the measure phase: the paired blocks and their checks
  // When the measure phase had the device, as Unix time in seconds (while it held the GPU to
  // itself, when it shared one): for showing that timed windows never overlapped.
  std::optional<double> started_at_unix_s, ended_at_unix_s;
};

// Hardware counters of one side's profiled call (kbench eval --profile; docs/counters.md).
struct CountersSide {
  bool collected = false;
  std::string reason;  // when not collected: why (ncu failed, nothing was launched, ...)
  nlohmann::json call; // counters::to_json(CallCounters): `kernels[]` and `call`
  std::size_t kernels = 0;
  double wall_s = 0; // the worker under ncu, start to exit
};

// Energy per call from NVML's counter, the eager model called back to back (warm).
struct EnergySide {
  std::optional<double> joules_per_call, watts;
  long calls = 0;
  double seconds = 0;
  std::string reason; // when there is no figure: why
};

struct CountersInfo {
  std::string profile;        // "sol" or "full"
  std::string skipped_reason; // when nothing was collected: why
  std::string tool;           // the ncu that collected them
  nlohmann::json gpu;         // the peak-table row in use, or the derived figures
  CountersSide candidate, reference;
  std::optional<double> sol_score; // the candidate's call, PopcornBench's definition
  // Roofline-floor time over the measured median device time (docs/counters.md).
  std::optional<double> physical_limit_fraction;
  std::string physical_limit_detail; // how the floor was formed, or why there is no figure
  std::string roofline_svg;          // the chart's path, when written
  EnergySide candidate_energy, reference_energy;
  std::optional<double> energy_ratio; // reference joules per call over the candidate's
  double wall_s = 0;                  // the whole profile stage, energy included
};

// What each worker process did: kept so that a failure can be read in full afterwards.
// The requests a phase's worker answered, by op (docs/results.md, "phases"): where its time
// went.
struct PhaseRequests {
  std::string op; // "reference", "time_block", ...
  int count = 0;
  double first_at_s = 0; // after the worker started
  double seconds = 0;    // waiting for the answers, all of them
};

struct PhaseRecord {
  std::string phase; // "compile", "reference", "candidate", ...
  double wall_s = 0;
  std::string exit; // "running", "exited with code 0", "killed by SIGSEGV (...)"
  std::string stdout_text;
  std::string stderr_text;
  std::string started; // "forked" (by the fork server) or "spawned"; empty in older results
  std::vector<PhaseRequests> requests;
  double started_at_s = 0; // after the evaluation started: where the workers overlapped
};

// Error figures over every output of every trial that was compared elementwise: the max of the
// maxima, and means weighted by element count.
struct ErrorSummary {
  double max_abs = 0, mean_abs = 0, max_rel = 0, mean_rel = 0;
  std::size_t elements = 0;
};

// One protection of the workers' sandbox, merged over the evaluation's workers: active only if
// it was active in all of them (docs/architecture.md, "Sandbox").
struct SandboxProtection {
  std::string protection; // "network", "syscall_filter", "filesystem", "core_dumps", ...
  bool active = false;
  std::string detail; // how it was enforced, or why not
};

// Where this evaluation's reference side came from (docs/architecture.md, "Reference-side
// cache"). Each part says "cache" (reused from an earlier evaluation), "computed" (measured here,
// and stored) or is empty (not needed: no timing, no compiled baseline).
struct ReferenceCacheInfo {
  bool used = false;          // the cache was consulted; when false, `off_reason` says why
  std::string off_reason;     // "turned off (--no-reference-cache)", "several ranks", ...
  std::string key;            // sha256 of the key (problem, variant, precision, seeds, ...)
  std::string outputs;        // the seeded trials' inputs and reference outputs
  std::string outputs_from;   // the evaluation that computed them (its started_at)
  std::string compiled_ratio; // torch.compile's median over eager's, on this device
  std::optional<double> compiled_over_eager;
  std::string compiled_ratio_from; // the evaluation that measured it: started_at, candidate
  std::string inductor_dir;        // the reference process's persistent torch.compile cache
};

struct EvalResult {
  std::string kbench_version = KBENCH_VERSION; // of the binary that evaluated it
  Status status = Status::harness_error;
  std::string message; // for every status but ok: what happened and what to do
  std::string log;     // the long form behind the message (traceback, compiler output)

  std::string problem_path, problem_sha256, candidate_path, candidate_sha256;
  std::string device;      // "cuda:0", "cpu"
  std::string device_name; // "NVIDIA H200", "cpu"
  // How the GPU was shared with other evaluations of a suite (pipeline/gpu_sharing.hpp); empty
  // when it was the evaluation's own.
  std::string gpu_sharing;
  std::string variant;
  std::string precision = "fp32";
  int world_size = 1; // ranks (processes, GPUs) per side
  std::uint64_t seed = 0;
  // How torch's generators are seeded before each forward (core/seeding.hpp); empty in a
  // document read back from a kbench that did not record it (nor seed forwards).
  std::string forward_seed{kForwardSeedPolicy};
  int trials_requested = 0;
  std::optional<double> atol_override, rtol_override;

  std::vector<std::string> warnings; // about the problem or the run, not the candidate
  std::vector<StaticVerdict> static_check;
  CompileInfo compile;
  std::vector<TrialResult> trials;
  TimingInfo timing;
  std::optional<CountersInfo> counters; // with --profile
  std::vector<PhaseRecord> phases;
  std::vector<SandboxProtection> sandbox;
  ReferenceCacheInfo reference_cache;

  std::string started_at; // UTC, ISO 8601
  double wall_s = 0;
  std::string python, torch_version;

  int trials_passed() const;
  std::optional<ErrorSummary> error_summary() const; // empty when nothing was compared
};

nlohmann::json to_json(const EvalResult& result);

// Reads a `kbench.eval/1` document. Fields the document derives (correctness's counts and error
// figures) are recomputed from the trials, not read; keys this version does not know are
// ignored, missing ones keep their defaults. Another schema, or a field of the wrong type, is an
// error naming the field ("schema: expected \"kbench.eval/1\", got \"kbench.eval/2\"").
Decoded<EvalResult> result_from_json(const nlohmann::json& document);

} // namespace kbench
