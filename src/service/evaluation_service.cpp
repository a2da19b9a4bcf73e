#include "service/evaluation_service.hpp"

#include "pipeline/environment.hpp"
#include "pipeline/evaluation.hpp"
#include "pipeline/gpu_sharing.hpp"
#include "pipeline/result_key.hpp"
#include "pipeline/worker_phase.hpp"
#include "store/schema.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kbench::service {
namespace {

constexpr std::size_t kCpuQueue = 0, kGpuQueue = 1;

Answer error_answer(int status, const std::string& message) {
  return {status, {{"error", message}}};
}

// A timed CPU evaluation's times are host times: it runs with the machine to itself.
bool is_exclusive(const EvalOptions& run, const DeviceChoice& choice) {
  return choice.device == "cpu" && !run.no_timing;
}

std::string timestamp_ago(std::chrono::seconds ago) {
  const auto then = std::chrono::system_clock::now() - ago;
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(then.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(then)), ms);
}

} // namespace

EvaluationService::EvaluationService(ServiceSettings settings)
    : m_settings(std::move(settings)), m_started(std::chrono::steady_clock::now()) {
  m_torch_version = torch_version_of(m_settings.defaults.python);
  m_store = std::make_unique<store::Store>(m_settings.db);
  m_jobs = std::make_unique<store::JobQueue>(*m_store);
  const int per_gpu = std::max(1, m_settings.evaluations_per_gpu);
  for (std::size_t g = 0; g < m_settings.gpus.size() && per_gpu > 1; ++g) {
    m_gpu_lanes.push_back(std::make_unique<sched::GpuLane>());
  }
  const int gpu_lanes = static_cast<int>(m_settings.gpus.size()) * per_gpu;
  // Remote evaluations wait on the queue's workers, not on this machine: many at once, both
  // queues alike.
  const std::vector<int> lanes = m_settings.remote
                                     ? std::vector<int>{std::max(1, m_settings.remote_lanes),
                                                        std::max(1, m_settings.remote_lanes)}
                                     : std::vector<int>{1, std::max(1, gpu_lanes)};
  m_scheduler = std::make_unique<sched::JobScheduler>(
      m_settings.build_jobs, lanes,
      sched::JobScheduler::Work{[this](const std::string& id) { build(id); },
                                [this](const std::string& id, int lane) { run(id, lane); }});
  // Jobs a stopped service left building or running start again; every queued job is taken up
  // in its order (priority, then arrival).
  m_jobs->requeue_interrupted();
  for (const auto& job : m_jobs->queued()) {
    try {
      schedule(job, request_from_stored(job.request));
    } catch (const std::exception& error) {
      m_jobs->set_state(job.id, "failed",
                        std::string("cannot take the job up again: ") + error.what());
    }
  }
}

EvaluationService::~EvaluationService() {
  stop();
}

void EvaluationService::stop() {
  if (m_scheduler) {
    m_scheduler->stop();
  }
}

std::string EvaluationService::in_progress() const {
  const auto now = m_scheduler->snapshot();
  std::vector<std::string> running;
  for (const auto& lane : now.lanes) {
    if (!lane.job.empty()) {
      running.push_back(lane.job);
    }
  }
  if (running.empty() && now.building == 0) {
    return "nothing";
  }
  std::string out = running.empty() ? "" : fmt::format("running {}", fmt::join(running, ", "));
  if (now.building > 0) {
    out += fmt::format("{}{} building", out.empty() ? "" : "; ", now.building);
  }
  return out;
}

void EvaluationService::wait_idle() {
  m_scheduler->wait_idle();
}

std::string EvaluationService::key_of(const EvalOptions& run) const {
  const auto key = store_key(run);
  return key ? *key : std::string();
}

// Hands a queued job to the scheduler, unless its key is answered (done from the store) or in
// flight (it waits for that one). Called with m_keys_mutex not held.
void EvaluationService::schedule(const store::JobRecord& job, const EvaluationRequest& request) {
  std::lock_guard lock(m_keys_mutex);
  if (!job.key.empty()) {
    if (const auto stored = m_store->latest_for_key(job.key)) {
      m_jobs->complete_followers(job.key, stored->row.id);
      return;
    }
    if (m_in_flight.count(job.key) > 0) {
      return; // settle_key completes it when the one in flight ends
    }
    m_in_flight.insert(job.key);
  }
  const DeviceChoice choice =
      choose_device(request.run.device, request.run.gpu, std::max(1, request.run.world_size));
  sched::QueuedJob queued;
  queued.id = job.id;
  queued.priority = request.priority;
  queued.queue = choice.device == "cpu" ? kCpuQueue : kGpuQueue;
  queued.exclusive = is_exclusive(request.run, choice);
  m_scheduler->submit(queued);
}

Answer EvaluationService::submit(const std::string& body) {
  auto parsed = parse_requests(body, m_settings.defaults, m_settings.limits);
  if (!parsed.error.empty()) {
    return error_answer(400, parsed.error);
  }
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& request : parsed.evaluations) {
    const std::string key = key_of(request.run);
    const auto job = m_jobs->add(key, stored_request(request), request.priority);
    ids.push_back(job.id);
    schedule(job, request);
  }
  return {202, {{"ids", ids}}};
}

std::optional<EvaluationRequest> EvaluationService::request_of(const std::string& job_id) {
  const auto job = m_jobs->get(job_id);
  if (!job) {
    return std::nullopt;
  }
  return request_from_stored(job->request);
}

void EvaluationService::build(const std::string& job_id) {
  if (m_settings.remote) {
    return; // the worker that evaluates it builds it
  }
  try {
    const auto job = m_jobs->get(job_id);
    if (!job || !m_jobs->set_state(job_id, "building")) {
      return; // cancelled while it waited
    }
    EvalOptions options = request_from_stored(job->request).run;
    options.compile_only = true;
    const std::string built =
        fmt::format("{}\n{}\n{}", options.candidate.string(),
                    choose_device(options.device, options.gpu, 1).device, options.backend);
    {
      std::lock_guard lock(m_built_mutex);
      if (m_built.contains(built)) {
        ++m_builds_reused;
        return;
      }
    }
    // Into the compile cache; the run reports how the build went.
    if (evaluate(options).status == Status::ok) {
      std::lock_guard lock(m_built_mutex);
      m_built.insert(built);
    }
  } catch (const std::exception&) { // the run meets the same error and reports it
  }
}

void EvaluationService::run(const std::string& job_id, int lane) {
  const auto job = m_jobs->get(job_id);
  if (!job) {
    return;
  }
  if (!m_jobs->set_state(job_id, "running")) { // cancelled: the key's other jobs go on
    settle_key(job->key, "");
    return;
  }
  try {
    EvaluationRequest request = request_from_stored(job->request);
    if (m_settings.remote) {
      const EvalResult result = m_settings.remote(request.run);
      const std::string evaluation_id = m_store->add_evaluation(result, job->key, "service");
      m_jobs->set_state(job_id, "done", "", evaluation_id);
      settle_key(job->key, evaluation_id);
      return;
    }
    GpuSharing sharing;
    const DeviceChoice choice =
        choose_device(request.run.device, request.run.gpu, std::max(1, request.run.world_size));
    if (choice.device != "cpu" && !m_settings.gpus.empty()) {
      const auto gpu = static_cast<std::size_t>(lane) % m_settings.gpus.size();
      request.run.gpu = m_settings.gpus[gpu];
      if (!m_gpu_lanes.empty()) {
        sharing = {m_gpu_lanes[gpu].get(), false, m_settings.evaluations_per_gpu};
      }
    }
    EvalResult result = evaluate(request.run, {}, sharing);
    if (sharing.lane != nullptr && ran_out_of_gpu_memory(result)) {
      sharing.alone = true; // beside others the memory that ran out may have been theirs
      result = evaluate(request.run, {}, sharing);
    }
    const std::string evaluation_id = m_store->add_evaluation(result, job->key, "service");
    m_jobs->set_state(job_id, "done", "", evaluation_id);
    settle_key(job->key, evaluation_id);
  } catch (const std::exception& error) {
    m_jobs->set_state(job_id, "failed",
                      std::string("kbench could not evaluate it: ") + error.what());
    settle_key(job->key, "");
  }
}

void EvaluationService::settle_key(const std::string& key, const std::string& evaluation_id) {
  if (key.empty()) {
    return;
  }
  std::optional<store::JobRecord> next;
  {
    std::lock_guard lock(m_keys_mutex);
    if (!evaluation_id.empty()) {
      m_jobs->complete_followers(key, evaluation_id);
    }
    m_in_flight.erase(key);
    // Nothing answered the others (the one in flight was cancelled or failed): the oldest
    // queued job of the key is evaluated next.
    for (const auto& job : m_jobs->queued()) {
      if (job.key == key) {
        next = job;
        break;
      }
    }
  }
  if (next) {
    if (auto request = request_of(next->id)) {
      schedule(*next, *request);
    }
  }
}

Answer EvaluationService::get(const std::string& id) {
  const auto job = m_jobs->get(id);
  if (!job) {
    return error_answer(404, fmt::format("no evaluation {:?} in {}", id, m_store->path().string()));
  }
  nlohmann::json body = {
      {"id", job->id},
      {"state", job->state},
      {"cached", job->cached},
      {"submitted_at", job->submitted_at},
      {"started_at",
       job->started_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(job->started_at)},
      {"finished_at",
       job->finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(job->finished_at)},
      {"evaluation_id",
       job->evaluation_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(job->evaluation_id)},
      {"queue_position", nullptr},
      {"result", nullptr},
      {"reward", nullptr}};
  if (!job->message.empty()) {
    body["message"] = job->message;
  }
  if (const auto position = m_jobs->position(id)) {
    body["queue_position"] = *position;
  }
  if (!job->evaluation_id.empty()) {
    if (const auto stored = m_store->find_evaluation(job->evaluation_id)) {
      body["result"] = stored->document;
      const auto request = request_from_stored(job->request);
      if (request.reward) {
        if (auto result = result_from_json(stored->document); result.value) {
          body["reward"] = to_json(compute_reward(*request.reward, *result.value));
        }
      }
    }
  }
  return {200, body};
}

Answer EvaluationService::cancel(const std::string& id) {
  const auto job = m_jobs->get(id);
  if (!job) {
    return error_answer(404, fmt::format("no evaluation {:?}", id));
  }
  if (store::is_terminal_state(job->state)) {
    return error_answer(409, fmt::format("evaluation {} is already {}", id, job->state));
  }
  const bool was_waiting = m_scheduler->cancel(id);
  m_jobs->set_state(id, "cancelled", "cancelled by a DELETE request");
  if (was_waiting) {
    settle_key(job->key, ""); // the key's other jobs, if any, are evaluated without it
  }
  return {200, {{"id", id}, {"state", "cancelled"}, {"was", job->state}}};
}

Answer EvaluationService::queue() {
  const auto snapshot = m_scheduler->snapshot();
  nlohmann::json lanes = nlohmann::json::array();
  for (const auto& lane : snapshot.lanes) {
    std::string device = "cpu";
    if (lane.queue == kGpuQueue) {
      if (m_settings.gpus.empty()) {
        continue; // no GPU here: the GPU queue's one lane is never used
      }
      device = fmt::format(
          "cuda:{}",
          m_settings.gpus[static_cast<std::size_t>(lane.index) % m_settings.gpus.size()]);
    }
    lanes.push_back(
        {{"device", device},
         {"lane", lane.index},
         {"job", lane.job.empty() ? nlohmann::json(nullptr) : nlohmann::json(lane.job)}});
  }
  nlohmann::json counts = nlohmann::json::object();
  std::size_t queued = 0;
  for (const auto& [state, count] : m_jobs->counts()) {
    counts[state] = count;
    queued += state == "queued" ? count : 0;
  }
  nlohmann::json builds;
  {
    std::lock_guard lock(m_built_mutex);
    builds = {{"made", m_built.size()}, {"reused", m_builds_reused}};
  }
  const auto last_minute = m_jobs->finished_since(timestamp_ago(std::chrono::minutes(1)));
  const auto last_hour = m_jobs->finished_since(timestamp_ago(std::chrono::hours(1)));
  return {200,
          {{"lanes", lanes},
           {"depth", queued},
           {"building", snapshot.building},
           {"running", snapshot.running},
           {"jobs", counts},
           {"builds", builds},
           {"rates", {{"finished_last_minute", last_minute}, {"finished_last_hour", last_hour}}},
           {"recent_failures", m_jobs->recent_failures(10)}}};
}

Answer EvaluationService::health() {
  nlohmann::json gpus = nlohmann::json::array();
  for (int gpu : m_settings.gpus) {
    gpus.push_back(gpu);
  }
  return {200,
          {{"ok", true},
           {"kbench_version", KBENCH_VERSION},
           {"store", m_store->path().string()},
           {"store_schema", store::current_schema_version()},
           {"torch_version", m_torch_version},
           {"gpus", gpus},
           {"uptime_s",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count()}}};
}

} // namespace kbench::service
