#include "sched/job_scheduler.hpp"

#include <algorithm>

namespace kbench::sched {

JobScheduler::JobScheduler(int build_threads, std::vector<int> lanes, Work work)
    : m_work(std::move(work)), m_ready(lanes.size()) {
  for (std::size_t q = 0; q < lanes.size(); ++q) {
    for (int l = 0; l < std::max(1, lanes[q]); ++l) {
      m_lanes.push_back({q, l, ""});
    }
  }
  for (int b = 0; b < std::max(1, build_threads); ++b) {
    m_threads.emplace_back([this] { build_loop(); });
  }
  for (std::size_t i = 0; i < m_lanes.size(); ++i) {
    m_threads.emplace_back([this, i] { lane_loop(m_lanes[i].queue, m_lanes[i].index); });
  }
}

JobScheduler::~JobScheduler() {
  stop();
}

bool JobScheduler::before(const Entry& a, const Entry& b) {
  return a.job.priority != b.job.priority ? a.job.priority > b.job.priority
                                          : a.sequence < b.sequence;
}

// Nothing new starts while an exclusive job waits for the machine or has it.
bool JobScheduler::exclusive_blocks() const {
  return m_exclusive_running || m_exclusive_waiting > 0;
}

void JobScheduler::submit(QueuedJob job) {
  {
    std::lock_guard lock(m_mutex);
    Entry entry{std::move(job), m_next_sequence++};
    auto& list = entry.job.build ? m_to_build : m_ready.at(entry.job.queue);
    list.insert(std::upper_bound(list.begin(), list.end(), entry, before), std::move(entry));
  }
  m_changed.notify_all();
}

bool JobScheduler::cancel(const std::string& id) {
  std::lock_guard lock(m_mutex);
  auto drop = [&](std::vector<Entry>& list) {
    const auto found =
        std::find_if(list.begin(), list.end(), [&](const Entry& e) { return e.job.id == id; });
    if (found == list.end()) {
      return false;
    }
    list.erase(found);
    return true;
  };
  if (drop(m_to_build)) {
    return true;
  }
  for (auto& ready : m_ready) {
    if (drop(ready)) {
      return true;
    }
  }
  return false;
}

void JobScheduler::build_loop() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_changed.wait(lock,
                   [&] { return m_stopping || (!m_to_build.empty() && !exclusive_blocks()); });
    if (m_stopping) {
      return;
    }
    Entry entry = std::move(m_to_build.front());
    m_to_build.erase(m_to_build.begin());
    ++m_building;
    lock.unlock();
    m_work.build(entry.job.id);
    lock.lock();
    --m_building;
    auto& ready = m_ready.at(entry.job.queue);
    ready.insert(std::upper_bound(ready.begin(), ready.end(), entry, before), std::move(entry));
    m_changed.notify_all();
  }
}

void JobScheduler::lane_loop(std::size_t queue, int index) {
  Lane* me = nullptr;
  for (auto& lane : m_lanes) {
    if (lane.queue == queue && lane.index == index) {
      me = &lane;
    }
  }
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_changed.wait(lock, [&] {
      return m_stopping || (!m_ready[queue].empty() && !m_exclusive_running &&
                            (m_ready[queue].front().job.exclusive || m_exclusive_waiting == 0));
    });
    if (m_stopping) {
      return;
    }
    Entry entry = std::move(m_ready[queue].front());
    m_ready[queue].erase(m_ready[queue].begin());
    if (entry.job.exclusive) {
      ++m_exclusive_waiting;
      m_changed.wait(lock, [&] { return m_stopping || (m_building == 0 && m_running == 0); });
      --m_exclusive_waiting;
      if (m_stopping) {
        return;
      }
      m_exclusive_running = true;
    }
    ++m_running;
    me->job = entry.job.id;
    lock.unlock();
    m_work.run(entry.job.id, index);
    lock.lock();
    me->job.clear();
    --m_running;
    if (entry.job.exclusive) {
      m_exclusive_running = false;
    }
    m_changed.notify_all();
  }
}

JobScheduler::Snapshot JobScheduler::snapshot() const {
  std::lock_guard lock(m_mutex);
  Snapshot out;
  out.to_build = m_to_build.size();
  out.building = m_building;
  for (const auto& ready : m_ready) {
    out.ready += ready.size();
  }
  out.running = m_running;
  out.lanes = m_lanes;
  return out;
}

void JobScheduler::wait_idle() {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] {
    const bool nothing_ready = std::all_of(m_ready.begin(), m_ready.end(),
                                           [](const auto& ready) { return ready.empty(); });
    return m_stopping || (m_to_build.empty() && nothing_ready && m_building == 0 && m_running == 0);
  });
}

void JobScheduler::stop() {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping && m_threads.empty()) {
      return;
    }
    m_stopping = true;
  }
  m_changed.notify_all();
  for (auto& thread : m_threads) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  m_threads.clear();
}

} // namespace kbench::sched
