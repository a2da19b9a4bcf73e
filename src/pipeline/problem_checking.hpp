#pragma once
// `kbench problems check`: is a problem fit to grade candidates with? One problem under one
// variant: the reference worker runs the trials (twice each) and measures; the judging is
// checks::judge_problem. Results are recorded in the cache so that `kbench eval` can warn
// about a problem that failed them.
#include "checks/problem_findings.hpp"
#include "core/options.hpp"
#include "sched/gpu_lane.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

inline constexpr const char* kProblemCheckSchema = "kbench.problem_check/1";

struct ProblemCheckResult {
  std::string problem_path, problem_sha256, variant, precision, device, device_name;
  std::string verdict; // "pass" (no errors), "fail" (errors), "not checked" (could not run)
  std::string message; // why it could not be checked, when it could not
  std::vector<checks::Finding> findings;
  nlohmann::json trials = nlohmann::json::array(); // per trial: index, seed, ran, shapes, error, seconds
  std::optional<double> call_us;
  std::optional<long long> peak_memory_bytes, device_memory_bytes;
  double wall_s = 0;
  std::string worker_started; // "forked" (by the warm fork server) or "spawned"
  int errors() const;
  int warnings() const;
};

// Uses options.problem, device, gpu, variant, precision, trials, seed, atol/rtol, run_timeout,
// python and cache_dir; the candidate is not used. With `lane` (a batch on cuda,
// pipeline/problem_batch.hpp), the worker takes the GPU's lane shared for each trial's GPU work
// and exclusive for the timed part; a check alone needs none.
ProblemCheckResult check_problem(const EvalOptions& options, sched::GpuLane* lane = nullptr);

nlohmann::json to_json(const ProblemCheckResult& result);

// Where the check of (problem content, variant, precision, device kind) is recorded.
std::filesystem::path problem_check_record(const std::filesystem::path& cache_dir,
                                           const std::string& problem_sha256,
                                           const std::string& variant, const std::string& precision,
                                           const std::string& device);
void record_problem_check(const std::filesystem::path& cache_dir, const ProblemCheckResult& result);
// The recorded check, if this problem's content was checked under these settings.
std::optional<nlohmann::json> recorded_problem_check(const std::filesystem::path& cache_dir,
                                                     const std::string& problem_sha256,
                                                     const std::string& variant,
                                                     const std::string& precision,
                                                     const std::string& device);

// A problem that failed `kbench problems check` grades unfairly: the warning every evaluation of
// it carries, naming the first error (else the first warning), from the record under
// `cache_dir` (empty: the default cache). Nullopt when it passed cleanly or was never checked.
std::optional<std::string> warn_about_checked_problem(const std::filesystem::path& cache_dir,
                                                      const std::string& problem_sha256,
                                                      const std::string& variant,
                                                      const std::string& precision,
                                                      const std::string& device);

} // namespace kbench
