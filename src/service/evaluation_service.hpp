#pragma once
// The engine behind `kbench serve` (docs/service.md): requests become jobs in the store's queue
// (store/job_queue.hpp) and run on the job scheduler (sched/job_scheduler.hpp): builds ahead on
// the CPU cores, one measurement lane per GPU (several evaluations sharing one, as a suite's do:
// pipeline/gpu_sharing.hpp) and one for the CPU. A request that repeats a stored evaluation
// (the same key: problem, candidate and options, device name, torch and kbench versions) is
// answered from the store; requests that repeat one in flight wait for it. The HTTP layer
// (service/http_api.hpp) only turns these calls into answers.
#include "core/options.hpp"
#include "sched/gpu_lane.hpp"
#include "sched/job_scheduler.hpp"
#include "service/request.hpp"
#include "store/job_queue.hpp"
#include "store/store.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kbench::service {

struct ServiceSettings {
  std::filesystem::path db;
  EvalOptions defaults; // python, cache, timeouts: the service's own; requests set the rest
  RequestLimits limits;
  std::vector<int> gpus; // measurement lanes' GPUs (empty: none, CPU only)
  int evaluations_per_gpu = 4;
  int build_jobs = 2;
  // `kbench serve --queue`: each evaluation is handed to this instead of run here (the Redis work
  // queue's workers: queue/remote_evaluation.hpp), up to remote_lanes at once, with no build
  // ahead. Empty: evaluations run on this machine.
  std::function<EvalResult(const EvalOptions&)> remote;
  int remote_lanes = 32;
};

// An answer: an HTTP status and its JSON body.
struct Answer {
  int status = 200;
  nlohmann::json body;
};

class EvaluationService {
public:
  // Opens the store, takes back jobs a stopped service left unfinished, and starts the lanes.
  explicit EvaluationService(ServiceSettings settings);
  ~EvaluationService(); // stop()

  Answer submit(const std::string& body); // POST /v1/evaluations
  Answer get(const std::string& id);      // GET /v1/evaluations/{id}
  Answer cancel(const std::string& id);   // DELETE /v1/evaluations/{id}
  Answer queue();                         // GET /v1/queue
  Answer health();                        // GET /v1/health
  // Waits for the evaluations in progress and starts no more; queued jobs stay queued in the
  // store for the next start.
  void stop();
  // What stop() waits for, in words: the jobs running and how many build ("nothing" when idle).
  std::string in_progress() const;
  // For tests: returns once nothing is queued, built or run.
  void wait_idle();

private:
  std::string key_of(const EvalOptions& run) const;
  void schedule(const store::JobRecord& job, const EvaluationRequest& request);
  void build(const std::string& job_id);
  // On `lane` of its queue: the GPU queue's lane l runs on GPU gpus[l % gpus], beside the other
  // lanes of that GPU.
  void run(const std::string& job_id, int lane);
  // After a job is done or gone: completes the jobs waiting on the same key, or hands one of
  // them to the scheduler when nothing answered them.
  void settle_key(const std::string& key, const std::string& evaluation_id);
  std::optional<EvaluationRequest> request_of(const std::string& job_id);

  ServiceSettings m_settings;
  std::string m_torch_version;
  std::chrono::steady_clock::time_point m_started;
  std::unique_ptr<store::Store> m_store;
  std::unique_ptr<store::JobQueue> m_jobs;
  std::vector<std::unique_ptr<sched::GpuLane>> m_gpu_lanes;
  std::mutex m_keys_mutex;           // guards m_in_flight and the check-then-add of a submission
  std::set<std::string> m_in_flight; // keys handed to the scheduler and not settled
  // The builds this service made (candidate, device kind, backend): the compile cache holds
  // them, so a later job of the same candidate skips its build step rather than starting a
  // compile worker to find the build there (about 0.4 s of a warm evaluation's 2-3 s). Should
  // the cache lose one, the job's run builds it.
  std::mutex m_built_mutex;
  std::set<std::string> m_built;
  std::size_t m_builds_reused = 0; // build steps skipped for that reason (the queue's "builds")
  std::unique_ptr<sched::JobScheduler> m_scheduler; // last: its threads use everything above
};

} // namespace kbench::service
