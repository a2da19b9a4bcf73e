#pragma once
// `kbench worker --queue redis://...` (docs/distributed.md): a long-lived worker that claims
// jobs through the consumer group, evaluates each, posts its result, and acknowledges it; a
// second connection beats its heartbeat and keeps the job in hand from being taken back while
// it runs. SIGTERM or SIGINT drains it: no new job, the one in hand finished.
#include "core/options.hpp"
#include "core/result.hpp"
#include "queue/redis_client.hpp"

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

namespace kbench::queue {

struct WorkerSettings {
  QueueAddress address;
  std::string name;         // the consumer's name (default: host-pid)
  EvalOptions defaults;     // interpreter, cache, device, GPU
  int max_attempts = 3;     // deliveries before a job goes to the dead-letter stream
  double claim_idle_s = 60; // a job pending this long on a silent consumer is taken back
  double heartbeat_s = 5;
  bool drain = false; // exit once the queue has had no job for drain_idle_s
  double drain_idle_s = 10;
  double give_up_s = 300; // Redis unreachable this long: exit 2
  // Called with each result as posted (the worker's local store, when --db is given).
  std::function<void(const std::string& job_id, const EvalResult&)> on_result;
};

// Runs until `stop` is set (then drains) or, with drain, until the queue stays empty. Answers
// the exit code: 0, or 2 when Redis stayed unreachable.
int run_worker(const WorkerSettings& settings, const std::atomic<bool>& stop);

} // namespace kbench::queue
