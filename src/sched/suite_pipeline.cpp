// Builds ahead, evaluations in lanes, exclusive steps alone (sched/suite_pipeline.hpp).
#include "sched/suite_pipeline.hpp"

#include "core/problem_metadata.hpp"

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace kbench::sched {

namespace {

// What the threads share, under one mutex: which builds are done, what runs now, and whether an
// exclusive step is waiting for the machine (it then has precedence over every new start, so a
// stream of builds cannot keep it waiting).
class Machine {
public:
  explicit Machine(std::size_t builds) : m_built(builds, false) {}

  // A shared start: a build, or a step that is not exclusive.
  void start_shared() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_exclusive_waiting == 0 && !m_exclusive_running; });
    ++m_running;
  }
  void finish_shared() {
    {
      std::lock_guard lock(m_mutex);
      --m_running;
    }
    m_changed.notify_all();
  }
  void start_exclusive() {
    std::unique_lock lock(m_mutex);
    ++m_exclusive_waiting;
    m_changed.wait(lock, [&] { return m_running == 0 && !m_exclusive_running; });
    --m_exclusive_waiting;
    m_exclusive_running = true;
  }
  void finish_exclusive() {
    {
      std::lock_guard lock(m_mutex);
      m_exclusive_running = false;
    }
    m_changed.notify_all();
  }
  void mark_built(std::size_t build) {
    {
      std::lock_guard lock(m_mutex);
      m_built[build] = true;
    }
    m_changed.notify_all();
  }
  void wait_built(std::size_t build) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_built[build]; });
  }

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<bool> m_built;
  int m_running = 0;
  int m_exclusive_waiting = 0;
  bool m_exclusive_running = false;
};

// Ranks of `run`: its own world_size, else the problem's declaration, else 1. An unreadable
// problem counts as one rank; its evaluation fails at once and says why.
int ranks_of(const EvalOptions& run) {
  if (run.world_size > 0) {
    return run.world_size;
  }
  std::ifstream in(run.problem);
  std::stringstream text;
  text << in.rdbuf();
  std::string error;
  return declared_world_size(text.str(), error).value_or(1);
}

} // namespace

PipelinePlan plan_pipeline(const std::vector<EvalOptions>& runs, int jobs, int gpu_lanes) {
  PipelinePlan plan;
  plan.lanes = {1, std::max(1, gpu_lanes)};
  std::map<std::pair<std::filesystem::path, std::string>, std::size_t> build_of;
  for (const auto& run : runs) {
    PipelineStep step;
    step.queue = run.device == "cuda" ? 1 : 0;
    step.exclusive = step.queue == 0 ? !run.no_timing : gpu_lanes > 1 && ranks_of(run) > 1;
    if (!step.exclusive || jobs > 1) {
      const auto key = std::make_pair(std::filesystem::weakly_canonical(run.candidate), run.device);
      auto [at, inserted] = build_of.emplace(key, plan.builds.size());
      if (inserted) {
        EvalOptions build = run;
        build.compile_only = true;
        plan.builds.push_back(std::move(build));
      }
      step.build = at->second;
    }
    plan.steps.push_back(step);
  }
  return plan;
}

void run_pipeline(std::size_t build_count, int jobs, const std::vector<int>& lanes,
                  const std::vector<PipelineStep>& steps,
                  const std::function<void(std::size_t)>& build,
                  const std::function<void(std::size_t, int)>& run) {
  Machine machine(build_count);
  std::mutex queue_mutex;
  std::size_t next_build = 0;
  // Each queue's steps in order, and the next one to hand out.
  std::vector<std::vector<std::size_t>> queued(lanes.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    queued.at(steps[s].queue).push_back(s);
  }
  std::vector<std::size_t> next_step(lanes.size(), 0);

  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j) {
    threads.emplace_back([&] {
      for (;;) {
        // Claimed only once it may start, so the builds start in order.
        machine.start_shared();
        std::size_t b = 0;
        {
          std::lock_guard lock(queue_mutex);
          b = next_build < build_count ? next_build++ : build_count;
        }
        if (b == build_count) {
          machine.finish_shared();
          return;
        }
        build(b);
        machine.finish_shared();
        machine.mark_built(b);
      }
    });
  }
  for (std::size_t q = 0; q < lanes.size(); ++q) {
    for (int lane = 0; lane < std::max(1, lanes[q]); ++lane) {
      threads.emplace_back([&, q, lane] {
        for (;;) {
          std::size_t s = 0;
          {
            std::lock_guard lock(queue_mutex);
            if (next_step[q] == queued[q].size()) {
              return;
            }
            s = queued[q][next_step[q]++];
          }
          const PipelineStep& step = steps[s];
          if (step.build) {
            machine.wait_built(*step.build);
          }
          if (step.exclusive) {
            machine.start_exclusive();
            run(s, lane);
            machine.finish_exclusive();
          } else {
            machine.start_shared();
            run(s, lane);
            machine.finish_shared();
          }
        }
      });
    }
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

} // namespace kbench::sched
