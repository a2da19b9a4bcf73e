#include "pipeline/problem_checking.hpp"

#include "core/json_io.hpp"
#include "core/source_files.hpp"
#include "core/stopwatch.hpp"
#include "pipeline/worker_phase.hpp"
#include "pipeline/worker_requests.hpp"
#include "sched/paths.hpp"
#include "sched/scratch_directory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>

namespace kbench {
namespace fs = std::filesystem;

namespace {

std::string device_kind(const std::string& device) {
  return device.rfind("cuda", 0) == 0 ? "cuda" : device;
}

fs::path cache_root(const EvalOptions& options) {
  return options.cache_dir.empty() ? sched::cache_directory() : options.cache_dir;
}

// One trial's facts, from the record the worker sends once the trial's files are written.
checks::TrialFacts trial_facts(const nlohmann::json& t, const fs::path& dir) {
  checks::TrialFacts trial;
  trial.index = t.value("index", 0);
  trial.ran = t.value("ran", false);
  trial.error = t.value("error", "");
  trial.input_shapes = t.value("input_shapes", nlohmann::json());
  if (t.contains("weights_follow_seed") && t["weights_follow_seed"].is_boolean()) {
    trial.weights_follow_seed = t["weights_follow_seed"].get<bool>();
  }
  trial.repeat_identical = t.value("repeat_identical", false);
  trial.unseeded_identical = t.value("unseeded_identical", false);
  for (const auto& pair : t.value("passthrough_refuted", nlohmann::json::array())) {
    if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
      trial.passthrough_refuted.emplace_back(pair[0].get<std::string>(),
                                             pair[1].get<std::string>());
    }
  }
  const std::string stem = fmt::format("trial_{}.", trial.index);
  trial.outputs = dir / (stem + "outputs.safetensors");
  trial.repeat = dir / (stem + "repeat.safetensors");
  trial.unseeded = dir / (stem + "unseeded.safetensors");
  trial.inputs = dir / (stem + "inputs.safetensors");
  return trial;
}

// Where the trial's time went: the worker's phases (python/kbench/worker/problem_check.py;
// only those names and numbers are taken from the problem's process) and the judging here.
nlohmann::json trial_seconds(const nlohmann::json& t, const std::map<int, double>& judged) {
  nlohmann::json seconds = nlohmann::json::object();
  const auto reported = t.find("seconds");
  for (const char* phase : {"build", "calls", "timed", "outputs"}) {
    if (reported != t.end() && reported->is_object() && reported->contains(phase) &&
        (*reported)[phase].is_number()) {
      seconds[phase] = (*reported)[phase].get<double>();
    }
  }
  const auto judge = judged.find(t.value("index", -1));
  if (judge != judged.end()) {
    seconds["judge"] = judge->second;
  }
  return seconds;
}

// The problem-wide facts of the worker's answer (its trials were judged as they came).
checks::ProblemFacts problem_facts(const nlohmann::json& answer, const EvalOptions& options,
                                   bool on_gpu) {
  checks::ProblemFacts facts;
  facts.on_gpu = on_gpu;
  facts.tolerance = {options.atol, options.rtol};
  for (const auto& t : answer.value("trials", nlohmann::json::array())) {
    if (t.contains("call_us") && t["call_us"].is_number()) {
      facts.call_us = t["call_us"].get<double>();
    }
    if (t.contains("peak_memory_bytes") && t["peak_memory_bytes"].is_number()) {
      facts.peak_memory_bytes = t["peak_memory_bytes"].get<long long>();
    }
  }
  if (answer.contains("device_memory_bytes") && answer["device_memory_bytes"].is_number()) {
    facts.device_memory_bytes = answer["device_memory_bytes"].get<long long>();
  }
  return facts;
}

// The trials as the worker finishes them: each is judged at once and its files removed, so
// that a problem's scratch holds one trial's files (and the outputs a trivial-answer candidate
// still needs), not every trial's: five trials of a KernelBench level-1 problem wrote 180 GiB.
struct TrialStream {
  TrialStream(const EvalOptions& options, fs::path dir)
      : judge(compare::ToleranceOverride{options.atol, options.rtol}), dir(std::move(dir)) {}

  void add(const nlohmann::json& record) {
    const checks::TrialFacts trial = trial_facts(record, dir);
    ++judged;
    if (!error.empty()) {
      return;
    }
    const auto judging = Clock::now();
    try {
      judge.add_trial(trial);
      judge_seconds[trial.index] = seconds_since(judging);
    } catch (const std::exception& e) {
      error = std::string("the reference's outputs could not be judged: ") + e.what();
    }
    std::error_code ignored;
    for (const auto* path : {&trial.repeat, &trial.unseeded, &trial.inputs}) {
      fs::remove(*path, ignored);
    }
    if (!error.empty() || !judge.outputs_needed_again()) {
      fs::remove(trial.outputs, ignored);
    }
  }

  checks::ProblemJudge judge;
  fs::path dir;
  int judged = 0;
  std::map<int, double> judge_seconds; // by trial index: the C++ side of the trial's cost
  std::string error;
};

// The worker's interim messages: {"gpu_lane": "shared" | "exclusive" | "none"}
// (python/kbench/worker/problem_check.py), answered once the lane is held as asked, and
// {"trial": record}, answered once the trial is judged. The time spent waiting for the lane or
// the judge does not count against the check's deadline: a check queued behind a slow or
// hanging one keeps its whole deadline for its own work.
sandbox::InterimHandler interim_handler(std::optional<sched::LaneHold>& hold,
                                        sandbox::WorkerClient& worker, TrialStream& stream) {
  return [&hold, &worker, &stream](const nlohmann::json& message) -> std::optional<nlohmann::json> {
    const auto asked = Clock::now();
    struct Paused {
      sandbox::WorkerClient& worker;
      Clock::time_point asked;
      ~Paused() { worker.pause_deadline(Clock::now() - asked); }
    } paused{worker, asked};
    if (message.contains("trial") && message["trial"].is_object()) {
      stream.add(message["trial"]);
      return nlohmann::json{{"ok", true}};
    }
    const std::string wanted = message.value("gpu_lane", "");
    static const std::map<std::string, sched::LaneHold::State> states = {
        {"shared", sched::LaneHold::State::shared},
        {"exclusive", sched::LaneHold::State::exclusive},
        {"none", sched::LaneHold::State::none}};
    const auto state = states.find(wanted);
    if (!hold || state == states.end()) {
      return nlohmann::json{
          {"ok", false},
          {"message", "an interim message is a trial record, or gpu_lane (shared, exclusive or "
                      "none) in a batch on cuda"}};
    }
    hold->move_to(state->second);
    return nlohmann::json{{"ok", true}};
  };
}

} // namespace

int ProblemCheckResult::errors() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [](const auto& f) { return f.severity == "error"; }));
}

int ProblemCheckResult::warnings() const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [](const auto& f) { return f.severity == "warn"; }));
}

ProblemCheckResult check_problem(const EvalOptions& options, sched::GpuLane* lane) {
  const auto start = Clock::now();
  ProblemCheckResult result;
  result.variant = options.variant;
  result.precision = options.precision;
  result.verdict = "not checked";
  auto finish = [&]() {
    result.wall_s = seconds_since(start);
    return result;
  };
  std::string error;
  const auto problem = read_source_file(options.problem, "problem", error);
  if (!problem) {
    result.problem_path = options.problem.string();
    result.message = error;
    return finish();
  }
  result.problem_path = problem->path.string();
  result.problem_sha256 = problem->sha256;
  const DeviceChoice choice = choose_device(options.device, options.gpu);
  result.device = choice.device;
  result.device_name = choice.device_name;
  if (!choice.unsupported.empty()) {
    result.message = choice.unsupported;
    return finish();
  }

  {
    // The worker goes before its scratch directory does (declared after it).
    const auto scratch = sched::ScratchDirectory::create("kbench-problem");
    for (const char* sub : {"reference", "outputs", "tmp"}) {
      fs::create_directories(scratch / sub);
    }
    WorkerLaunch launch =
        worker_launch_for(WorkerRole::reference, choice, options.gpu, scratch / "reference",
                          scratch / "tmp", options.python, options.output_keep_bytes);
    must_read_sources(launch, result.problem_path, {});
    auto worker = launch_worker(launch);
    result.worker_started = worker->started();
    const nlohmann::json trials = trial_requests(options.seed, options.trials);
    auto request = requests::problem_check(
        result.problem_path, choice.device, options.variant, options.precision, options.seed,
        trials, scratch / "outputs", compare::loosest_tolerance({options.atol, options.rtol}));
    // Declared before the phase: whatever a dead or timed-out worker held is let go at the end.
    std::optional<sched::LaneHold> hold;
    if (lane && choice.gpu) {
      hold.emplace(*lane);
      request["gpu_lane"] = true;
    }
    TrialStream stream(options, scratch / "outputs");
    const PhaseOutcome outcome =
        run_phase(*worker, request, options.run_timeout, WorkerRole::reference,
                  "checking the problem", "", interim_handler(hold, *worker, stream));
    hold.reset();
    if (!outcome.ok) {
      result.message = outcome.message;
    } else {
      const auto trials = outcome.body.value("trials", nlohmann::json::array());
      for (const auto& t : trials) {
        result.trials.push_back({{"index", t.value("index", 0)},
                                 {"seed", t.value("seed", 0u)},
                                 {"ran", t.value("ran", false)},
                                 {"input_shapes", t.value("input_shapes", nlohmann::json())},
                                 {"error", t.value("error", "")},
                                 {"seconds", trial_seconds(t, stream.judge_seconds)}});
      }
      const auto facts = problem_facts(outcome.body, options, choice.gpu.has_value());
      result.call_us = facts.call_us;
      result.peak_memory_bytes = facts.peak_memory_bytes;
      result.device_memory_bytes = facts.device_memory_bytes;
      if (stream.judged != static_cast<int>(trials.size())) {
        result.message = fmt::format("the reference worker answered {} trials but reported {} "
                                     "as it ran them",
                                     trials.size(), stream.judged);
      } else if (!stream.error.empty()) {
        result.message = stream.error;
      } else {
        try {
          result.findings = stream.judge.findings(facts);
          result.verdict = result.errors() ? "fail" : "pass";
        } catch (const std::exception& e) {
          result.message = std::string("the reference's outputs could not be judged: ") + e.what();
        }
      }
    }
    worker->shutdown();
  }
  if (result.verdict != "not checked") {
    try {
      record_problem_check(cache_root(options), result);
    } catch (const std::exception&) {
      // The record only feeds later warnings; the check itself stands without it.
    }
  }
  return finish();
}

nlohmann::json to_json(const ProblemCheckResult& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) {
    findings.push_back({{"check", f.check}, {"severity", f.severity}, {"message", f.message}});
  }
  auto optional = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {{"schema", kProblemCheckSchema},
          {"problem", {{"path", r.problem_path}, {"sha256", r.problem_sha256}}},
          {"variant", r.variant},
          {"precision", r.precision},
          {"device", r.device},
          {"device_name", r.device_name},
          {"verdict", r.verdict},
          {"message", r.message},
          {"errors", r.errors()},
          {"warnings", r.warnings()},
          {"findings", findings},
          {"reference_call_us", optional(r.call_us)},
          {"peak_memory_bytes", optional(r.peak_memory_bytes)},
          {"device_memory_bytes", optional(r.device_memory_bytes)},
          {"trials", r.trials},
          {"worker_started", r.worker_started},
          {"wall_s", r.wall_s}};
}

fs::path problem_check_record(const fs::path& cache_dir, const std::string& problem_sha256,
                              const std::string& variant, const std::string& precision,
                              const std::string& device) {
  return cache_dir / "problem-checks" /
         fmt::format("{}-{}-{}-{}.json", problem_sha256.substr(0, 32), variant, precision,
                     device_kind(device));
}

void record_problem_check(const fs::path& cache_dir, const ProblemCheckResult& result) {
  const fs::path path = problem_check_record(cache_dir, result.problem_sha256, result.variant,
                                             result.precision, result.device);
  fs::create_directories(path.parent_path());
  write_json_file(path, to_json(result));
}

std::optional<nlohmann::json> recorded_problem_check(const fs::path& cache_dir,
                                                     const std::string& problem_sha256,
                                                     const std::string& variant,
                                                     const std::string& precision,
                                                     const std::string& device) {
  const fs::path path = problem_check_record(cache_dir, problem_sha256, variant, precision, device);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return std::nullopt;
  }
  try {
    return read_json_file(path);
  } catch (const std::exception&) {
    return std::nullopt; // a damaged record is no record
  }
}

std::optional<std::string> warn_about_checked_problem(const fs::path& cache_dir,
                                                      const std::string& problem_sha256,
                                                      const std::string& variant,
                                                      const std::string& precision,
                                                      const std::string& device) {
  const fs::path cache = cache_dir.empty() ? sched::cache_directory() : cache_dir;
  const auto record = recorded_problem_check(cache, problem_sha256, variant, precision, device);
  if (!record || (record->value("verdict", "") == "pass" && record->value("warnings", 0) == 0)) {
    return std::nullopt;
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
  return fmt::format(
      "this problem {} `kbench problems check` under variant {} ({} error(s), {} warning(s)); "
      "first: {}",
      record->value("verdict", "") == "fail" ? "failed" : "has warnings from", variant,
      record->value("errors", 0), record->value("warnings", 0), first);
}

} // namespace kbench
