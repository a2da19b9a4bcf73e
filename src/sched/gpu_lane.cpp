#include "sched/gpu_lane.hpp"

namespace kbench::sched {

void GpuLane::lock_shared() {
  std::unique_lock lock(m_mutex);
  m_changed.wait(lock, [&] { return !m_exclusive && m_exclusive_waits == 0; });
  ++m_shared;
}

void GpuLane::unlock_shared() {
  {
    std::lock_guard lock(m_mutex);
    --m_shared;
  }
  m_changed.notify_all();
}

void GpuLane::lock_exclusive() {
  std::unique_lock lock(m_mutex);
  ++m_exclusive_waits;
  m_changed.wait(lock, [&] { return !m_exclusive && m_shared == 0; });
  --m_exclusive_waits;
  m_exclusive = true;
}

void GpuLane::unlock_exclusive() {
  {
    std::lock_guard lock(m_mutex);
    m_exclusive = false;
  }
  m_changed.notify_all();
}

void LaneHold::move_to(State wanted) {
  if (wanted == m_state) {
    return;
  }
  if (m_state == State::shared) {
    m_lane.unlock_shared();
  } else if (m_state == State::exclusive) {
    m_lane.unlock_exclusive();
  }
  m_state = State::none;
  if (wanted == State::shared) {
    m_lane.lock_shared();
  } else if (wanted == State::exclusive) {
    m_lane.lock_exclusive();
  }
  m_state = wanted;
}

} // namespace kbench::sched
