// No candidate code as root (docs/architecture.md, "Sandbox", the `user` protection): a kbench
// started by root runs its workers as KBENCH_WORKER_USER (default nobody), so that RLIMIT_NPROC,
// which the kernel does not apply to root, holds. A probe candidate reports from inside the
// candidate worker who it is and how many threads it could start. Skipped unless run as root.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <pwd.h>
#include <string>
#include <unistd.h>

using kbench::testing::KbenchRun;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;
namespace fs = std::filesystem;

namespace {

#define REQUIRE_ROOT()                                                                             \
  do {                                                                                             \
    if (geteuid() != 0) {                                                                          \
      GTEST_SKIP() << "a kbench that is not root keeps its own user (this test runs as uid "       \
                   << geteuid() << ")";                                                            \
    }                                                                                              \
  } while (false)

KbenchRun eval_probe() {
  return run_kbench({"eval", repo_path("examples/exploits/problem_relu.py"),
                     repo_path("tests/e2e/candidates/worker_user_probe.py"), "--device", "cpu",
                     "--trials", "1", "--no-timing", "--quiet", "--rules", "structural"});
}

std::string nobody() {
  const passwd* entry = getpwnam("nobody");
  return std::to_string(entry ? entry->pw_uid : 65534);
}

const nlohmann::json* protection(const KbenchRun& run, const std::string& name) {
  for (const auto& p : run.result["sandbox"]) {
    if (p["protection"] == name) {
      return &p;
    }
  }
  return nullptr;
}

// The number after `key=` in the probe's message.
long probe_value(const std::string& message, const std::string& key) {
  const auto at = message.find(key + "=");
  return at == std::string::npos ? -1 : std::atol(message.c_str() + at + key.size() + 1);
}

// Sets KBENCH_WORKER_USER for one test and restores it after.
class WorkerUserSetting {
public:
  explicit WorkerUserSetting(const char* value) {
    if (const char* old = std::getenv("KBENCH_WORKER_USER")) {
      m_old = old;
    }
    setenv("KBENCH_WORKER_USER", value, 1);
  }
  ~WorkerUserSetting() {
    if (m_old) {
      setenv("KBENCH_WORKER_USER", m_old->c_str(), 1);
    } else {
      unsetenv("KBENCH_WORKER_USER");
    }
  }

private:
  std::optional<std::string> m_old;
};

} // namespace

TEST(RootWorkers, ACandidateStartedByRootRunsAsNobodyUnderTheProcessLimit) {
  REQUIRE_ROOT();
  const auto run = eval_probe();
  const std::string message = run.result.value("message", "");
  ASSERT_EQ(run.result["status"], "runtime_error") << message << run.stderr_text;
  EXPECT_CONTAINS(message, "worker probe: uid=" + nobody() + " euid=" + nobody());
  EXPECT_CONTAINS(message, "groups=[]");
  // The limit is nobody's task count at the spawn + 4096: thread 6000 never starts.
  EXPECT_CONTAINS(message, "stop=can't start new thread");
  EXPECT_LT(probe_value(message, "threads"), 6000);
  EXPECT_GT(probe_value(message, "threads"), 0);
  EXPECT_LE(probe_value(message, "threads"), probe_value(message, "nproc"));
  EXPECT_EQ(message.find("home=/root"), std::string::npos) << message;
  for (const auto& warning : run.result["warnings"]) {
    EXPECT_EQ(warning.get<std::string>().find("root"), std::string::npos) << warning;
  }
  const auto* processes = protection(run, "processes");
  ASSERT_NE(processes, nullptr);
  EXPECT_TRUE((*processes)["active"].get<bool>()) << *processes;
  EXPECT_CONTAINS((*processes)["detail"].get<std::string>(), "tasks of uid " + nobody());
  const auto* user = protection(run, "user");
  ASSERT_NE(user, nullptr);
  EXPECT_TRUE((*user)["active"].get<bool>()) << *user;
  EXPECT_CONTAINS((*user)["detail"].get<std::string>(), "(uid " + nobody());
}

TEST(RootWorkers, RootOnRequestKeepsWorkersRootAndEveryResultSaysSo) {
  REQUIRE_ROOT();
  const WorkerUserSetting root("root");
  const auto run = eval_probe();
  const std::string message = run.result.value("message", "");
  ASSERT_EQ(run.result["status"], "runtime_error") << message << run.stderr_text;
  EXPECT_CONTAINS(message, "worker probe: uid=0 euid=0");
  EXPECT_CONTAINS(message, "threads=6000 stop=none"); // what the limit is there to stop
  const auto warnings = run.result["warnings"].dump();
  EXPECT_CONTAINS(warnings, "worker user off: the worker runs as root (KBENCH_WORKER_USER=root "
                            "keeps workers as root), so the process limit does not hold");
  EXPECT_CONTAINS(warnings, "process limit off");
}

TEST(RootWorkers, ACandidateTheWorkersUserCannotReachFailsBeforeAnyWorkerRuns) {
  REQUIRE_ROOT();
  char pattern[] = "/tmp/kbench-private-XXXXXX"; // mode 0700, root's: as /root is
  const fs::path closed = mkdtemp(pattern);
  fs::copy_file(repo_path("examples/cpu/level1_relu.py"), closed / "level1_relu.py");
  const auto run =
      run_kbench({"eval", repo_path("problems/level1/1_relu.py"), (closed / "level1_relu.py"),
                  "--device", "cpu", "--trials", "1", "--no-timing", "--quiet"});
  fs::remove_all(closed);
  EXPECT_EQ(run.exit_code, 2) << run.stdout_text << run.stderr_text;
  EXPECT_EQ(run.result["status"], "harness_error");
  const std::string message = run.result.value("message", "");
  EXPECT_CONTAINS(message, "as nobody (uid " + nobody());
  EXPECT_CONTAINS(message, "the candidate " + (closed / "level1_relu.py").string() +
                               ": the directory " + closed.string() +
                               " is not searchable by it (Permission denied)");
  EXPECT_CONTAINS(message, "KBENCH_WORKER_USER");
  EXPECT_CONTAINS(message, "scripts/worker-access.sh");
}

TEST(RootWorkers, AnUnknownWorkerUserIsAHarnessErrorNamingTheVariable) {
  REQUIRE_ROOT();
  const WorkerUserSetting unknown("no-such-user-anywhere");
  const auto run = run_kbench({"eval", repo_path("examples/exploits/problem_relu.py"),
                               repo_path("examples/cpu/level1_relu.py"), "--device", "cpu",
                               "--trials", "1", "--no-timing", "--quiet"});
  EXPECT_EQ(run.exit_code, 2) << run.stdout_text << run.stderr_text;
  EXPECT_CONTAINS(run.result.value("message", ""),
                  "KBENCH_WORKER_USER=no-such-user-anywhere: no user named "
                  "'no-such-user-anywhere' on this system");
}
