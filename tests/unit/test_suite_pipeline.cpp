// Covers src/sched/suite_pipeline.cpp: a step starts once its own build is done (not every
// build), each lane keeps the given order, and an exclusive step never runs beside a build or
// another step. The stand-in builds and steps record what ran beside what; nothing is timed
// (a wait that should never block has a generous deadline so a broken scheduler fails the test
// rather than hanging it).
#include "sched/suite_pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>

namespace kbench::sched {
namespace {

using namespace std::chrono_literals;

// What ran, in the order it started and ended, and what was running at each start.
struct Log {
  std::mutex mutex;
  std::vector<std::string> events;
  int running = 0;
  int most_beside_exclusive = 0; // others running when an exclusive step started or ran
  bool exclusive_now = false;

  void begin(const std::string& what, bool exclusive) {
    std::lock_guard lock(mutex);
    events.push_back("start " + what);
    if (exclusive && running > 0) {
      most_beside_exclusive = std::max(most_beside_exclusive, running);
    }
    if (exclusive_now) {
      most_beside_exclusive = std::max(most_beside_exclusive, 1);
    }
    exclusive_now = exclusive_now || exclusive;
    ++running;
  }
  void end(const std::string& what, bool exclusive) {
    std::lock_guard lock(mutex);
    events.push_back("end " + what);
    --running;
    if (exclusive) {
      exclusive_now = false;
    }
  }
  std::ptrdiff_t at(const std::string& event) {
    const auto found = std::find(events.begin(), events.end(), event);
    EXPECT_NE(found, events.end()) << event << " never happened";
    return found - events.begin();
  }
};

TEST(RunPipeline, AStepStartsWhenItsBuildIsDoneWithoutWaitingForLaterBuilds) {
  // Build 1 can only finish once step 0 has started: a scheduler that waits for every build
  // before the first step never lets it.
  Log log;
  std::promise<void> step0_started;
  auto step0_future = step0_started.get_future();
  bool build1_saw_step0 = false;
  const std::vector<PipelineStep> steps = {{0, 1, false}, {1, 1, false}};
  run_pipeline(
      2, 1, {1, 1}, steps,
      [&](std::size_t b) {
        log.begin("build " + std::to_string(b), false);
        if (b == 1) {
          build1_saw_step0 = step0_future.wait_for(120s) == std::future_status::ready;
        }
        log.end("build " + std::to_string(b), false);
      },
      [&](std::size_t s, int lane) {
        EXPECT_EQ(lane, 0);
        log.begin("step " + std::to_string(s), false);
        if (s == 0) {
          step0_started.set_value();
        }
        log.end("step " + std::to_string(s), false);
      });
  EXPECT_TRUE(build1_saw_step0);
  EXPECT_LT(log.at("end build 0"), log.at("start step 0"));
  EXPECT_LT(log.at("end build 1"), log.at("start step 1"));
}

TEST(RunPipeline, ALaneRunsItsStepsInOrderAndEachAfterItsBuild) {
  Log log;
  // Builds finish in reverse order of need (three threads, the first build slowest), so a lane
  // that took steps as their builds finished would reorder them.
  std::promise<void> last_built;
  auto last_future = last_built.get_future().share();
  const std::vector<PipelineStep> steps = {
      {0, 0, false}, {1, 0, false}, {2, 0, false}, {std::nullopt, 0, false}};
  run_pipeline(
      3, 3, {1, 1}, steps,
      [&](std::size_t b) {
        if (b == 0) {
          last_future.wait_for(120s);
        }
        log.begin("build " + std::to_string(b), false);
        log.end("build " + std::to_string(b), false);
        if (b == 2) {
          last_built.set_value();
        }
      },
      [&](std::size_t s, int) {
        log.begin("step " + std::to_string(s), false);
        log.end("step " + std::to_string(s), false);
      });
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_LT(log.at("end build " + std::to_string(s)), log.at("start step " + std::to_string(s)));
  }
  EXPECT_LT(log.at("end step 0"), log.at("start step 1"));
  EXPECT_LT(log.at("end step 1"), log.at("start step 2"));
  EXPECT_LT(log.at("end step 2"), log.at("start step 3"));
}

TEST(RunPipeline, AnExclusiveStepRunsWithNothingBesideIt) {
  Log log;
  // Queue 0: exclusive CPU steps; queue 1: two GPU lanes of shared steps; three build threads.
  std::vector<PipelineStep> steps;
  for (std::size_t s = 0; s < 12; ++s) {
    const bool cpu = s % 3 == 0;
    steps.push_back({s % 4, cpu ? 0u : 1u, cpu});
  }
  std::mutex lanes_mutex;
  std::set<int> gpu_lanes_used;
  run_pipeline(
      4, 3, {1, 2}, steps,
      [&](std::size_t b) {
        log.begin("build " + std::to_string(b), false);
        std::this_thread::yield();
        log.end("build " + std::to_string(b), false);
      },
      [&](std::size_t s, int lane) {
        if (steps[s].queue == 1) {
          std::lock_guard lock(lanes_mutex);
          gpu_lanes_used.insert(lane);
        }
        log.begin("step " + std::to_string(s), steps[s].exclusive);
        std::this_thread::yield();
        log.end("step " + std::to_string(s), steps[s].exclusive);
      });
  EXPECT_EQ(log.most_beside_exclusive, 0);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    EXPECT_LT(log.at("end build " + std::to_string(*steps[s].build)),
              log.at("start step " + std::to_string(s)));
  }
  for (int lane : gpu_lanes_used) {
    EXPECT_TRUE(lane == 0 || lane == 1) << lane;
  }
}

// plan_pipeline's choices, from options alone.
EvalOptions run_on(const std::string& device, const std::string& candidate) {
  EvalOptions run;
  run.problem = "/nonexistent/problem.py";
  run.candidate = "/nonexistent/" + candidate;
  run.device = device;
  return run;
}

TEST(PlanPipeline, OneBuildPerCandidateAndDeviceInOrderOfNeed) {
  const auto plan = plan_pipeline({run_on("cuda", "a.py"), run_on("cuda", "b.py"),
                                   run_on("cuda", "a.py"), run_on("cpu", "a.py")},
                                  2, 1);
  ASSERT_EQ(plan.builds.size(), 3u);
  EXPECT_EQ(plan.builds[0].candidate, "/nonexistent/a.py");
  EXPECT_EQ(plan.builds[1].candidate, "/nonexistent/b.py");
  EXPECT_EQ(plan.builds[2].device, "cpu");
  for (const auto& build : plan.builds) {
    EXPECT_TRUE(build.compile_only);
  }
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.steps[0].build, 0u);
  EXPECT_EQ(plan.steps[1].build, 1u);
  EXPECT_EQ(plan.steps[2].build, 0u);
  EXPECT_EQ(plan.steps[3].build, 2u);
  EXPECT_EQ(plan.steps[0].queue, 1u);
  EXPECT_EQ(plan.steps[3].queue, 0u);
  EXPECT_EQ(plan.lanes, (std::vector<int>{1, 1}));
}

TEST(PlanPipeline, TimedCpuStepsAreExclusiveAndBuildInlineWithOneJob) {
  auto untimed = run_on("cpu", "b.py");
  untimed.no_timing = true;
  const auto one_job =
      plan_pipeline({run_on("cpu", "a.py"), untimed, run_on("cuda", "c.py")}, 1, 1);
  EXPECT_TRUE(one_job.steps[0].exclusive);
  EXPECT_FALSE(one_job.steps[0].build) << "a build could overlap nothing and costs a worker";
  EXPECT_FALSE(one_job.steps[1].exclusive);
  EXPECT_TRUE(one_job.steps[1].build);
  EXPECT_FALSE(one_job.steps[2].exclusive);
  EXPECT_TRUE(one_job.steps[2].build);
  const auto two_jobs = plan_pipeline({run_on("cpu", "a.py")}, 2, 1);
  EXPECT_TRUE(two_jobs.steps[0].exclusive);
  EXPECT_TRUE(two_jobs.steps[0].build);
}

TEST(PlanPipeline, SeveralRanksTakeTheGpusAloneOnlyWhenThereAreSeveralLanes) {
  auto two_ranks = run_on("cuda", "a.py");
  two_ranks.world_size = 2;
  EXPECT_FALSE(plan_pipeline({two_ranks}, 2, 1).steps[0].exclusive);
  const auto plan = plan_pipeline({two_ranks, run_on("cuda", "b.py")}, 2, 4);
  EXPECT_TRUE(plan.steps[0].exclusive);
  EXPECT_FALSE(plan.steps[1].exclusive);
  EXPECT_EQ(plan.lanes, (std::vector<int>{1, 4}));

  // A problem's own KBENCH_WORLD_SIZE counts when the run does not say.
  const auto problem = std::filesystem::temp_directory_path() /
                       ("kbench_pipeline_" + std::to_string(::getpid()) + "_ranks.py");
  std::ofstream(problem) << "KBENCH_WORLD_SIZE = 2\n";
  auto declared = run_on("cuda", "c.py");
  declared.problem = problem;
  EXPECT_TRUE(plan_pipeline({declared}, 2, 2).steps[0].exclusive);
  std::filesystem::remove(problem);
}

} // namespace
} // namespace kbench::sched
