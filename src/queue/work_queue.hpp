#pragma once
// kbench's work queue on Redis Streams (docs/distributed.md). One stream of jobs read through a
// consumer group (at-least-once delivery: a job stays in the group's pending-entries list until
// a worker acknowledges it, and XAUTOCLAIM hands a dead worker's jobs to another), a stream of
// results, a dead-letter stream, and a hash of worker heartbeats:
//   STREAM           id (job id), job (JSON: problem and candidate sources, options)
//   STREAM:results   id, worker, result (a kbench.eval/1 document)
//   STREAM:dead      id, job, error, attempts
//   STREAM:workers   worker name -> its last heartbeat (JSON)
#include "queue/redis_client.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kbench::queue {

inline constexpr const char* kGroup = "kbench-workers";

struct Claimed {
  std::string entry_id; // the stream entry
  std::string job_id;
  nlohmann::json job;
  long long deliveries = 1; // how many times the group has handed it out, this time included
};

struct ResultEntry {
  std::string entry_id, job_id, worker;
  nlohmann::json result;
};

struct ConsumerPending {
  std::string name;
  long long pending = 0;
  long long idle_ms = 0; // since the consumer last read
};

struct QueueStatus {
  long long jobs = 0;    // entries in the job stream (acknowledged ones included)
  long long waiting = 0; // not yet delivered to any worker
  long long pending = 0; // delivered, not acknowledged
  long long results = 0, dead = 0;
  std::vector<ConsumerPending> consumers;
  std::vector<nlohmann::json> dead_letters;                    // the newest, with their errors
  std::vector<std::pair<std::string, nlohmann::json>> workers; // name, heartbeat
  double results_per_minute = 0;                               // over the last 5 minutes
};

class WorkQueue {
public:
  explicit WorkQueue(QueueAddress address, double give_up_s = 300);

  // The consumer group (created at the start of the stream, so jobs added before any worker
  // started are delivered); an existing group is kept.
  void ensure_group();
  // Adds a job; answers its stream entry id.
  std::string enqueue(const std::string& job_id, const nlohmann::json& job);
  // A job for `consumer`: first one pending on another consumer for longer than `min_idle_s`
  // (its worker stopped), else a new one, waiting up to `block_ms` for it.
  std::optional<Claimed> claim(const std::string& consumer, double min_idle_s, int block_ms);
  // Resets the idle time of a job in hand, so that a long evaluation is not taken back.
  void touch(const std::string& consumer, const std::string& entry_id);
  void ack(const std::string& entry_id);
  // Jobs delivered and not acknowledged, on any consumer.
  long long pending_count();
  // The job ids pending on `consumer` (delivered to it, not acknowledged).
  std::vector<std::string> pending_jobs_of(const std::string& consumer);
  void post_result(const std::string& job_id, const std::string& worker,
                   const nlohmann::json& result);
  void dead_letter(const Claimed& job, const std::string& error);
  // The last entry id of the results stream ("0-0" when empty): where a producer starts reading.
  std::string results_tail();
  // Results after `after` (advanced past what is answered), waiting up to `block_ms`.
  std::vector<ResultEntry> read_results(std::string& after, int block_ms);
  void heartbeat(const std::string& worker, const nlohmann::json& beat);
  void forget_worker(const std::string& worker);
  QueueStatus status();
  const QueueAddress& address() const { return m_redis.address(); }

private:
  std::string key(const char* suffix) const { return m_redis.address().stream + suffix; }
  RedisClient m_redis;
};

} // namespace kbench::queue
