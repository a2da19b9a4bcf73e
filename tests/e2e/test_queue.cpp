// Covers the Redis work queue (src/queue/, docs/distributed.md) with a real redis-server the test
// starts on loopback and real `kbench worker` processes on the CPU device: 200 evaluations over 3
// workers while one worker is killed with SIGKILL mid-job and the Redis server is restarted
// once; every evaluation comes back exactly once, in the store and in --jsonl, and the killed
// worker's jobs finish within 60 s of the kill. A poison job that kills each worker that takes it
// ends in the dead-letter stream after --max-attempts, as a harness_error row. `kbench queue
// status` shows it. Skips, saying so, where redis-server or hiredis is missing.
#include "kbench_runner.hpp"
#include "store/store.hpp"

#ifdef KBENCH_HAVE_QUEUE
#include "queue/work_queue.hpp"
#endif

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <netinet/in.h>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kbench::testing {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

#ifdef KBENCH_HAVE_QUEUE

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const int port = ntohs(address.sin_port);
  close(fd);
  return port;
}

bool have_redis_server() {
  return std::system("command -v redis-server > /dev/null 2>&1") == 0;
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class Queue : public ::testing::Test {
protected:
  void SetUp() override {
    if (!have_redis_server()) {
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs the "
                      "distribution's redis-server): the work-queue tests need one";
    }
    m_dir = fs::temp_directory_path() /
            ("kbench-queue-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "redis");
    m_port = free_port();
    start_redis();
    expect_redis_up();
  }
  void TearDown() override {
    m_workers.clear();
    m_redis.reset();
    fs::remove_all(m_dir);
  }

  // AOF on, as docs/distributed.md's configuration: a restart keeps every accepted job.
  void start_redis() {
    // Its log goes to a file: BackgroundProcess reads one line of stdout and closes the pipe,
    // and a server still writing there would die of SIGPIPE. The echo is that line.
    const std::string command = fmt::format(
        "echo starting; exec redis-server --port {} --bind 127.0.0.1 --save '' --appendonly yes "
        "--appendfsync always --dir {} --logfile {} --daemonize no",
        m_port, (m_dir / "redis").string(), (m_dir / "redis.log").string());
    m_redis =
        std::make_unique<BackgroundProcess>(std::vector<std::string>{"/bin/sh", "-c", command});
  }
  // The server answers (or the test fails here, naming its log).
  void expect_redis_up() {
    queue::RedisClient probe(queue::parse_queue_url(url()), 20);
    ASSERT_EQ(probe.command({"PING"}).text, "PONG") << file_text(m_dir / "redis.log");
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(m_port) + "/test"; }

  void start_worker(const std::string& name,
                    std::vector<std::string> extra = {"--claim-idle-s", "5"}) {
    std::vector<std::string> argv = {KBENCH_BINARY, "worker", "--queue", url(),    "--device",
                                     "cpu",         "--name", name,      "--no-db"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    m_workers.push_back(std::make_unique<BackgroundProcess>(argv));
  }

  // A manifest of `count` distinct candidates (each the honest torch ReLU with its own comment).
  fs::path manifest(int count, const std::string& marker = "") {
    const std::string honest = file_text(repo_path("tests/e2e/candidates/relu_torch.py"));
    json entries = json::array();
    for (int i = 0; i < count; ++i) {
      const fs::path candidate = m_dir / "candidates" / ("relu_" + std::to_string(i) + ".py");
      fs::create_directories(candidate.parent_path());
      std::ofstream(candidate) << honest << "\n# variant " << i << marker << "\n";
      entries.push_back({{"problem", repo_path("examples/exploits/problem_relu.py")},
                         {"candidate", candidate.string()},
                         {"device", "cpu"},
                         {"expect", marker.empty() ? "ok" : "harness_error"},
                         {"rules", "structural"}});
    }
    const fs::path file = m_dir / "suite.json";
    std::ofstream(file) << json{{"schema", "kbench.suite/1"}, {"entries", entries}}.dump(1);
    return file;
  }

  KbenchRun suite(const fs::path& file) {
    return run_kbench({"suite", file.string(), "--queue", url(), "--jsonl",
                       (m_dir / "results.jsonl").string(), "--db",
                       (m_dir / "store.sqlite").string(), "--no-timing", "--trials", "1"},
                      false);
  }

  fs::path m_dir;
  int m_port = 0;
  std::unique_ptr<BackgroundProcess> m_redis;
  std::vector<std::unique_ptr<BackgroundProcess>> m_workers;
};

TEST_F(Queue, TwoHundredEvaluationsSurviveAKilledWorkerAndARedisRestart) {
  constexpr int kJobs = 200;
  const fs::path file = manifest(kJobs);
  for (int w = 0; w < 3; ++w) {
    start_worker("worker-" + std::to_string(w));
  }
  KbenchRun produced;
  std::thread producer([&] { produced = suite(file); });
  queue::WorkQueue watch(queue::parse_queue_url(url()), 120);
  auto results_now = [&] { return watch.status().results; };
  const auto started = Clock::now();
  auto wait_for = [&](long long count) {
    while (results_now() < count && Clock::now() - started < std::chrono::minutes(15)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  };

  // One worker killed mid-job: what it held is taken back by the others.
  wait_for(20);
  std::vector<std::string> held;
  for (int tries = 0; tries < 50 && held.empty(); ++tries) { // wait until it holds one
    held = watch.pending_jobs_of("worker-0");
    if (held.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_FALSE(held.empty()) << "worker-0 never held a job";
  m_workers[0]->stop(SIGKILL);
  const auto killed_at = Clock::now();

  // The Redis server restarted once: workers and the producer reconnect, nothing is lost.
  wait_for(80);
  m_redis->stop(SIGTERM);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  start_redis();

  // The killed worker's jobs are answered within 60 s of the kill.
  std::set<std::string> answered;
  std::string after = "0-0";
  while (Clock::now() - killed_at < std::chrono::seconds(60)) {
    for (const auto& entry : watch.read_results(after, 500)) {
      answered.insert(entry.job_id);
    }
    if (std::all_of(held.begin(), held.end(), [&](const auto& id) { return answered.count(id); })) {
      break;
    }
  }
  for (const auto& id : held) {
    EXPECT_TRUE(answered.count(id)) << "job " << id << " of the killed worker not answered in 60 s";
  }

  producer.join();
  ASSERT_EQ(produced.exit_code, 0) << produced.stdout_text << produced.stderr_text;
  EXPECT_CONTAINS(produced.stdout_text, "200 evaluated, 0 skipped, 0 not as expected");

  // Exactly once: 200 rows in the store and in --jsonl, one per candidate.
  store::Store results(m_dir / "store.sqlite", false);
  std::set<std::string> candidates;
  std::size_t rows = 0;
  results.each_evaluation({}, [&](const store::EvaluationRow& row, const std::string&) {
    candidates.insert(row.candidate_sha256);
    ++rows;
    EXPECT_EQ(row.status, "ok");
  });
  EXPECT_EQ(rows, static_cast<std::size_t>(kJobs));
  EXPECT_EQ(candidates.size(), static_cast<std::size_t>(kJobs));
  std::ifstream lines(m_dir / "results.jsonl");
  std::size_t line_count = 0;
  for (std::string line; std::getline(lines, line);) {
    line_count += !line.empty();
  }
  EXPECT_EQ(line_count, static_cast<std::size_t>(kJobs));
  // At-least-once: the results stream may hold a job twice (a worker killed after posting,
  // before acknowledging); the producer kept one.
  EXPECT_GE(watch.status().results, kJobs);
}

TEST_F(Queue, APoisonJobEndsInTheDeadLetterStreamAfterItsAttempts) {
  const fs::path file = manifest(1, " KBENCH_POISON");
  KbenchRun produced;
  std::thread producer([&] { produced = suite(file); });
  // Each worker that takes the job dies on it; a supervisor (systemd, Kubernetes) starts another.
  setenv("KBENCH_TEST_CRASH_ON_SOURCE", "KBENCH_POISON", 1);
  queue::WorkQueue watch(queue::parse_queue_url(url()), 120);
  int started = 0;
  for (; started < 8 && watch.status().dead == 0; ++started) {
    m_workers.clear();
    start_worker("poisoned-" + std::to_string(started),
                 {"--max-attempts", "2", "--claim-idle-s", "1"});
    std::this_thread::sleep_for(std::chrono::seconds(3));
  }
  unsetenv("KBENCH_TEST_CRASH_ON_SOURCE");
  producer.join();
  ASSERT_EQ(produced.exit_code, 0) << produced.stdout_text << produced.stderr_text;
  EXPECT_CONTAINS(produced.stdout_text, "harness_error");
  const auto status = watch.status();
  EXPECT_EQ(status.dead, 1);
  ASSERT_EQ(status.dead_letters.size(), 1u);
  EXPECT_CONTAINS(status.dead_letters[0].value("error", ""), "delivered 3 times");
  EXPECT_LE(started, 4) << "two deliveries die, the third dead-letters it";
  const auto shown = run_kbench({"queue", "status", url()}, false);
  EXPECT_EQ(shown.exit_code, 0) << shown.stderr_text;
  EXPECT_CONTAINS(shown.stdout_text, "1 dead letter(s)");
  EXPECT_CONTAINS(shown.stdout_text, "delivered 3 times");
}

TEST_F(Queue, SigtermDrainsTheWorkerAndLeavesTheRestQueued) {
  const fs::path file = manifest(4);
  KbenchRun produced;
  std::thread producer([&] { produced = suite(file); });
  start_worker("drained");
  queue::WorkQueue watch(queue::parse_queue_url(url()), 120);
  std::vector<std::string> held;
  for (int tries = 0; tries < 600 && held.empty(); ++tries) {
    held = watch.pending_jobs_of("drained");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(held.size(), 1u);
  const int status = m_workers[0]->stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
  // The job in hand was finished and acknowledged; the others wait for the next worker.
  EXPECT_TRUE(watch.pending_jobs_of("drained").empty());
  std::set<std::string> answered;
  std::string after = "0-0";
  for (const auto& entry : watch.read_results(after, 100)) {
    answered.insert(entry.job_id);
  }
  EXPECT_TRUE(answered.count(held[0]));
  EXPECT_LT(answered.size(), 4u);
  start_worker("after");
  producer.join();
  EXPECT_EQ(produced.exit_code, 0) << produced.stdout_text << produced.stderr_text;
  EXPECT_CONTAINS(produced.stdout_text, "4 evaluated, 0 skipped, 0 not as expected");
}

TEST_F(Queue, ABadQueueUrlIsRefusedNamingTheForm) {
  const auto bad = run_kbench({"worker", "--queue", "http://127.0.0.1:6379"}, false);
  EXPECT_EQ(bad.exit_code, 64);
  EXPECT_CONTAINS(bad.stderr_text, "expected redis://HOST[:PORT][/STREAM]");
}

#else

TEST(Queue, SkippedWithoutHiredis) {
  GTEST_SKIP() << "this kbench was built without hiredis (libhiredis-dev): no work queue";
}

#endif

} // namespace
} // namespace kbench::testing
