#include "core/evaluation.hpp"

#include "compare/compare_outputs.hpp"
#include "core/problem_checking.hpp"
#include "core/sha256.hpp"
#include "core/source_files.hpp"
#include "core/worker_phase.hpp"
#include "measure/stats.hpp"
#include "sched/device_probe.hpp"
#include "sched/paths.hpp"

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
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
}

struct CompileOutcome {
  PhaseOutcome phase;
  CompileInfo info;
};

class Evaluation {
public:
  Evaluation(const EvalOptions& options, const ProgressCallback& progress)
      : m_options(options), m_progress(progress) {}

  EvalResult run() {
    const auto start = Clock::now();
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
    record_phases();
    m_workers.clear(); // kills whatever is still running before the scratch goes
    if (!m_options.keep_scratch && !m_scratch.empty()) {
      std::error_code ignored;
      fs::remove_all(m_scratch, ignored);
    }
    m_result.wall_s = seconds_since(start);
    return m_result;
  }

private:
  void pipeline() {
    if (!load_sources() || !resolve_device()) {
      return;
    }
    warn_about_checked_problem();
    make_scratch();
    stage("static check");
    auto& compiler = launch("compile", WorkerRole::compile);
    if (!static_check(compiler)) {
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
    // The build (CPU), the reference trials (device) and the candidate process's start (torch
    // import) do not depend on each other: they overlap.
    stage("compiling the candidate and running the reference");
    auto compile = std::async(std::launch::async, [&] { return compile_candidate(compiler); });
    auto& candidate = launch("candidate", WorkerRole::candidate);
    auto candidate_ready = std::async(std::launch::async, [&] {
      return run_phase(candidate, {{"op", "hello"}}, m_options.run_timeout, WorkerRole::candidate,
                       "starting", m_result.candidate_path);
    });
    auto& reference = launch("reference", WorkerRole::reference);
    const PhaseOutcome reference_outcome = run_reference(reference);
    const CompileOutcome compiled = compile.get();
    const PhaseOutcome candidate_started = candidate_ready.get();
    m_result.compile = compiled.info;
    if (candidate_started.ok) {
      m_result.python = candidate_started.body.value("python", "");
      m_result.torch_version = candidate_started.body.value("torch", "");
    }
    compiler.shutdown();
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

    stage("running the candidate");
    const PhaseOutcome candidate_outcome = run_candidate(candidate);
    if (!candidate_outcome.ok) {
      fail(candidate_outcome.status, candidate_outcome.message, candidate_outcome.log);
      return;
    }
    stage("comparing outputs");
    if (!compare_trials()) {
      return;
    }
    if (m_options.measure_time) {
      stage("timing");
      if (!measure(reference, candidate)) {
        return;
      }
    } else {
      m_result.timing.skipped_reason = "timing was turned off (--no-timing)";
    }
    reference.shutdown();
    candidate.shutdown();
    // The only way to `ok`: every stage above passed.
    m_result.status = Status::ok;
    m_result.message.clear();
  }

  // Every worker's output goes into the result, in the order the workers started.
  void record_phases() {
    for (auto& worker : m_workers) {
      m_result.phases.push_back(
          record_of(worker.phase, *worker.client, seconds_since(worker.start)));
    }
  }

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
    const auto problem = read_source_file(m_options.problem, "problem", error);
    if (!problem) {
      fail(Status::harness_error, error);
      return false;
    }
    m_result.problem_path = problem->path.string();
    m_result.problem_sha256 = problem->sha256;
    const auto candidate = read_source_file(m_options.candidate, "candidate", error);
    if (!candidate) {
      fail(Status::harness_error, error);
      return false;
    }
    m_result.candidate_path = candidate->path.string();
    m_result.candidate_sha256 = candidate->sha256;
    m_candidate_source = candidate->text;
    return true;
  }

  bool resolve_device() {
    m_choice = choose_device(m_options.device, m_options.gpu);
    m_result.device = m_choice.device;
    m_result.device_name = m_choice.device_name;
    if (!m_choice.unsupported.empty()) {
      fail(Status::unsupported, m_choice.unsupported);
      return false;
    }
    return true;
  }

  // A problem that failed `kbench problems check` grades unfairly: say so on every evaluation.
  void warn_about_checked_problem() {
    const fs::path cache =
        m_options.cache_dir.empty() ? sched::cache_directory() : m_options.cache_dir;
    const auto record = recorded_problem_check(cache, m_result.problem_sha256, m_options.variant,
                                               m_options.precision, m_result.device);
    if (!record || (record->value("verdict", "") == "pass" && record->value("warnings", 0) == 0)) {
      return;
    }
    std::string first;
    for (const auto& finding : record->value("findings", nlohmann::json::array())) {
      if (first.empty() || finding.value("severity", "") == "error") {
        first = finding.value("check", "") + ": " + finding.value("message", "");
        if (finding.value("severity", "") == "error") {
          break;
        }
      }
    }
    m_result.warnings.push_back(fmt::format(
        "this problem {} `kbench problems check` under variant {} ({} error(s), {} warning(s)); "
        "first: {}",
        record->value("verdict", "") == "fail" ? "failed" : "has warnings from", m_options.variant,
        record->value("errors", 0), record->value("warnings", 0), first));
  }

  void make_scratch() {
    m_scratch = sched::make_scratch_directory("kbench-eval");
    for (const char* sub : {"compile", "reference", "inputs", "candidate", "tmp"}) {
      fs::create_directories(m_scratch / sub);
    }
  }

  sandbox::WorkerClient& launch(const std::string& phase, WorkerRole role) {
    const WorkerLaunch launch =
        worker_launch_for(role, m_choice, m_options.gpu, m_scratch / phase, m_scratch / "tmp",
                          m_options.python, m_options.output_keep_bytes);
    m_workers.push_back({phase, launch_worker(launch), Clock::now()});
    return *m_workers.back().client;
  }

  bool static_check(sandbox::WorkerClient& worker) {
    const PhaseOutcome outcome =
        run_phase(worker, {{"op", "static_check"}, {"candidate", m_result.candidate_path}},
                  std::chrono::seconds(60), WorkerRole::compile, "checking the candidate's source",
                  m_result.candidate_path);
    if (!outcome.ok) {
      fail(Status::harness_error, "the static check could not run: " + outcome.message,
           outcome.log);
      return false;
    }
    std::string rejections;
    for (const auto& v : outcome.body.value("verdicts", nlohmann::json::array())) {
      StaticVerdict verdict{v.value("rule", ""), v.value("severity", "warn"),
                            v.value("message", ""), std::nullopt};
      if (v.contains("line") && v["line"].is_number_integer()) {
        verdict.line = v["line"].get<int>();
      }
      if (verdict.severity == "reject") {
        rejections += fmt::format("{}{}{}: {}", rejections.empty() ? "" : "; ",
                                  verdict.line ? fmt::format("line {} ", *verdict.line) : "",
                                  verdict.rule, verdict.message);
      }
      m_result.static_check.push_back(std::move(verdict));
    }
    if (!rejections.empty()) {
      fail(Status::static_rejected, "rejected by the static check: " + rejections);
      return false;
    }
    return true;
  }

  // The extension build directory is keyed by the candidate's source and everything that
  // changes the build, so two candidates that both call their extension `my_ext` never share
  // a directory and the same source never builds twice.
  fs::path extensions_base() const {
    Sha256 key;
    key.update(m_candidate_source);
    key.update(fmt::format("\n--device={}\n--arch={}\n--python={}\n", m_result.device,
                           m_choice.gpu ? m_choice.gpu->arch_list_entry() : "none",
                           m_options.python.string()));
    const fs::path cache =
        m_options.cache_dir.empty() ? sched::cache_directory() : m_options.cache_dir;
    return cache / "extensions" / key.hex_digest().substr(0, 32);
  }

  CompileOutcome compile_candidate(sandbox::WorkerClient& worker) {
    CompileOutcome out;
    const auto start = Clock::now();
    out.info.ran = true;
    out.info.extensions_dir = extensions_base().string();
    std::error_code ignored;
    fs::create_directories(out.info.extensions_dir, ignored);
    out.phase = run_phase(worker,
                          {{"op", "compile"},
                           {"candidate", m_result.candidate_path},
                           {"extensions_dir", out.info.extensions_dir}},
                          m_options.compile_timeout, WorkerRole::compile,
                          "importing and building the candidate", m_result.candidate_path);
    out.info.seconds = seconds_since(start);
    if (out.phase.ok) {
      out.info.extensions_dir = out.phase.body.value("extensions_dir", out.info.extensions_dir);
      out.info.cached = out.phase.body.value("cached", false);
    } else {
      if (out.phase.body.is_object()) {
        out.info.first_error = out.phase.body.value("first_error", "");
      }
      out.info.log = out.phase.log;
    }
    return out;
  }

  PhaseOutcome run_reference(sandbox::WorkerClient& worker) {
    const nlohmann::json trials = trial_requests(m_options.seed, m_options.trials);
    PhaseOutcome outcome = run_phase(worker,
                                     {{"op", "reference"},
                                      {"problem", m_result.problem_path},
                                      {"device", m_result.device},
                                      {"variant", m_options.variant},
                                      {"precision", m_options.precision},
                                      {"init_seed", m_options.seed},
                                      {"trials", trials},
                                      {"inputs_dir", (m_scratch / "inputs").string()},
                                      {"outputs_dir", (m_scratch / "reference").string()}},
                                     m_options.run_timeout, WorkerRole::reference,
                                     "running the reference's trials", "");
    if (outcome.ok) {
      for (const auto& trial : outcome.body.value("trials", nlohmann::json::array())) {
        TrialResult result;
        result.index = trial.value("index", 0);
        result.seed = trial.value("seed", 0u);
        result.input_shapes = trial.value("input_shapes", nlohmann::json::array());
        m_result.trials.push_back(std::move(result));
      }
    }
    return outcome;
  }

  PhaseOutcome run_candidate(sandbox::WorkerClient& worker) {
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& trial : m_result.trials) {
      trials.push_back({{"index", trial.index}}); // never the seed: C must not know it
    }
    return run_phase(worker,
                     {{"op", "candidate"},
                      {"candidate", m_result.candidate_path},
                      {"device", m_result.device},
                      {"precision", m_options.precision},
                      {"extensions_dir", m_result.compile.extensions_dir},
                      {"init_seed", m_options.seed},
                      {"trials", trials},
                      {"inputs_dir", (m_scratch / "inputs").string()},
                      {"outputs_dir", (m_scratch / "candidate").string()}},
                     m_options.run_timeout, WorkerRole::candidate, "running the candidate's trials",
                     m_result.candidate_path);
  }

  bool compare_trials() {
    const compare::ToleranceOverride override_{m_options.atol, m_options.rtol};
    std::string first_failure;
    for (auto& trial : m_result.trials) {
      const auto name = fmt::format("trial_{}.outputs.safetensors", trial.index);
      const auto comparison = compare::compare_output_files(
          m_scratch / "candidate" / name, m_scratch / "reference" / name, override_);
      trial.passed = comparison.passed;
      trial.failure = comparison.failure;
      for (const auto& [output_name, result] : comparison.outputs) {
        trial.outputs.push_back({output_name, result});
      }
      if (!trial.passed && first_failure.empty()) {
        first_failure = fmt::format("trial {}: {}", trial.index, trial.failure);
      }
    }
    if (first_failure.empty()) {
      return true;
    }
    fail(Status::incorrect, fmt::format("{} of {} trials passed; {}", m_result.trials_passed(),
                                        m_result.trials.size(), first_failure));
    m_result.timing.skipped_reason = "only correct candidates are timed";
    return false;
  }

  std::optional<TimingSide> time_side(sandbox::WorkerClient& worker, WorkerRole role) {
    const nlohmann::json request = {{"op", "time"},
                                    {"warmup", m_options.warmup},
                                    {"iterations", m_options.timing_iterations},
                                    {"flush_l2", true}};
    const char* doing = role == WorkerRole::reference ? "timing the reference" : "timing ModelNew";
    const PhaseOutcome outcome =
        run_phase(worker, request, m_options.run_timeout, role, doing, m_result.candidate_path);
    if (!outcome.ok) {
      fail(outcome.status, outcome.message, outcome.log);
      return std::nullopt;
    }
    TimingSide side;
    side.method = outcome.body.value("method", "");
    side.l2_flush = outcome.body.value("l2_flush", false);
    for (const auto& sample : outcome.body.value("samples_us", nlohmann::json::array())) {
      if (sample.is_number() && sample.get<double>() >= 0) {
        side.samples_us.push_back(sample.get<double>());
      }
    }
    side.stats_us = measure::summarize(side.samples_us);
    return side;
  }

  bool measure(sandbox::WorkerClient& reference, sandbox::WorkerClient& candidate) {
    auto candidate_side = time_side(candidate, WorkerRole::candidate);
    if (!candidate_side) {
      return false;
    }
    auto reference_side = time_side(reference, WorkerRole::reference);
    if (!reference_side) {
      return false;
    }
    m_result.timing.measured = true;
    if (candidate_side->stats_us.median > 0) {
      m_result.timing.speedup = reference_side->stats_us.median / candidate_side->stats_us.median;
    }
    m_result.timing.candidate = std::move(candidate_side);
    m_result.timing.reference = std::move(reference_side);
    return true;
  }

  const EvalOptions& m_options;
  const ProgressCallback& m_progress;
  EvalResult m_result;
  std::string m_candidate_source;
  DeviceChoice m_choice;
  fs::path m_scratch;
  struct LiveWorker {
    std::string phase;
    std::unique_ptr<sandbox::WorkerClient> client;
    Clock::time_point start;
  };
  std::vector<LiveWorker> m_workers;
};

} // namespace

EvalResult evaluate(const EvalOptions& options, const ProgressCallback& progress) {
  return Evaluation(options, progress).run();
}

} // namespace kbench
