#include "queue/queue_worker.hpp"

#include "pipeline/environment.hpp"
#include "pipeline/evaluation.hpp"
#include "queue/jobs.hpp"
#include "queue/work_queue.hpp"
#include "sched/paths.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

namespace kbench::queue {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// What the heartbeat thread reports and keeps alive.
struct InHand {
  std::mutex mutex;
  std::string entry_id, job_id;
  long long done = 0;
  std::string state = "idle";
};

// Test-only fault injection (tests/e2e/test_queue.cpp): a job whose candidate source holds this
// text kills the worker that claims it, as a job that crashes its host would.
bool poisons(const nlohmann::json& job) {
  const char* marker = std::getenv("KBENCH_TEST_CRASH_ON_SOURCE");
  if (marker == nullptr || *marker == '\0' || !job.is_object()) {
    return false;
  }
  const auto& candidate = job.value("candidate", nlohmann::json::object());
  return candidate.is_object() &&
         candidate.value("source", std::string()).find(marker) != std::string::npos;
}

} // namespace

int run_worker(const WorkerSettings& settings, const std::atomic<bool>& stop) {
  WorkQueue queue(settings.address, settings.give_up_s);
  const fs::path sources_dir = (settings.defaults.cache_dir.empty() ? sched::cache_directory()
                                                                    : settings.defaults.cache_dir) /
                               "queue-sources";
  InHand in_hand;
  std::atomic<bool> finished = false;
  std::mutex wake_mutex;
  std::condition_variable wake;
  // The heartbeat, on its own connection: the worker's state, and the job in hand kept claimed.
  std::thread beat([&] {
    try {
      WorkQueue beats(settings.address, settings.give_up_s);
      const std::string torch = torch_version_of(settings.defaults.python);
      while (!finished) {
        nlohmann::json beat;
        std::string entry;
        {
          std::lock_guard lock(in_hand.mutex);
          beat = {{"state", in_hand.state},
                  {"job", in_hand.job_id},
                  {"done", in_hand.done},
                  {"device", settings.defaults.device},
                  {"gpu", settings.defaults.gpu},
                  {"torch_version", torch},
                  {"kbench_version", KBENCH_VERSION}};
          entry = in_hand.entry_id;
        }
        beats.heartbeat(settings.name, beat);
        if (!entry.empty()) {
          beats.touch(settings.name, entry);
        }
        std::unique_lock lock(wake_mutex);
        wake.wait_for(lock, std::chrono::duration<double>(settings.heartbeat_s),
                      [&] { return finished.load(); });
      }
      beats.forget_worker(settings.name);
    } catch (const std::exception& error) {
      std::cerr << "kbench worker: heartbeat: " << error.what() << "\n";
    }
  });
  int code = 0;
  auto last_job = Clock::now();
  try {
    queue.ensure_group();
    // On stdout, flushed: a supervisor (or a test) reads it as "ready".
    std::cout << fmt::format("kbench worker {}: reading {} (device {})", settings.name,
                             settings.address.text(), settings.defaults.device)
              << std::endl;
    while (!stop) {
      const auto claimed = queue.claim(settings.name, settings.claim_idle_s, 1000);
      if (!claimed) {
        // Draining ends when nothing is left to take, a stopped worker's jobs included: those
        // become claimable only after claim_idle_s.
        if (settings.drain &&
            std::chrono::duration<double>(Clock::now() - last_job).count() >
                settings.drain_idle_s &&
            queue.pending_count() == 0) {
          std::cerr << fmt::format("kbench worker {}: the queue stayed empty for {:.0f} s; done\n",
                                   settings.name, settings.drain_idle_s);
          break;
        }
        continue;
      }
      last_job = Clock::now();
      {
        std::lock_guard lock(in_hand.mutex);
        in_hand.entry_id = claimed->entry_id;
        in_hand.job_id = claimed->job_id;
        in_hand.state = "evaluating";
      }
      EvalResult result;
      if (claimed->deliveries > settings.max_attempts) {
        const std::string error = fmt::format(
            "delivered {} times: each worker that took it stopped before finishing it (a job "
            "that kills its worker); dead-lettered to {}:dead",
            claimed->deliveries, settings.address.stream);
        queue.dead_letter(*claimed, error);
        result = harness_error_for(claimed->job, error);
      } else {
        if (poisons(claimed->job)) {
          std::raise(SIGKILL);
        }
        try {
          result = evaluate(run_of(claimed->job, settings.defaults, sources_dir));
        } catch (const std::exception& error) {
          result = harness_error_for(claimed->job, std::string("kbench worker: ") + error.what());
        }
      }
      queue.post_result(claimed->job_id, settings.name, to_json(result));
      queue.ack(claimed->entry_id);
      if (settings.on_result) {
        settings.on_result(claimed->job_id, result);
      }
      {
        std::lock_guard lock(in_hand.mutex);
        in_hand.entry_id.clear();
        in_hand.job_id.clear();
        in_hand.state = "idle";
        ++in_hand.done;
      }
    }
  } catch (const RedisError& error) {
    std::cerr << "kbench worker: " << error.what() << "\n";
    code = 2;
  }
  finished = true;
  wake.notify_all();
  beat.join();
  return code;
}

} // namespace kbench::queue
