#include "pipeline/evaluation.hpp"

#include "compare/compare_outputs.hpp"
#include "core/source_files.hpp"
#include "core/stopwatch.hpp"
#include "counters/gpu_specs.hpp"
#include "pipeline/dynamic_rules.hpp"
#include "pipeline/header_cache.hpp"
#include "pipeline/inputs_hand_over.hpp"
#include "pipeline/paired_timing.hpp"
#include "pipeline/problem_checking.hpp"
#include "pipeline/profiling.hpp"
#include "pipeline/rank_group.hpp"
#include "pipeline/reference_side.hpp"
#include "pipeline/static_check.hpp"
#include "pipeline/trial_comparison.hpp"
#include "pipeline/trial_stage.hpp"
#include "pipeline/trivial_problem.hpp"
#include "pipeline/worker_phase.hpp"
#include "pipeline/worker_requests.hpp"
#include "sched/device_probe.hpp"
#include "sched/paths.hpp"
#include "sched/scratch_directory.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kbench {
namespace fs = std::filesystem;

namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
}

class Evaluation {
public:
  Evaluation(const EvalOptions& options, const ProgressCallback& progress,
             const GpuSharing& sharing)
      : m_options(options), m_progress(progress), m_sharing(sharing) {}

  EvalResult run() {
    const auto start = m_start;
    const GpuSection whole(m_sharing.alone ? m_sharing.lane : nullptr,
                           sched::LaneHold::State::exclusive);
    m_result.gpu_sharing = gpu_sharing_note(m_sharing);
    m_result.started_at = utc_now();
    m_result.seed = m_options.seed;
    m_result.variant = m_options.variant;
    m_result.precision = m_options.precision;
    m_result.trials_requested = m_options.trials;
    m_result.atol_override = m_options.atol;
    m_result.rtol_override = m_options.rtol;
    try {
      pipeline();
    } catch (const std::exception& error) {
      fail(Status::harness_error, std::string("kbench failed: ") + error.what());
    }
    apply_trivial_verdict(m_trivial, m_result); // after timing, which replaces m_result.timing
    record_phases();
    m_workers.clear(); // kills whatever is still running before the scratch goes
    m_scratch.reset();
    m_result.wall_s = seconds_since(start);
    return m_result;
  }

private:
  void pipeline() {
    if (!load_sources() || !resolve_device()) {
      return;
    }
    if (auto warning =
            warn_about_checked_problem(m_options.cache_dir, m_result.problem_sha256,
                                       m_options.variant, m_options.precision, m_result.device)) {
      m_result.warnings.push_back(std::move(*warning)); // a problem that grades unfairly
    }
    make_scratch();
    stage("static check");
    auto& compiler = launch("compile", WorkerRole::compile);
    if (!judge_statically(compiler,
                          requests::static_check(m_result.candidate_path, m_options.backend,
                                                 m_result.problem_path, m_options.rules),
                          m_result, m_own_kernel_share)) {
      return;
    }
    if (m_options.compile_only) {
      stage("compiling the candidate");
      const CompileOutcome compiled = compile_candidate(compiler);
      m_result.compile = compiled.info;
      m_result.timing.skipped_reason = "compile only";
      if (!compiled.phase.ok) {
        fail(compiled.phase.status, compiled.phase.message, compiled.phase.log);
        return;
      }
      m_result.status = Status::ok;
      return;
    }
    stage("compiling the candidate and running the reference");
    const auto candidate = launch_ranks("candidate", WorkerRole::candidate);
    m_reference_side.decide(m_world); // the compile and candidate workers' protections are known
    const auto reference = launch_ranks("reference", WorkerRole::reference);
    const nlohmann::json planned = reference_trials(m_options.seed, m_options.trials);
    TrialStageSteps steps;
    steps.compile = [&] { return compile_candidate(compiler); };
    steps.candidate_hello = [&] {
      return run_ranks(
                 candidate, [](int) { return requests::hello(); }, m_options.run_timeout,
                 WorkerRole::candidate, "starting", m_result.candidate_path)
          .first;
    };
    steps.reference_trials = [&] {
      PhaseOutcome outcome = run_reference(reference, planned);
      if (!outcome.ok) {
        mark_reference_failed(m_scratch); // a C waiting for inputs stops at once
      }
      return outcome;
    };
    steps.judge_trivial = [&] {
      std::vector<int> indices;
      for (const auto& trial : planned) {
        indices.push_back(trial.value("index", 0));
      }
      return judge_trivial_answers(m_scratch, indices, {m_options.atol, m_options.rtol});
    };
    steps.candidate_trials = [&] {
      stage("running the candidate");
      return run_candidate(candidate, planned);
    };
    auto trials = [&] {
      const GpuSection beside_others(section_lane(), sched::LaneHold::State::shared);
      return run_trial_stage(steps, [&](const TrialStageOutcome& started) {
        m_result.compile = started.compiled.info;
        if (started.candidate_started.ok) {
          m_result.python = started.candidate_started.body.value("python", "");
          m_result.torch_version = started.candidate_started.body.value("torch", "");
        }
        compiler.shutdown();
      });
    }();
    m_trivial = std::move(trials.trivial);
    const auto& [compiled, candidate_started, reference_outcome, candidate_outcome, _] = trials;
    if (!compiled.phase.ok) {
      fail(compiled.phase.status, compiled.phase.message, compiled.phase.log);
      return;
    }
    if (!reference_outcome.ok) {
      fail(reference_outcome.status, reference_outcome.message, reference_outcome.log);
      return;
    }
    if (!candidate_started.ok) {
      fail(Status::harness_error,
           "the candidate worker did not start: " + candidate_started.message,
           candidate_started.log);
      return;
    }
    if (!candidate_outcome.ok) {
      fail(candidate_outcome.status, candidate_outcome.message, candidate_outcome.log);
      return;
    }
    stage("comparing outputs");
    if (!compare_trials()) {
      return;
    }
    // Measuring and profiling with the GPU to this evaluation alone; waiting for it is not
    // timing's wall time.
    std::optional<GpuSection> gpu_to_itself;
    if (!m_options.no_timing || !m_options.profile.empty()) {
      gpu_to_itself.emplace(section_lane(), sched::LaneHold::State::exclusive);
    }
    if (!m_options.no_timing) {
      stage("timing");
      const auto timing_start = Clock::now();
      const double started_at_unix_s = unix_seconds();
      const bool measured = measure(reference, candidate); // replaces m_result.timing
      m_result.timing.wall_s = seconds_since(timing_start);
      m_result.timing.started_at_unix_s = started_at_unix_s;
      m_result.timing.ended_at_unix_s = unix_seconds();
      if (!measured) {
        return;
      }
    } else {
      m_result.timing.skipped_reason = "timing was turned off (--no-timing)";
    }
    if (!apply_dynamic_rules(m_own_kernel_share, m_result)) {
      return;
    }
    if (!m_options.profile.empty()) {
      profile(reference, candidate);
    }
    for (auto* worker : reference) {
      worker->shutdown();
    }
    for (auto* worker : candidate) {
      worker->shutdown();
    }
    // The only way to `ok`: every stage above passed.
    m_result.status = Status::ok;
    m_result.message.clear();
  }

  // Every worker's output goes into the result, in the order the workers started.
  void record_phases() {
    for (auto& worker : m_workers) {
      m_result.phases.push_back(record_of(worker.phase, *worker.client, m_start));
    }
  }

  // The lane the trial stage and the measurement take their sections of; none when the
  // evaluation holds the whole GPU already (or has it to itself).
  sched::GpuLane* section_lane() const { return m_sharing.alone ? nullptr : m_sharing.lane; }

  void stage(std::string_view name) {
    if (m_progress) {
      m_progress(name);
    }
  }

  void fail(Status status, std::string message, std::string log = {}) {
    m_result.status = status;
    m_result.message = std::move(message);
    m_result.log = std::move(log);
  }

  bool load_sources() {
    std::string error;
    auto sources = load_evaluation_sources(m_options, error);
    if (!sources) {
      fail(Status::harness_error, error);
      return false;
    }
    m_result.problem_path = sources->problem.path.string();
    m_result.problem_sha256 = sources->problem.sha256;
    m_world = m_result.world_size = sources->world_size;
    m_result.candidate_path = sources->candidate.path.string();
    m_result.candidate_sha256 = sources->candidate.sha256;
    m_candidate_source = std::move(sources->candidate.text);
    return true;
  }

  bool resolve_device() {
    m_choice = choose_device(m_options.device, m_options.gpu, m_world);
    m_result.device = m_choice.device;
    m_result.device_name = m_choice.device_name;
    if (!m_choice.unsupported.empty()) {
      fail(Status::unsupported, m_choice.unsupported);
      return false;
    }
    return true;
  }

  void make_scratch() {
    m_scratch = sched::ScratchDirectory::for_evaluation(m_world, m_options.keep_scratch);
  }

  std::string device_for_rank(int rank) const {
    return m_result.device == "cpu" ? m_result.device : fmt::format("cuda:{}", rank);
  }

  // `phase` names the worker in the result ("candidate.rank1"); it works in `directory`
  // (the scratch directory of its phase by default).
  sandbox::WorkerClient& launch(const std::string& phase, WorkerRole role,
                                const sandbox::EnvironmentMap& extra = {},
                                const fs::path& directory = {},
                                const std::vector<std::string>& wrapper = {}) {
    WorkerLaunch launch = worker_launch_for(
        role, m_choice, m_options.gpu, directory.empty() ? m_scratch / phase : directory,
        m_scratch / "tmp", m_options.python, m_options.output_keep_bytes, m_scratch.path(),
        extensions_base());
    launch.environment.insert(extra.begin(), extra.end());
    launch.wrapper = wrapper;
    if (const auto pch = pch_root(m_options.cache_dir);
        pch && offer_pch(launch, role, *pch) && role == WorkerRole::compile) {
      m_pch_dir = pch;
    }
    if (const auto aten = aten_subset_root(m_options.cache_dir)) {
      offer_aten_subset(launch, role, *aten, m_options.python);
    }
    if (const auto host = host_pch_root(m_options.cache_dir);
        host && offer_host_pch(launch, role, *host) && role == WorkerRole::compile) {
      m_host_pch_dir = host;
    }
    m_reference_side.confine(launch, role);
    must_read_sources(launch, m_result.problem_path, m_result.candidate_path);
    // CPU time over all the worker's threads: twice every deadline it may meet, on every core.
    const auto deadlines = m_options.compile_timeout + 4 * m_options.run_timeout +
                           std::chrono::seconds(static_cast<long>(m_options.timing_timeout));
    launch.limits.cpu_seconds = cpu_seconds_limit(deadlines);
    m_workers.push_back({phase, launch_worker(launch)});
    record_protections(m_result, m_workers.back().client->protections());
    if (const auto& warning = m_workers.back().client->start_warning(); !warning.empty()) {
      m_result.warnings.push_back(warning);
    }
    return *m_workers.back().client;
  }

  std::vector<sandbox::WorkerClient*> launch_ranks(const std::string& phase, WorkerRole role) {
    return kbench::launch_ranks(phase, m_scratch,
                                [&](const std::string& name, const sandbox::EnvironmentMap& extra,
                                    const fs::path& directory) -> sandbox::WorkerClient& {
                                  return launch(name, role, extra, directory);
                                });
  }

  fs::path extensions_base() const {
    return sched::extension_build_directory(
        m_options.cache_dir, m_candidate_source,
        fmt::format("\n--device={}\n--arch={}\n--python={}\n{}", m_result.device,
                    m_choice.gpu ? m_choice.gpu->arch_list_entry() : "none",
                    m_options.python.string(), worker_user_build_setting()));
  }

  CompileOutcome compile_candidate(sandbox::WorkerClient& worker) {
    return compile_with_pch(worker, m_pch_dir, m_options.python, m_result.candidate_path,
                            extensions_base(), m_options.compile_timeout, m_host_pch_dir);
  }

  nlohmann::json reference_request(int rank, const nlohmann::json& trials,
                                   const fs::path& inputs_dir, const fs::path& outputs_dir) const {
    return requests::reference(m_result.problem_path, device_for_rank(rank), m_options.variant,
                               m_options.precision, m_options.seed, trials, inputs_dir,
                               outputs_dir);
  }

  nlohmann::json candidate_request(int rank, const nlohmann::json& trials,
                                   const fs::path& inputs_dir, const fs::path& outputs_dir) const {
    return requests::candidate(m_result.candidate_path, m_result.problem_path,
                               device_for_rank(rank), m_options.variant, m_options.precision,
                               m_result.compile.extensions_dir, m_options.seed, trials, inputs_dir,
                               outputs_dir);
  }

  PhaseOutcome run_reference(const std::vector<sandbox::WorkerClient*>& ranks,
                             nlohmann::json trials) {
    if (m_reference_side.on()) {
      // The cache is keyed by the reference process's torch.
      const PhaseOutcome hello = run_phase(*ranks[0], requests::hello(), m_options.run_timeout,
                                           WorkerRole::reference, "starting", "");
      if (!hello.ok) {
        return hello;
      }
      trials = m_reference_side.trials_to_run(trials, hello.body.value("torch", ""),
                                              m_scratch.rank_dir("inputs", 0),
                                              m_scratch.rank_dir("reference", 0));
      mark_cached_inputs_ready(m_scratch.rank_dir("inputs", 0), trials);
    }
    const auto request = [&](int rank) {
      return reference_request(rank, trials, m_scratch.rank_dir("inputs", rank),
                               m_scratch.rank_dir("reference", rank));
    };
    PhaseOutcome outcome = run_ranks(ranks, request, m_options.run_timeout, WorkerRole::reference,
                                     "running the reference's trials", "")
                               .first;
    if (outcome.ok) {
      outcome.body = m_reference_side.complete_answer(outcome.body, m_scratch.rank_dir("inputs", 0),
                                                      m_scratch.rank_dir("reference", 0));
      m_result.trials = trials_from_reference(outcome.body, m_options.trials);
    }
    return outcome;
  }

  // C's trials are the planned ones (index, forward seed): it needs nothing of R's answer, only
  // each trial's inputs, which it waits for.
  PhaseOutcome run_candidate(const std::vector<sandbox::WorkerClient*>& ranks,
                             const nlohmann::json& planned) {
    const nlohmann::json trials =
        candidate_trials(trials_from_reference({{"trials", planned}}, m_options.trials));
    const auto request = [&](int rank) {
      return candidate_request(rank, trials, m_scratch.rank_dir("inputs", rank),
                               m_scratch.rank_dir("candidate", rank));
    };
    return run_ranks(ranks, request, m_options.run_timeout, WorkerRole::candidate,
                     "running the candidate's trials", m_result.candidate_path)
        .first;
  }

  bool compare_trials() {
    const std::string first_failure =
        kbench::compare_trials(m_scratch, m_result.trials, {m_options.atol, m_options.rtol});
    if (first_failure.empty()) {
      return true;
    }
    fail(Status::incorrect, fmt::format("{} of {} trials passed; {}", m_result.trials_passed(),
                                        m_result.trials.size(), first_failure));
    m_result.timing.skipped_reason = "only correct candidates are timed";
    return false;
  }

  bool measure(const std::vector<sandbox::WorkerClient*>& reference,
               const std::vector<sandbox::WorkerClient*>& candidate) {
    if (m_world > 1) {
      return measure_ranks(reference, candidate);
    }
    PairedTimingSetup setup;
    setup.shape_seed = m_result.trials.empty() ? 0 : m_result.trials.front().seed;
    setup.reference = reference[0];
    setup.candidate = candidate[0];
    setup.cuda = m_result.device != "cpu";
    if (m_choice.gpu) {
      setup.peak_bandwidth_bytes_per_s =
          counters::resolve_specs(*m_choice.gpu).dram_bandwidth_gbs.value * 1e9;
    }
    setup.candidate_path = m_result.candidate_path;
    setup.reference_dir = m_scratch / "reference";
    setup.candidate_dir = m_scratch / "candidate";
    TimingSettings settings = timing_settings(m_options);
    if (m_reference_side.compiled_ratio_cached()) {
      settings.compile_baseline = false; // its ratio to eager is cached: not built, not timed
    }
    PairedTimingOutcome outcome = run_paired_timing(settings, setup);
    m_call_bytes = outcome.call_bytes;
    if (!outcome.ok) {
      fail(outcome.failure.status, outcome.failure.message, outcome.failure.log);
      if (outcome.failure.status == Status::impossible_timing) {
        m_result.timing = std::move(outcome.timing); // what was measured, without a speedup
      } else {
        m_result.timing.spot_checks = outcome.timing.spot_checks;
      }
      return false;
    }
    m_result.timing = std::move(outcome.timing);
    m_reference_side.finish_timing(m_result.timing);
    return true;
  }

  // Counters and energy (--profile): after timing, in fresh workers under Nsight Compute. They
  // describe a correct, timed candidate and never change its status.
  void profile(const std::vector<sandbox::WorkerClient*>& reference,
               const std::vector<sandbox::WorkerClient*>& candidate) {
    if (auto skipped = counters_not_collected(
            m_options.profile, m_result.device != "cpu" && m_choice.gpu.has_value(), m_world)) {
      m_result.counters = std::move(*skipped);
      return;
    }
    ProfileSetup setup;
    setup.settings = profile_settings(m_options);
    setup.launch = [this](const std::string& phase, WorkerRole role,
                          const std::vector<std::string>& wrapper,
                          const fs::path& directory) -> sandbox::WorkerClient& {
      return launch(phase, role, {}, directory, wrapper);
    };
    setup.first_trial = [this](WorkerRole role, const fs::path& directory) {
      return first_trial_request(role, directory);
    };
    setup.scratch = m_scratch.path();
    setup.gpu = *m_choice.gpu;
    setup.candidate_path = m_result.candidate_path;
    if (m_result.timing.candidate && m_result.timing.candidate->stats_us.n > 0) {
      setup.candidate_median_us = m_result.timing.candidate->stats_us.median;
    }
    setup.min_bytes = m_call_bytes;
    m_result.counters = profile_timed_candidate(*reference[0], *candidate[0], setup,
                                                [this](const char* name) { stage(name); });
  }

  // One trial (the first) in a fresh worker, its files under `directory`: the session a
  // profiled call needs. The candidate reads the inputs R wrote; the reference writes its own.
  nlohmann::json first_trial_request(WorkerRole role, const fs::path& directory) const {
    const TrialResult& first = m_result.trials.front();
    fs::create_directories(directory / "outputs");
    if (role == WorkerRole::candidate) {
      return candidate_request(0, nlohmann::json::array({{{"index", first.index}}}),
                               m_scratch / "inputs", directory / "outputs");
    }
    fs::create_directories(directory / "inputs");
    return reference_request(
        0, nlohmann::json::array({{{"index", first.index}, {"seed", first.seed}}}),
        directory / "inputs", directory / "outputs");
  }

  // Several ranks: each side timed on its own, every sample from a barrier to the last rank.
  bool measure_ranks(const std::vector<sandbox::WorkerClient*>& reference,
                     const std::vector<sandbox::WorkerClient*>& candidate) {
    const nlohmann::json request =
        requests::time(m_options.warmup, m_options.iterations > 0 ? m_options.iterations : 30);
    RankTiming timed = kbench::measure_ranks(reference, candidate, request, m_options.run_timeout,
                                             m_result.candidate_path);
    if (!timed.ok) {
      fail(timed.failure.status, timed.failure.message, timed.failure.log);
      return false;
    }
    m_result.timing = std::move(timed.timing);
    return true;
  }

  const EvalOptions& m_options;
  const Clock::time_point m_start = Clock::now(); // where every phase's started_at_s counts from
  const ProgressCallback& m_progress;
  const GpuSharing m_sharing;
  EvalResult m_result;
  ReferenceSide m_reference_side{m_options, m_result};
  std::string m_candidate_source;
  std::optional<OwnKernelShareRule> m_own_kernel_share; // the rule set's, from the static check
  std::optional<fs::path> m_pch_dir;      // KBENCH_PCH_DIR of the compile worker, when it has one
  std::optional<fs::path> m_host_pch_dir; // its KBENCH_HOST_PCH_DIR, likewise
  DeviceChoice m_choice;
  // Declared before m_workers, so that the workers are gone before it removes the directory even
  // where run() did not order them.
  sched::ScratchDirectory m_scratch;
  int m_world = 1;
  TrivialVerdict m_trivial;      // does an answer that computes nothing pass the problem?
  std::int64_t m_call_bytes = 0; // one call's inputs and outputs (the roofline's memory floor)
  struct LiveWorker {
    std::string phase;
    std::unique_ptr<sandbox::WorkerClient> client;
  };
  std::vector<LiveWorker> m_workers;
};

} // namespace

EvalResult evaluate(const EvalOptions& options, const ProgressCallback& progress,
                    const GpuSharing& sharing) {
  return Evaluation(options, progress, sharing).run();
}

} // namespace kbench
