#pragma once
// One GPU shared by several `kbench problems check` workers at once: their untimed GPU work
// (building a trial, the determinism calls, copying outputs back) may overlap, but a timed part
// (the reference's call time, its peak memory) runs with the GPU to itself, so that another
// check's kernels never land inside a measurement. A shared/exclusive lock that prefers the
// exclusive side: once a timed part waits, no new shared holder enters, so it waits at most
// for the shared sections already running (one trial of each other check).
#include <condition_variable>
#include <mutex>

namespace kbench::sched {

class GpuLane {
public:
  void lock_shared();
  void unlock_shared();
  void lock_exclusive();
  void unlock_exclusive();

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_shared = 0;          // holders of the shared side
  int m_exclusive_waits = 0; // timed parts waiting
  bool m_exclusive = false;
};

// What one worker holds of a lane, moved by its messages; the destructor lets go of whatever
// is still held, so a worker that dies or times out inside a section never blocks the others.
class LaneHold {
public:
  enum class State { none, shared, exclusive };
  explicit LaneHold(GpuLane& lane) : m_lane(lane) {}
  LaneHold(const LaneHold&) = delete;
  LaneHold& operator=(const LaneHold&) = delete;
  ~LaneHold() { move_to(State::none); }
  // Releases what is held, then waits for `wanted` (an upgrade in place could deadlock two
  // shared holders that both want the GPU to themselves).
  void move_to(State wanted);
  State state() const { return m_state; }

private:
  GpuLane& m_lane;
  State m_state = State::none;
};

} // namespace kbench::sched
