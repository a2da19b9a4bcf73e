#include "sched/background_helpers.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace kbench::sched {

namespace {

struct Job {
  std::vector<std::string> argv, environment;
  std::chrono::milliseconds deadline;
  std::function<void(const HelperOutcome&)> done;
};

class Helpers {
public:
  void add(Job job) {
    std::lock_guard lock(m_mutex);
    m_jobs.push_back(std::move(job));
    if (!m_running) {
      m_running = true;
      if (m_thread.joinable()) {
        m_thread.join(); // the last run's thread, done with its queue
      }
      m_thread = std::thread([this] { drain(); });
    }
  }

  int wait() {
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return !m_running; });
    if (m_thread.joinable()) {
      m_thread.join();
    }
    return m_ran;
  }

  int unfinished() {
    std::lock_guard lock(m_mutex);
    return static_cast<int>(m_jobs.size()) + (m_current ? 1 : 0);
  }

  ~Helpers() { wait(); }

private:
  void drain() {
    std::unique_lock lock(m_mutex);
    while (!m_jobs.empty()) {
      Job job = std::move(m_jobs.front());
      m_jobs.pop_front();
      m_current = true;
      lock.unlock();
      const HelperOutcome outcome = run_helper(job.argv, job.environment, job.deadline);
      if (job.done) {
        job.done(outcome);
      }
      lock.lock();
      m_current = false;
      ++m_ran;
    }
    m_running = false;
    m_idle.notify_all();
  }

  std::mutex m_mutex;
  std::condition_variable m_idle;
  std::deque<Job> m_jobs;
  std::thread m_thread;
  bool m_running = false;
  bool m_current = false; // a helper is running now
  int m_ran = 0;
};

Helpers& helpers() {
  static Helpers instance;
  return instance;
}

} // namespace

void run_helper_in_background(std::vector<std::string> argv, std::vector<std::string> environment,
                              std::chrono::milliseconds deadline,
                              std::function<void(const HelperOutcome&)> done) {
  helpers().add({std::move(argv), std::move(environment), deadline, std::move(done)});
}

int wait_for_background_helpers() {
  return helpers().wait();
}

int unfinished_background_helpers() {
  return helpers().unfinished();
}

} // namespace kbench::sched
