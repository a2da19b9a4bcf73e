// Covers the e2e tests' own BackgroundProcess: a background program that does not end when told
// fails the test, within the deadline, with what it was doing, instead of holding the suite
// until CTest's timeout (a hung `kbench serve` once cost CI 30 minutes and said nothing).
#include "kbench_runner.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>

namespace kbench::testing {
namespace {

TEST(BackgroundProcess, AProgramThatIgnoresTheSignalFailsTheTestWithItsThreadsAndIsKilled) {
  BackgroundProcess stubborn(
      {"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"});
  ASSERT_EQ(stubborn.first_line(), "ready");
  stubborn.set_stop_deadline(std::chrono::seconds(1));
  int status = 0;
  EXPECT_NONFATAL_FAILURE(status = stubborn.stop(SIGTERM), "did not end within 1 s of signal 15");
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(stubborn.stop(SIGTERM), -1) << "already stopped";
}

TEST(BackgroundProcess, TheDescriptionNamesEachThreadAndWhereItWaits) {
  BackgroundProcess sleeper({"/bin/sh", "-c", "echo ready; exec sleep 60"});
  ASSERT_EQ(sleeper.first_line(), "ready");
  std::this_thread::sleep_for(std::chrono::milliseconds(200)); // past the exec
  const std::string described = describe_stuck_process(sleeper.pid());
  EXPECT_CONTAINS(described, "(sleep): waits in");
}

} // namespace
} // namespace kbench::testing
