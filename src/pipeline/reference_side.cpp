#include "pipeline/reference_side.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kbench {
namespace fs = std::filesystem;

ReferenceSide::ReferenceSide(const EvalOptions& options, EvalResult& result)
    : m_options(options), m_result(result), m_store(reference_cache_root(options.cache_dir)) {}

void ReferenceSide::decide(int world_size) {
  auto& info = m_result.reference_cache;
  const auto filesystem =
      std::find_if(m_result.sandbox.begin(), m_result.sandbox.end(),
                   [](const SandboxProtection& p) { return p.protection == "filesystem"; });
  if (m_options.no_reference_cache) {
    info.off_reason = "turned off (--no-reference-cache)";
  } else if (world_size > 1) {
    info.off_reason = "not used for several ranks";
  } else if (filesystem == m_result.sandbox.end() || !filesystem->active) {
    // Without Landlock a candidate could read the cached outputs, or write into the cache and
    // so grade later candidates.
    info.off_reason = "not used: the filesystem protection is off, so the candidate's workers "
                      "could read or write the cache";
  } else {
    info.used = true;
    m_key.problem_sha256 = m_result.problem_sha256;
    m_key.variant = m_options.variant;
    m_key.precision = m_options.precision;
    m_key.device_name = m_result.device_name;
    m_key.worker_version = worker_code_version(worker_package_directory());
    m_key.seed = m_options.seed;
    if (m_result.device != "cpu") {
      m_inductor_dir = m_store.inductor_directory(m_key.device_name, m_key.worker_version);
      info.inductor_dir = m_inductor_dir.string();
    }
  }
}

void ReferenceSide::confine(WorkerLaunch& launch, WorkerRole role) const {
  auto& policy = launch.sandbox;
  if (role != WorkerRole::reference) {
    // Whether or not this evaluation uses it: entries of earlier ones are there.
    policy.unreadable.push_back(m_store.root());
    return;
  }
  if (m_inductor_dir.empty()) {
    return;
  }
  launch.environment["TORCHINDUCTOR_CACHE_DIR"] = (m_inductor_dir / "inductor").string();
  launch.environment["TRITON_CACHE_DIR"] = (m_inductor_dir / "triton").string();
  policy.writable.push_back(m_inductor_dir);
  if (policy.user) {
    policy.handed_over.push_back(m_inductor_dir);
  }
}

nlohmann::json ReferenceSide::trials_to_run(const nlohmann::json& trials,
                                            const std::string& torch_version,
                                            const fs::path& inputs_dir,
                                            const fs::path& outputs_dir) {
  auto& info = m_result.reference_cache;
  if (!on() || trials.empty()) {
    return trials;
  }
  m_key.torch_version = torch_version;
  m_key.trials = nlohmann::json(trials.begin(), trials.end() - 1); // the held-out one is last
  info.key = key_digest(m_key);
  std::string warning;
  m_cached_trials = m_store.load_trials(m_key, inputs_dir, outputs_dir, info.outputs_from, warning);
  if (!warning.empty()) {
    m_result.warnings.push_back(warning);
  }
  if (!m_cached_trials) {
    info.outputs = "computed";
    return trials;
  }
  info.outputs = "cache";
  nlohmann::json out = nlohmann::json::array();
  for (const auto& trial : m_key.trials) {
    out.push_back({{"index", trial["index"]}, {"seed", trial["seed"]}, {"cached", true}});
  }
  out.push_back(trials.back());
  return out;
}

nlohmann::json ReferenceSide::complete_answer(const nlohmann::json& answer,
                                              const fs::path& inputs_dir,
                                              const fs::path& outputs_dir) {
  if (!on() || !answer.contains("trials")) {
    return answer;
  }
  nlohmann::json out = answer;
  if (m_cached_trials) {
    nlohmann::json trials = *m_cached_trials;
    for (const auto& trial : answer["trials"]) {
      trials.push_back(trial);
    }
    out["trials"] = trials;
    return out;
  }
  nlohmann::json seeded = nlohmann::json::array();
  for (const auto& trial : answer["trials"]) {
    const bool is_seeded = std::any_of(m_key.trials.begin(), m_key.trials.end(), [&](auto& t) {
      return t["index"] == trial["index"] && t["seed"] == trial["seed"];
    });
    if (is_seeded) {
      seeded.push_back(trial);
    }
  }
  if (seeded.size() == m_key.trials.size()) {
    if (auto warning =
            m_store.store_trials(m_key, seeded, inputs_dir, outputs_dir, m_result.started_at);
        !warning.empty()) {
      m_result.warnings.push_back(std::move(warning));
    }
  }
  return out;
}

bool ReferenceSide::compiled_ratio_cached() {
  if (!on() || m_result.device == "cpu" || m_options.no_compile_baseline) {
    return false;
  }
  std::string warning;
  m_ratio = m_store.load_ratio(m_key, warning);
  if (!warning.empty()) {
    m_result.warnings.push_back(warning);
  }
  return m_ratio.has_value();
}

void ReferenceSide::finish_timing(TimingInfo& timing) {
  auto& info = m_result.reference_cache;
  if (!on() || !timing.speedup) {
    return;
  }
  if (m_ratio) {
    // speedup_vs_compiled = compiled / candidate = (eager / candidate) * (compiled / eager): the
    // eager side and the candidate were timed now, paired; the ratio is the reference's alone.
    const double r = m_ratio->compiled_over_eager;
    timing.speedup_vs_compiled = *timing.speedup * r;
    if (timing.speedup_ci) {
      timing.speedup_vs_compiled_ci =
          Interval{timing.speedup_ci->low * r, timing.speedup_ci->high * r};
    }
    timing.compiled_skipped_reason.clear();
    info.compiled_ratio = "cache";
    info.compiled_over_eager = r;
    info.compiled_ratio_from =
        fmt::format("the evaluation of {} (candidate sha256 {})", m_ratio->measured_at,
                    m_ratio->candidate_sha256.substr(0, 12));
    return;
  }
  if (!timing.reference_compiled || !timing.reference ||
      timing.reference_compiled->stats_us.n == 0 || timing.reference->stats_us.n == 0 ||
      !(timing.reference->stats_us.median > 0)) {
    return;
  }
  const double r = timing.reference_compiled->stats_us.median / timing.reference->stats_us.median;
  info.compiled_ratio = "computed";
  info.compiled_over_eager = r;
  info.compiled_ratio_from = "this evaluation";
  if (auto warning =
          m_store.store_ratio(m_key, {r, m_result.started_at, m_result.candidate_sha256});
      !warning.empty()) {
    m_result.warnings.push_back(std::move(warning));
  }
}

} // namespace kbench
