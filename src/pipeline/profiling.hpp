#pragma once
// `kbench eval --profile` (docs/architecture.md, "Counters"), after timing and never during it:
// energy per call in the timing workers, then each side's call profiled by Nsight Compute in a
// fresh worker that runs one trial and then that call between cudaProfilerStart and Stop.
// Counters, SOL score, the fraction of the physical limit and the roofline chart:
// docs/counters.md. Profiling sees only ProfileSettings, made once from the options at the
// pipeline's boundary.
#include "core/result.hpp"
#include "pipeline/worker_phase.hpp"
#include "sched/device_probe.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct EvalOptions;

// What profiling reads from the evaluation's options, and nothing else.
struct ProfileSettings {
  std::string profile;            // the counter set: "sol" or "full" (src/counters/ncu_metrics.txt)
  std::filesystem::path roofline; // where to write the roofline chart as SVG (empty: nowhere)
  std::chrono::seconds run_timeout{300}; // per request to a worker
};

ProfileSettings profile_settings(const EvalOptions& options);

struct ProfileSetup {
  ProfileSettings settings;
  // Starts a worker of `role` named `phase` in `directory`, under `wrapper` (ncu and its flags).
  std::function<sandbox::WorkerClient&(const std::string& phase, WorkerRole role,
                                       const std::vector<std::string>& wrapper,
                                       const std::filesystem::path& directory)>
      launch;
  // The request that runs one trial in a fresh worker of `role`, its files under `directory`.
  std::function<nlohmann::json(WorkerRole role, const std::filesystem::path& directory)>
      first_trial;
  std::filesystem::path scratch;
  sched::GpuInfo gpu;
  std::string candidate_path;
  std::optional<double> candidate_median_us; // the measured device time per call
  std::int64_t min_bytes = 0;                // one call's inputs and outputs
};

// Energy per call of the model in `worker` (a timing worker, after its blocks).
EnergySide measure_energy(sandbox::WorkerClient& worker, WorkerRole role,
                          const ProfileSettings& settings, const std::string& candidate_path);

CountersInfo collect_counters(const ProfileSetup& setup);

// Counters where they cannot be collected, every side saying why (the CPU, several ranks);
// nullopt where they can.
std::optional<CountersInfo> counters_not_collected(const std::string& profile, bool on_gpu,
                                                   int world_size);

// Puts both sides' energy into the counters, with their ratio (reference over candidate).
void add_energy(CountersInfo& info, EnergySide candidate, EnergySide reference);

// --profile after timing: energy per call in the evaluation's own workers, then the counters in
// fresh ones under Nsight Compute (`setup`), with the whole stage's wall time. `stage` names
// each step for the progress line.
CountersInfo profile_timed_candidate(sandbox::WorkerClient& reference,
                                     sandbox::WorkerClient& candidate, const ProfileSetup& setup,
                                     const std::function<void(const char*)>& stage);

} // namespace kbench
