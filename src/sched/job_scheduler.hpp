#pragma once
// The long-running form of the suite's pipeline (sched/suite_pipeline.hpp), for work that
// arrives over time (`kbench serve`): builds run ahead on `build_threads` threads, and each
// queue's lanes (one CPU lane; one per GPU, or several sharing one) take built jobs, highest
// priority first, then in arrival order. An exclusive job (a timed CPU evaluation, whose times
// are host times) waits until no build and no other job runs, and nothing starts beside it.
// What a build and a run do is the caller's (service/evaluation_service.cpp gives them
// `evaluate`), so tests/unit/test_job_scheduler.cpp checks the order with stand-ins.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kbench::sched {

struct QueuedJob {
  std::string id;
  int priority = 0;       // higher first
  std::size_t queue = 0;  // which queue's lanes run it
  bool build = true;      // false: straight to the lanes (nothing to build ahead)
  bool exclusive = false; // the machine to itself (see above)
};

class JobScheduler {
public:
  struct Work {
    // Builds the job's candidate; its failure is the run's to report, so it returns nothing.
    std::function<void(const std::string& id)> build;
    // Runs the job on lane `lane` (0 .. lanes[queue]-1) of its queue.
    std::function<void(const std::string& id, int lane)> run;
  };

  // `lanes[q]`: how many lanes serve queue q (each at least one). build and run are called from
  // the scheduler's threads, several at once; they must not throw.
  JobScheduler(int build_threads, std::vector<int> lanes, Work work);
  JobScheduler(const JobScheduler&) = delete;
  JobScheduler& operator=(const JobScheduler&) = delete;
  ~JobScheduler(); // stop()

  void submit(QueuedJob job);
  // Takes back a job that waits for its build or, built, for a lane; false when it is being
  // built or run, has run, or is unknown (its build or run goes on: the caller's run decides
  // whether a job cancelled meanwhile still counts).
  bool cancel(const std::string& id);

  struct Lane {
    std::size_t queue = 0;
    int index = 0;
    std::string job; // running now; empty when idle
  };
  struct Snapshot {
    std::size_t to_build = 0, building = 0, ready = 0, running = 0;
    std::vector<Lane> lanes;
  };
  Snapshot snapshot() const;

  // Returns once nothing waits, builds or runs.
  void wait_idle();
  // Lets the builds and runs in progress finish and starts nothing more; waiting jobs are
  // dropped (a service keeps them queued in its store for the next start).
  void stop();

private:
  struct Entry {
    QueuedJob job;
    std::uint64_t sequence;
  };
  static bool before(const Entry& a, const Entry& b);
  bool exclusive_blocks() const;
  void build_loop();
  void lane_loop(std::size_t queue, int index);

  Work m_work;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<Entry> m_to_build;
  std::vector<std::vector<Entry>> m_ready; // per queue
  std::vector<Lane> m_lanes;
  std::size_t m_building = 0, m_running = 0, m_exclusive_waiting = 0;
  bool m_exclusive_running = false;
  bool m_stopping = false;
  std::uint64_t m_next_sequence = 0;
  std::vector<std::thread> m_threads;
};

} // namespace kbench::sched
