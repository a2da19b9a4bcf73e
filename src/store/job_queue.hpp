#pragma once
// The evaluation service's queue, kept in the store (the `jobs` table), so that a restarted
// service carries on with the work it accepted. A job is one request for one evaluation:
// queued -> building -> running -> done, or failed (the service could not evaluate it) or
// cancelled. Jobs with equal keys are one evaluation: the first is evaluated, the others wait
// queued and are completed from its result (complete_followers), so none is evaluated twice.
#include "store/store.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench::store {

struct JobRecord {
  std::string id;
  std::string key;
  nlohmann::json request; // what the service needs to run it again after a restart
  std::string state;      // queued, building, running, done, failed, cancelled
  int priority = 0;       // higher first
  std::int64_t sequence = 0;
  std::string submitted_at, started_at, finished_at;
  std::string evaluation_id; // the stored evaluation that answers it, once done
  bool cached = false;       // answered from an earlier evaluation, without GPU work
  std::string message;       // why it failed or was cancelled
};

bool is_terminal_state(const std::string& state);

class JobQueue {
public:
  explicit JobQueue(Store& store) : m_store(store) {}

  // A new job in `state` ("queued", or "done" with `evaluation_id` for one answered at once).
  JobRecord add(const std::string& key, const nlohmann::json& request, int priority,
                const std::string& state = "queued", const std::string& evaluation_id = "",
                bool cached = false);
  std::optional<JobRecord> get(const std::string& id);
  // Moves the job on; started_at is set on building, finished_at on a terminal state. A job
  // already in a terminal state is left as it is (a cancelled job whose evaluation ends), and
  // false is returned.
  bool set_state(const std::string& id, const std::string& state, const std::string& message = "",
                 const std::string& evaluation_id = "");
  // The queued jobs with this key, done from `evaluation_id` (cached); their ids.
  std::vector<std::string> complete_followers(const std::string& key,
                                              const std::string& evaluation_id);
  // Whether a job with this key is being built or run.
  bool key_in_flight(const std::string& key);
  // Queued jobs, highest priority first, then by arrival.
  std::vector<JobRecord> queued();
  // How many queued jobs come before this one (0: next), or nullopt when it is not queued.
  std::optional<std::size_t> position(const std::string& id);
  // Jobs a stopped service left building or running go back to queued; how many did.
  std::size_t requeue_interrupted();
  // Jobs per state.
  std::vector<std::pair<std::string, std::size_t>> counts();
  // Jobs that reached done or failed since `since` (an ISO timestamp).
  std::size_t finished_since(const std::string& since);
  // The newest terminal jobs whose evaluation did not end `ok` or that failed, newest first:
  // id, state, the evaluation's status and message.
  std::vector<nlohmann::json> recent_failures(std::size_t limit);

private:
  Store& m_store;
};

} // namespace kbench::store
