#pragma once
// The producer's side of the work queue (`kbench suite MANIFEST --queue redis://...`): the runs
// enqueued as jobs (equal ones once), then their results collected from the results stream as
// they arrive, each job's first result kept (delivery is at-least-once: a job may be answered
// twice).
#include "core/options.hpp"
#include "core/result.hpp"
#include "queue/redis_client.hpp"

#include <functional>
#include <ostream>
#include <vector>

namespace kbench::queue {

// Calls `queued(r)` once run r's job is on the queue and `finished(r, result)` once its result
// came back; returns when every run has one. A run whose sources cannot be read finishes at once
// with harness_error. Notes on progress (and on a queue no worker reads) go to `log`.
void evaluate_remotely(const QueueAddress& address, const std::vector<EvalOptions>& runs,
                       const std::function<void(std::size_t)>& queued,
                       const std::function<void(std::size_t, const EvalResult&)>& finished,
                       std::ostream& log);

} // namespace kbench::queue
