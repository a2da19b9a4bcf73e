// Many problem checks at once (pipeline/problem_batch.hpp).
#include "pipeline/problem_batch.hpp"

#include "core/source_files.hpp"
#include "sched/gpu_lane.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace kbench {

std::vector<ProblemCheckResult>
check_problems(const std::vector<EvalOptions>& runs, int jobs,
               const std::function<void(std::size_t, const ProblemCheckResult&)>& on_done) {
  std::vector<ProblemCheckResult> results(runs.size());
  // One lane per GPU index; a cpu check takes none (its timing is the CPU's, shared with the
  // other checks' work in any case; docs/problems.md says so).
  std::map<int, std::unique_ptr<sched::GpuLane>> lanes;
  for (const auto& run : runs) {
    if (run.device != "cpu" && !lanes.contains(run.gpu)) {
      lanes.emplace(run.gpu, std::make_unique<sched::GpuLane>());
    }
  }
  std::atomic<std::size_t> next{0};
  std::mutex report;
  const auto work = [&]() {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      const auto lane = lanes.find(runs[i].gpu);
      try {
        results[i] = check_problem(
            runs[i], runs[i].device != "cpu" && lane != lanes.end() ? lane->second.get() : nullptr);
      } catch (const std::exception& error) {
        results[i] = ProblemCheckResult{};
        results[i].problem_path = runs[i].problem.string();
        results[i].variant = runs[i].variant;
        results[i].precision = runs[i].precision;
        results[i].verdict = "not checked";
        results[i].message = std::string("kbench failed during the check: ") + error.what();
      }
      std::lock_guard lock(report);
      on_done(i, results[i]);
    }
  };
  const std::size_t threads =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::max(jobs, 1)), 1, runs.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    pool.emplace_back(work);
  }
  work();
  for (auto& thread : pool) {
    thread.join();
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
