#include "pipeline/static_check.hpp"

#include "pipeline/worker_requests.hpp"
#include "sched/scratch_directory.hpp"

#include <fmt/format.h>

#include <chrono>

namespace kbench {

namespace fs = std::filesystem;

namespace {

// The rules read the source only; a minute is generous and stops a worker that hangs.
constexpr auto kDeadline = std::chrono::seconds(60);

} // namespace

std::vector<StaticVerdict> parse_verdicts(const nlohmann::json& answer) {
  std::vector<StaticVerdict> verdicts;
  if (!answer.is_object()) {
    return verdicts;
  }
  for (const auto& v : answer.value("verdicts", nlohmann::json::array())) {
    StaticVerdict verdict{v.value("rule", ""), v.value("severity", "warn"), v.value("message", ""),
                          std::nullopt};
    if (v.contains("line") && v["line"].is_number_integer()) {
      verdict.line = v["line"].get<int>();
    }
    verdicts.push_back(std::move(verdict));
  }
  return verdicts;
}

std::string rejections(const std::vector<StaticVerdict>& verdicts) {
  std::string out;
  for (const auto& verdict : verdicts) {
    if (verdict.severity == "reject") {
      out += fmt::format("{}{}{}: {}", out.empty() ? "" : "; ",
                         verdict.line ? fmt::format("line {} ", *verdict.line) : "", verdict.rule,
                         verdict.message);
    }
  }
  return out;
}

StaticCheckOutcome run_static_check(sandbox::WorkerClient& worker, const nlohmann::json& request,
                                    const std::string& candidate_path) {
  StaticCheckOutcome out;
  out.phase = run_phase(worker, request, kDeadline, WorkerRole::compile,
                        "checking the candidate's source", candidate_path);
  if (out.phase.ok) {
    out.verdicts = parse_verdicts(out.phase.body);
  }
  return out;
}

StaticCheckOutcome check_alone(const fs::path& candidate, const std::string& backend,
                               const fs::path& problem, const std::optional<fs::path>& rules,
                               const fs::path& python) {
  const auto scratch = sched::ScratchDirectory::create("kbench-check");
  fs::create_directories(scratch / "tmp");
  DeviceChoice cpu;
  cpu.device = "cpu";
  cpu.device_name = "cpu";
  WorkerLaunch launch = worker_launch_for(WorkerRole::compile, cpu, 0, scratch.path(),
                                          scratch / "tmp", python, 64 * 1024);
  must_read_sources(launch, problem, candidate);
  auto worker = launch_worker(launch);
  StaticCheckOutcome out = run_static_check(
      *worker,
      requests::static_check(fs::absolute(candidate), backend,
                             problem.empty() ? problem : fs::absolute(problem), rules),
      candidate.string());
  worker->shutdown();
  return out;
}

bool judge_statically(sandbox::WorkerClient& worker, const nlohmann::json& request,
                      EvalResult& result, std::optional<OwnKernelShareRule>& share) {
  StaticCheckOutcome outcome = run_static_check(worker, request, result.candidate_path);
  if (!outcome.phase.ok) {
    result.status = Status::harness_error;
    result.message = "the static check could not run: " + outcome.phase.message;
    result.log = outcome.phase.log;
    return false;
  }
  result.static_check = std::move(outcome.verdicts);
  share = parse_own_kernel_share(outcome.phase.body);
  if (const std::string rejected = rejections(result.static_check); !rejected.empty()) {
    result.status = Status::static_rejected;
    result.message = "rejected by the static check: " + rejected;
    return false;
  }
  return true;
}

} // namespace kbench
