// Covers src/sched/job_scheduler.cpp: builds run ahead of the lanes, a higher priority goes
// first, a job taken back never runs, and an exclusive job never runs beside a build or another
// job. Stand-in builds and runs record what happened; waits have generous deadlines so a broken
// scheduler fails rather than hangs.
#include "sched/job_scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kbench::sched {
namespace {

using namespace std::chrono_literals;

struct Record {
  std::mutex mutex;
  std::vector<std::string> events;
  int busy = 0;
  int beside_exclusive = 0;
  bool exclusive_now = false;

  void begin(const std::string& what, bool exclusive) {
    std::lock_guard lock(mutex);
    events.push_back("start " + what);
    if ((exclusive && busy > 0) || exclusive_now) {
      ++beside_exclusive;
    }
    exclusive_now = exclusive_now || exclusive;
    ++busy;
  }
  void end(const std::string& what, bool exclusive) {
    std::lock_guard lock(mutex);
    events.push_back("end " + what);
    --busy;
    exclusive_now = exclusive ? false : exclusive_now;
  }
  std::ptrdiff_t at(const std::string& event) {
    std::lock_guard lock(mutex);
    const auto found = std::find(events.begin(), events.end(), event);
    return found == events.end() ? -1 : found - events.begin();
  }
};

bool is_exclusive(const std::string& id) {
  return id.rfind("x", 0) == 0;
}

JobScheduler::Work recording(Record& record, std::chrono::milliseconds build_time = 5ms,
                             std::chrono::milliseconds run_time = 5ms) {
  return {[&record, build_time](const std::string& id) {
            record.begin("build " + id, false);
            std::this_thread::sleep_for(build_time);
            record.end("build " + id, false);
          },
          [&record, run_time](const std::string& id, int) {
            record.begin("run " + id, is_exclusive(id));
            std::this_thread::sleep_for(run_time);
            record.end("run " + id, is_exclusive(id));
          }};
}

TEST(JobScheduler, EveryJobIsBuiltThenRunOnItsQueue) {
  Record record;
  JobScheduler scheduler(2, {1, 2}, recording(record));
  scheduler.submit({"a", 0, 0});
  scheduler.submit({"b", 0, 1});
  scheduler.submit({"c", 0, 1, false});
  scheduler.wait_idle();
  for (const std::string id : {"a", "b"}) {
    EXPECT_LT(record.at("end build " + id), record.at("start run " + id)) << id;
  }
  EXPECT_EQ(record.at("start build c"), -1); // nothing to build
  EXPECT_GE(record.at("start run c"), 0);
}

TEST(JobScheduler, AHigherPriorityRunsFirst) {
  Record record;
  // One build thread, blocked on the first build while the rest arrive.
  JobScheduler scheduler(1, {1}, recording(record, 50ms));
  scheduler.submit({"first", 0, 0});
  std::this_thread::sleep_for(10ms);
  scheduler.submit({"low", 0, 0});
  scheduler.submit({"high", 9, 0});
  scheduler.wait_idle();
  EXPECT_LT(record.at("start build high"), record.at("start build low"));
}

TEST(JobScheduler, AJobTakenBackNeverRuns) {
  Record record;
  JobScheduler scheduler(1, {1}, recording(record, 50ms));
  scheduler.submit({"first", 0, 0});
  std::this_thread::sleep_for(10ms);
  scheduler.submit({"gone", 0, 0});
  EXPECT_TRUE(scheduler.cancel("gone"));
  EXPECT_FALSE(scheduler.cancel("never-submitted"));
  scheduler.wait_idle();
  EXPECT_EQ(record.at("start build gone"), -1);
  EXPECT_EQ(record.at("start run gone"), -1);
}

TEST(JobScheduler, AnExclusiveJobRunsWithNothingBesideIt) {
  Record record;
  JobScheduler scheduler(3, {1, 3}, recording(record, 20ms, 20ms));
  for (int i = 0; i < 4; ++i) {
    scheduler.submit({"g" + std::to_string(i), 0, 1});
  }
  scheduler.submit({"x-timed-cpu", 0, 0, true, true});
  for (int i = 4; i < 8; ++i) {
    scheduler.submit({"g" + std::to_string(i), 0, 1});
  }
  scheduler.wait_idle();
  EXPECT_GE(record.at("start run x-timed-cpu"), 0);
  EXPECT_EQ(record.beside_exclusive, 0);
}

TEST(JobScheduler, StopLetsRunningWorkFinishAndStartsNoMore) {
  Record record;
  std::atomic<int> runs{0};
  JobScheduler scheduler(1, {1},
                         {[](const std::string&) {},
                          [&](const std::string&, int) {
                            ++runs;
                            std::this_thread::sleep_for(50ms);
                          }});
  for (int i = 0; i < 5; ++i) {
    scheduler.submit({"j" + std::to_string(i), 0, 0, false});
  }
  std::this_thread::sleep_for(10ms);
  scheduler.stop();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(scheduler.snapshot().running, 0u);
}

} // namespace
} // namespace kbench::sched
