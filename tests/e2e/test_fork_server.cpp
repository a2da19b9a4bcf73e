// Warm workers (docs/architecture.md, "Processes"): a worker forked by the fork server has the
// protections of a spawned one, the launch environment and nothing of kbench's own, and a
// crashing or hanging child leaves the server fit for the next evaluation. KBENCH_FORK_SERVER=off
// spawns every worker as before.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

using kbench::testing::KbenchRun;
using kbench::testing::repo_path;
using kbench::testing::run_kbench;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable of this test (and so of the kbench it starts) for a scope.
struct ScopedVariable {
  std::string name;
  ScopedVariable(std::string n, const char* value) : name(std::move(n)) {
    if (value) {
      setenv(name.c_str(), value, 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  ~ScopedVariable() { unsetenv(name.c_str()); }
};

KbenchRun eval_relu() {
  return run_kbench({"eval", repo_path("problems/level1/1_relu.py"),
                     repo_path("examples/cpu/level1_relu.py"), "--device", "cpu", "--trials", "1",
                     "--no-timing", "--quiet"});
}

std::string started_of(const KbenchRun& run) {
  std::string out;
  for (const auto& p : run.result["phases"]) {
    out += p.value("phase", "") + "=" + p.value("started", "") + " ";
  }
  return out;
}

TEST(ForkServer, ForkedWorkersHaveTheProtectionsOfSpawnedOnes) {
  const KbenchRun forked = eval_relu();
  KbenchRun spawned;
  {
    ScopedVariable off("KBENCH_FORK_SERVER", "off");
    spawned = eval_relu();
  }
  ASSERT_EQ(forked.result.value("status", ""), "ok") << forked.stderr_text;
  ASSERT_EQ(spawned.result.value("status", ""), "ok") << spawned.stderr_text;
  EXPECT_CONTAINS(started_of(forked), "candidate=forked");
  EXPECT_CONTAINS(started_of(forked), "reference=forked");
  EXPECT_EQ(started_of(spawned).find("forked"), std::string::npos) << started_of(spawned);
  EXPECT_CONTAINS(started_of(spawned), "candidate=spawned");
  // The same protections, each as active; the details name per-evaluation paths and counts.
  ASSERT_EQ(forked.result["sandbox"].size(), spawned.result["sandbox"].size());
  for (std::size_t i = 0; i < forked.result["sandbox"].size(); ++i) {
    const auto& f = forked.result["sandbox"][i];
    const auto& s = spawned.result["sandbox"][i];
    EXPECT_EQ(f["protection"], s["protection"]);
    EXPECT_EQ(f["active"], s["active"])
        << f["protection"] << ": " << f["detail"] << " vs " << s["detail"];
  }
  EXPECT_EQ(forked.result["warnings"], spawned.result["warnings"]);
}

TEST(ForkServer, ChildSeesExactlyTheLaunchEnvironment) {
  ScopedVariable leak("KBENCH_FORK_LEAK_PROBE", "secret-of-kbench");
  auto probe = [] {
    return run_kbench({"eval", repo_path("examples/exploits/problem_relu.py"),
                       repo_path("tests/e2e/candidates/environment_probe.py"), "--device", "cpu",
                       "--trials", "1", "--no-timing", "--quiet", "--rules", "structural"});
  };
  const KbenchRun forked = probe();
  KbenchRun spawned;
  {
    ScopedVariable off("KBENCH_FORK_SERVER", "off");
    spawned = probe();
  }
  const std::string message = forked.result.value("message", "");
  EXPECT_CONTAINS(message, "environment probe:");
  EXPECT_CONTAINS(message, "leak=None c_leak=None same_tmp=True");
  const auto names = [](const std::string& m) {
    const auto at = m.find("names=[");
    return at == std::string::npos ? std::string() : m.substr(at, m.find(']', at) - at);
  };
  EXPECT_FALSE(names(message).empty()) << message;
  EXPECT_EQ(names(message), names(spawned.result.value("message", "")));
}

TEST(ForkServer, CrashingAndHangingChildrenLeaveTheNextEvaluationUnaffected) {
  const fs::path dir = fs::temp_directory_path() / ("kbench-fork-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path manifest = dir / "suite.json";
  std::ofstream(manifest) << nlohmann::json{
      {"schema", "kbench.suite/1"},
      {"entries",
       {{{"problem", repo_path("problems/level1/1_relu.py")},
         {"candidate", repo_path("examples/broken/segfault.py")},
         {"device", "cpu"}},
        {{"problem", repo_path("problems/level1/1_relu.py")},
         {"candidate", repo_path("examples/broken/infinite_loop.py")},
         {"device", "cpu"}},
        {{"problem", repo_path("problems/level1/1_relu.py")},
         {"candidate", repo_path("examples/cpu/level1_relu.py")},
         {"device", "cpu"}}}}}.dump();
  const fs::path results = dir / "results.jsonl";
  const KbenchRun run =
      run_kbench({"suite", manifest.string(), "--device", "cpu", "--trials", "1", "--no-timing",
                  "--run-timeout", "20", "--rules", "structural", "--jsonl", results.string()},
                 false);
  std::map<std::string, std::string> status;
  std::string text;
  std::ifstream lines(results);
  for (std::string line; std::getline(lines, line);) {
    const auto r = nlohmann::json::parse(line);
    text += line.substr(0, 1500) + "\n";
    status[fs::path(r["candidate"].value("path", "")).filename().string()] = r.value("status", "");
    for (const auto& p : r["phases"]) {
      EXPECT_EQ(p.value("started", ""), "forked") << r["candidate"].value("path", "");
    }
  }
  fs::remove_all(dir);
  ASSERT_EQ(status.size(), 3u) << run.stderr_text << run.stdout_text;
  EXPECT_EQ(status["segfault.py"], "crashed") << text;
  EXPECT_EQ(status["infinite_loop.py"], "timeout") << text;
  EXPECT_EQ(status["level1_relu.py"], "ok") << text;
}

} // namespace
