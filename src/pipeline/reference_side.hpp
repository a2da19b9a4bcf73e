#pragma once
// How one evaluation uses the reference-side cache (pipeline/reference_cache.hpp): whether it
// may, what the workers' sandboxes must say about it, which trials the reference still runs,
// and the compiled baseline's ratio. Everything it decides goes into EvalResult::reference_cache.
#include "core/options.hpp"
#include "core/result.hpp"
#include "pipeline/reference_cache.hpp"
#include "pipeline/worker_phase.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace kbench {

class ReferenceSide {
public:
  ReferenceSide(const EvalOptions& options, EvalResult& result);

  // Once the compile and candidate workers run (their protections are in the result): the
  // cache is used only where those workers cannot read or write it.
  void decide(int world_size);
  bool on() const { return m_result.reference_cache.used; }

  // Every worker: compile and candidate workers may not read the cache's root; the reference
  // worker gets the persistent torch.compile directory (GPU evaluations, cache on).
  void confine(WorkerLaunch& launch, WorkerRole role) const;

  // The reference's trial request (`trials`: the seeded ones, then the held-out one). On a hit
  // the seeded trials' files are copied into the scratch directories and marked "cached": the
  // reference builds the first one's model for timing and runs only the held-out trial.
  nlohmann::json trials_to_run(const nlohmann::json& trials, const std::string& torch_version,
                               const std::filesystem::path& inputs_dir,
                               const std::filesystem::path& outputs_dir);
  // The reference's answer with the cached trials put back; on a miss, stores the seeded ones.
  nlohmann::json complete_answer(const nlohmann::json& answer,
                                 const std::filesystem::path& inputs_dir,
                                 const std::filesystem::path& outputs_dir);

  // Before timing: true when the compiled baseline need not be timed (its ratio is cached).
  bool compiled_ratio_cached();
  // After timing: the speedup over torch.compile from the cached ratio, or the measured ratio
  // stored for later evaluations.
  void finish_timing(TimingInfo& timing);

private:
  const EvalOptions& m_options;
  EvalResult& m_result;
  ReferenceStore m_store;
  ReferenceCacheKey m_key;
  std::filesystem::path m_inductor_dir;
  std::optional<nlohmann::json> m_cached_trials;
  std::optional<CompiledRatio> m_ratio;
};

} // namespace kbench
