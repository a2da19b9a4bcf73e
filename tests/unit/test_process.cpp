// Spawning, deadlines and the worker protocol, with /bin/sh standing in for kbench-worker.
#include "sandbox/environment.hpp"
#include "sandbox/worker_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace kbench::sandbox;
using namespace std::chrono_literals;

namespace {

SpawnSpec shell(const std::string& script) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.environment = to_envp(worker_environment({}));
  spec.working_directory = std::filesystem::temp_directory_path();
  return spec;
}

} // namespace

TEST(Process, ReportsExitCode) {
  Process p = Process::spawn(shell("exit 7"));
  const ExitStatus status = p.wait();
  EXPECT_FALSE(status.signaled);
  EXPECT_EQ(status.code, 7);
  EXPECT_EQ(status.describe(), "exited with code 7");
}

TEST(Process, ReportsSignalByName) {
  Process p = Process::spawn(shell("kill -SEGV $$"));
  const ExitStatus status = p.wait();
  EXPECT_TRUE(status.signaled);
  EXPECT_EQ(status.signal, SIGSEGV);
  EXPECT_NE(status.describe().find("SIGSEGV"), std::string::npos);
  EXPECT_NE(status.describe().find("segmentation fault"), std::string::npos);
}

// A phase's wall time is the worker's lifetime: it stops at the exit, not when it is read.
TEST(Process, LifetimeEndsWhenTheProcessIsReaped) {
  Process p = Process::spawn(shell("sleep 0.2"));
  EXPECT_LT(p.lifetime_s(), 0.2); // still running: up to now
  p.wait();
  const double lifetime = p.lifetime_s();
  EXPECT_GE(lifetime, 0.2);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(p.lifetime_s(), lifetime);
  Process moved = std::move(p);
  EXPECT_EQ(moved.lifetime_s(), lifetime);
}

TEST(Process, MissingProgramIsASpawnErrorThatSaysWhy) {
  SpawnSpec spec = shell("");
  spec.argv = {"/nonexistent/kbench-worker"};
  try {
    Process::spawn(spec);
    FAIL() << "spawn should throw";
  } catch (const SpawnError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/kbench-worker"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("No such file"), std::string::npos) << error.what();
  }
}

TEST(Process, EnvironmentIsCleanAndMulticastIsOff) {
  setenv("KBENCH_TEST_SECRET", "leak", 1);
  WorkerClient worker(
      shell("read line; printf '{\"secret\":\"%s\",\"nvls\":\"%s\"}\\n' \"$KBENCH_TEST_SECRET\" "
            "\"$NCCL_NVLS_ENABLE\" >&3"),
      4096);
  const WorkerReply reply = worker.request({{"op", "x"}}, 10s);
  ASSERT_EQ(reply.kind, WorkerReply::Kind::answered);
  EXPECT_EQ(reply.body["secret"], "");
  EXPECT_EQ(reply.body["nvls"], "0");
  unsetenv("KBENCH_TEST_SECRET");
}

TEST(WorkerClient, AnswersComeFromTheResponseChannelNotStdout) {
  WorkerClient worker(shell("read line; echo '{\"fake\":true}'; echo '{\"ok\":true}' >&3; "
                            "read line"),
                      4096);
  const WorkerReply reply = worker.request({{"op", "hello"}}, 10s);
  ASSERT_EQ(reply.kind, WorkerReply::Kind::answered);
  EXPECT_TRUE(reply.body.value("ok", false));
  EXPECT_NE(worker.stdout_capture().text().find("fake"), std::string::npos);
}

TEST(WorkerClient, DeadlineKillsTheWholeProcessGroup) {
  const auto pid_file = std::filesystem::temp_directory_path() / "kbench_test_grandchild.pid";
  std::filesystem::remove(pid_file);
  WorkerClient worker(
      shell("sleep 300 & echo $! > " + pid_file.string() + "; read line; sleep 300"), 4096);
  const auto start = std::chrono::steady_clock::now();
  const WorkerReply reply = worker.request({{"op", "hang"}}, 500ms);
  EXPECT_EQ(reply.kind, WorkerReply::Kind::timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  std::this_thread::sleep_for(100ms);
  // The grandchild was killed with the group (a zombie until init reaps it counts as gone).
  std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
  std::string field;
  std::string state;
  if (stat >> field >> field >> state) {
    EXPECT_EQ(state, "Z") << "grandchild still running";
  }
}

TEST(WorkerClient, DeathBeforeAnsweringKeepsTheLastWords) {
  WorkerClient worker(shell("read line; echo 'Fatal Python error: Segmentation fault' >&2; "
                            "kill -SEGV $$"),
                      4096);
  const WorkerReply reply = worker.request({{"op", "forward"}}, 10s);
  ASSERT_EQ(reply.kind, WorkerReply::Kind::died);
  EXPECT_TRUE(reply.exit.signaled);
  EXPECT_EQ(reply.exit.signal, SIGSEGV);
  EXPECT_NE(worker.stderr_capture().text().find("Fatal Python error"), std::string::npos);
}

TEST(WorkerClient, GarbageOnTheResponseChannelIsAProtocolError) {
  WorkerClient worker(shell("read line; echo 'not json' >&3; read line"), 4096);
  const WorkerReply reply = worker.request({{"op", "x"}}, 10s);
  EXPECT_EQ(reply.kind, WorkerReply::Kind::protocol_error);
  EXPECT_NE(reply.detail.find("not JSON"), std::string::npos);
}

TEST(WorkerClient, FloodOfOutputIsCappedAndDoesNotBlock) {
  // 8 MB on stdout before answering: the pipes must be drained while waiting.
  WorkerClient worker(shell("read line; head -c 8000000 /dev/zero | tr '\\0' x; "
                            "echo '{\"ok\":true}' >&3; read line"),
                      1024);
  const WorkerReply reply = worker.request({{"op", "x"}}, 30s);
  ASSERT_EQ(reply.kind, WorkerReply::Kind::answered);
  EXPECT_EQ(worker.stdout_capture().total_bytes(), 8000000u);
  EXPECT_LT(worker.stdout_capture().text().size(), 4096u);
}

TEST(WorkerClient, ShutdownEndsAWorkerThatIgnoresExit) {
  WorkerClient worker(shell("trap '' TERM; while true; do sleep 1; done"), 1024);
  const auto start = std::chrono::steady_clock::now();
  worker.shutdown(200ms);
  EXPECT_FALSE(worker.alive());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}
