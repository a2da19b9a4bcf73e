// Many problem checks at once (pipeline/problem_batch.hpp).
#include "pipeline/problem_batch.hpp"

#include "core/source_files.hpp"
#include "pipeline/gpu_sharing.hpp"
#include "sandbox/transfer_files.hpp"
#include "sched/gpu_lane.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace kbench {

namespace {

ProblemCheckResult check_or_report(const EvalOptions& run, sched::GpuLane* lane,
                                   const ProblemChecker& checker) {
  try {
    return checker ? checker(run, lane) : check_problem(run, lane);
  } catch (const std::exception& error) {
    ProblemCheckResult result;
    result.problem_path = run.problem.string();
    result.variant = run.variant;
    result.precision = run.precision;
    result.verdict = "not checked";
    result.message = std::string("kbench failed during the check: ") + error.what();
    return result;
  }
}

// Out of the scratch disk's room, or of the GPU's memory: beside other checks, both may have
// been taken by them.
bool crowded_out(const ProblemCheckResult& result) {
  if (result.message.find(sandbox::kNoScratchRoom) != std::string::npos ||
      reads_as_gpu_out_of_memory(result.message)) {
    return true;
  }
  return std::any_of(result.findings.begin(), result.findings.end(), [](const auto& finding) {
    return finding.severity == "error" &&
           (finding.message.find(sandbox::kNoScratchRoom) != std::string::npos ||
            reads_as_gpu_out_of_memory(finding.message));
  });
}

} // namespace

std::vector<ProblemCheckResult> check_problems(const std::vector<EvalOptions>& runs, int jobs,
                                               const CheckReport& on_done,
                                               const CheckReport& on_deferred,
                                               const ProblemChecker& checker) {
  std::vector<ProblemCheckResult> results(runs.size());
  // One lane per GPU index; a cpu check takes none (its timing is the CPU's, shared with the
  // other checks' work in any case; docs/problems.md says so).
  std::map<int, std::unique_ptr<sched::GpuLane>> lanes;
  for (const auto& run : runs) {
    if (run.device != "cpu" && !lanes.contains(run.gpu)) {
      lanes.emplace(run.gpu, std::make_unique<sched::GpuLane>());
    }
  }
  const auto lane_of = [&](const EvalOptions& run) -> sched::GpuLane* {
    const auto lane = lanes.find(run.gpu);
    return run.device != "cpu" && lane != lanes.end() ? lane->second.get() : nullptr;
  };
  const std::size_t threads =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::max(jobs, 1)), 1, runs.size());
  std::atomic<std::size_t> next{0};
  std::mutex report;
  std::vector<std::size_t> again; // crowded out: run alone at the end
  const auto work = [&]() {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      results[i] = check_or_report(runs[i], lane_of(runs[i]), checker);
      std::lock_guard lock(report);
      if (threads > 1 && crowded_out(results[i])) {
        again.push_back(i);
        if (on_deferred) {
          on_deferred(i, results[i]);
        }
        continue;
      }
      on_done(i, results[i]);
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    pool.emplace_back(work);
  }
  work();
  for (auto& thread : pool) {
    thread.join();
  }
  std::sort(again.begin(), again.end());
  for (const std::size_t i : again) {
    results[i] = check_or_report(runs[i], lane_of(runs[i]), checker);
    on_done(i, results[i]);
  }
  return results;
}

std::optional<nlohmann::json> check_key(const EvalOptions& run) {
  std::string error;
  const auto problem = read_source_file(run.problem, "problem", error);
  if (!problem) {
    return std::nullopt;
  }
  const auto optional = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return nlohmann::json{{"problem_sha256", problem->sha256},
                        {"variant", run.variant},
                        {"precision", run.precision},
                        {"device", run.device.rfind("cuda", 0) == 0 ? "cuda" : run.device},
                        {"trials", run.trials},
                        {"seed", run.seed},
                        {"atol", optional(run.atol)},
                        {"rtol", optional(run.rtol)},
                        {"kbench_version", KBENCH_VERSION}};
}

nlohmann::json check_line(const ProblemCheckResult& result, const nlohmann::json& key) {
  nlohmann::json line = to_json(result);
  line["check_key"] = key;
  return line;
}

} // namespace kbench
