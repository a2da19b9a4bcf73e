// Covers `kbench serve` (src/service/, docs/service.md) over loopback, on the CPU device: submit,
// poll and result; a repeated request answered from the store; cancel; bad requests (each 4xx
// names the field); the token rule; a restart with queued work; a second signal ending it at
// once, its running evaluation done at the next start; 200 requests from 8 client
// threads, none lost and none evaluated twice. The service is the real binary, started by the
// tests themselves on a free port.
#include "kbench_runner.hpp"
#include "store/job_queue.hpp"
#include "store/store.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <map>
#include <mutex>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kbench::testing {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using json = nlohmann::json;

// `kbench serve --port 0 ...` in the background; the port comes from its first line.
class Service {
public:
  Service(const fs::path& db, std::vector<std::string> extra = {})
      : m_process([&] {
          std::vector<std::string> args = {KBENCH_BINARY, "serve", "--db",   db.string(),
                                           "--port",      "0",     "--jobs", "1"};
          args.insert(args.end(), extra.begin(), extra.end());
          return args;
        }()) {
    const auto at = m_process.first_line().find("http://127.0.0.1:");
    if (at == std::string::npos) {
      throw std::runtime_error("kbench serve did not start: " + m_process.first_line());
    }
    m_port = std::stoi(m_process.first_line().substr(at + 17));
  }
  BackgroundProcess& process() { return m_process; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  httplib::Client client(const std::string& token = "") const {
    httplib::Client c("127.0.0.1", m_port);
    c.set_read_timeout(120, 0);
    if (!token.empty()) {
      c.set_bearer_token_auth(token);
    }
    return c;
  }

private:
  BackgroundProcess m_process;
  int m_port = 0;
};

class ServiceApi : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("kbench-serve-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path db() const { return m_dir / "results.sqlite"; }

  // A correct torch-only ReLU on the exploit corpus' small problem, correctness only; `tag`
  // makes a distinct candidate (another sha256, another evaluation).
  static json evaluation(const std::string& tag = "", const json& extra = json::object()) {
    std::ifstream in(repo_path("tests/e2e/candidates/relu_torch.py"));
    std::stringstream candidate;
    candidate << in.rdbuf() << "# " << tag << "\n";
    json options = {{"device", "cpu"}, {"rules", "structural"}, {"timing", false}, {"trials", 2}};
    options.update(extra);
    return {{"problem", {{"path", repo_path("examples/exploits/problem_relu.py")}}},
            {"candidate", {{"source", candidate.str()}}},
            {"options", options}};
  }
  std::vector<std::string> allow() const { return {"--allow-path", repo_path("examples")}; }

  static json wait_done(httplib::Client& client, const std::string& id,
                        std::chrono::seconds limit = 300s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const auto answer = client.Get("/v1/evaluations/" + id);
      if (answer && answer->status == 200) {
        const json body = json::parse(answer->body);
        const std::string state = body["state"];
        if (state == "done" || state == "failed" || state == "cancelled") {
          return body;
        }
      }
      if (std::chrono::steady_clock::now() > end) {
        ADD_FAILURE() << "evaluation " << id << " did not finish in " << limit.count() << " s";
        return {};
      }
      std::this_thread::sleep_for(200ms);
    }
  }

  fs::path m_dir;
};

TEST_F(ServiceApi, SubmitPollResultRewardAndARepeatAnsweredFromTheStore) {
  Service service(db(), allow());
  auto client = service.client();
  const auto health = client.Get("/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["ok"], true);

  const auto posted = client.Post("/v1/evaluations", evaluation("", {{"reward", "correct"}}).dump(),
                                  "application/json");
  ASSERT_TRUE(posted);
  ASSERT_EQ(posted->status, 202) << posted->body;
  const std::string id = json::parse(posted->body)["ids"][0];
  const json done = wait_done(client, id);
  EXPECT_EQ(done["state"], "done");
  EXPECT_EQ(done["cached"], false);
  EXPECT_EQ(done["result"]["status"], "ok") << done.dump(1).substr(0, 3000);
  EXPECT_EQ(done["result"]["schema"], "kbench.eval/1");
  EXPECT_EQ(done["reward"]["value"], 1.0);
  EXPECT_EQ(done["reward"]["preset"], "correct");

  const auto again = client.Post("/v1/evaluations", evaluation().dump(), "application/json");
  const std::string second = json::parse(again->body)["ids"][0];
  const auto cached = json::parse(client.Get("/v1/evaluations/" + second)->body);
  EXPECT_EQ(cached["state"], "done"); // at once: no GPU or CPU work
  EXPECT_EQ(cached["cached"], true);
  EXPECT_EQ(cached["evaluation_id"], done["evaluation_id"]);

  // The same candidate under other options is evaluated again, and its build step is skipped:
  // the build this service made is in the compile cache.
  const auto more =
      client.Post("/v1/evaluations", evaluation("", {{"trials", 3}}).dump(), "application/json");
  const json third = wait_done(client, json::parse(more->body)["ids"][0]);
  EXPECT_EQ(third["cached"], false);
  EXPECT_EQ(third["result"]["status"], "ok") << third.dump(1).substr(0, 3000);

  const auto queue = json::parse(client.Get("/v1/queue")->body);
  EXPECT_EQ(queue["depth"], 0);
  EXPECT_EQ(queue["lanes"][0]["device"], "cpu");
  EXPECT_EQ(queue["builds"], json({{"made", 1}, {"reused", 1}})) << queue.dump();
}

TEST_F(ServiceApi, KbenchEvalWithServiceIsEvaluatedThereAndPrintedHere) {
  Service service(db()); // no --allow-path: the command sends the files' text
  const std::vector<std::string> pair = {"eval", repo_path("examples/exploits/problem_relu.py"),
                                         repo_path("examples/cpu/level1_relu.py")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = pair;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const auto run = run_kbench(with({"--device", "cpu", "--no-timing", "--rules", "structural",
                                    "--trials", "2", "--service", service.url()}));
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_EQ(run.result["status"], "ok") << run.result.dump();
  EXPECT_EQ(run.result["config"]["trials"], 2);
  EXPECT_NE(run.stdout_text.find("service     " + service.url()), std::string::npos)
      << run.stdout_text;
  // The service stored it: the same request again is answered from its store.
  const auto again = run_kbench(with({"--device", "cpu", "--no-timing", "--rules", "structural",
                                      "--trials", "2", "--service", service.url()}));
  EXPECT_NE(again.stdout_text.find("answered from its store"), std::string::npos)
      << again.stdout_text;
  // A flag a request cannot carry is refused by name, not dropped.
  const auto atol = run_kbench(with({"--atol", "1", "--service", service.url()}), false);
  EXPECT_EQ(atol.exit_code, 64);
  EXPECT_NE(atol.stderr_text.find("--atol cannot be passed to a service"), std::string::npos)
      << atol.stderr_text;
  // A refusal comes in the service's own words, naming the field.
  Service small(m_dir / "small.sqlite", {"--max-source-bytes", "64"});
  const auto refused = run_kbench(with({"--service", small.url()}), false);
  EXPECT_EQ(refused.exit_code, 64);
  EXPECT_NE(refused.stderr_text.find("problem.source"), std::string::npos) << refused.stderr_text;
  // Nothing listening.
  service.process().stop(SIGTERM);
  const auto gone = run_kbench(with({"--service", service.url()}), false);
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_NE(gone.stderr_text.find("start it with `kbench serve`"), std::string::npos)
      << gone.stderr_text;
}

TEST_F(ServiceApi, BadRequestsGetA4xxThatNamesTheField) {
  Service service(db(), allow());
  auto client = service.client();
  auto post = [&](const std::string& body) {
    return client.Post("/v1/evaluations", body, "application/json");
  };
  auto bad = post("{not json");
  EXPECT_EQ(bad->status, 400);
  EXPECT_CONTAINS(bad->body, "not JSON");
  bad = post(json{{"problem", {{"path", "/etc/passwd"}}}, {"candidate", {{"source", "x"}}}}.dump());
  EXPECT_EQ(bad->status, 400);
  EXPECT_CONTAINS(bad->body, "problem.path");
  json options = evaluation();
  options["options"]["trails"] = 5;
  bad = post(options.dump());
  EXPECT_EQ(bad->status, 400);
  EXPECT_CONTAINS(bad->body, "options.trails");
  json batch = {{"evaluations", {evaluation("a"), evaluation("b", {{"precision", "fp8"}})}}};
  bad = post(batch.dump());
  EXPECT_EQ(bad->status, 400);
  EXPECT_CONTAINS(bad->body, "evaluations[1].options");
  json big = evaluation();
  big["candidate"]["source"] = std::string(2 << 20, '#');
  bad = post(big.dump());
  EXPECT_EQ(bad->status, 400);
  EXPECT_CONTAINS(bad->body, "candidate.source");
  EXPECT_EQ(client.Get("/v1/evaluations/0123456789abcdef")->status, 404);
  const auto nowhere = client.Get("/v1/things");
  EXPECT_EQ(nowhere->status, 404);
  EXPECT_CONTAINS(nowhere->body, "POST /v1/evaluations");
  // Nothing was queued by any of them.
  EXPECT_EQ(json::parse(client.Get("/v1/queue")->body)["depth"], 0);
}

TEST_F(ServiceApi, ACancelledEvaluationNeverRuns) {
  Service service(db(), allow());
  auto client = service.client();
  // The first holds the CPU lane (timed: it has the machine to itself) while the second waits.
  const auto first = client.Post("/v1/evaluations", evaluation("slow", {{"timing", true}}).dump(),
                                 "application/json");
  const std::string first_id = json::parse(first->body)["ids"][0];
  const auto second =
      client.Post("/v1/evaluations", evaluation("cancelled").dump(), "application/json");
  const std::string second_id = json::parse(second->body)["ids"][0];
  const auto cancelled = client.Delete("/v1/evaluations/" + second_id);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, 200) << cancelled->body;
  EXPECT_EQ(client.Delete("/v1/evaluations/" + second_id)->status, 409); // already cancelled
  wait_done(client, first_id);
  const auto gone = json::parse(client.Get("/v1/evaluations/" + second_id)->body);
  EXPECT_EQ(gone["state"], "cancelled");
  EXPECT_TRUE(gone["evaluation_id"].is_null());
  EXPECT_TRUE(gone["result"].is_null());
}

TEST_F(ServiceApi, OtherAddressesNeedATokenAndEveryRequestMustCarryIt) {
  const auto refused =
      run_kbench({"serve", "--db", db().string(), "--bind", "0.0.0.0", "--port", "0"}, false);
  EXPECT_EQ(refused.exit_code, 64);
  EXPECT_CONTAINS(refused.stderr_text, "--token-file");
  const fs::path token_file = m_dir / "token";
  std::ofstream(token_file) << "0123456789abcdef0123456789abcdef\n";
  Service service(db(), {"--token-file", token_file.string()});
  auto anonymous = service.client();
  const auto denied = anonymous.Get("/v1/health");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  auto wrong = service.client("0123456789abcdef0123456789abcdeX");
  EXPECT_EQ(wrong.Get("/v1/queue")->status, 401);
  auto right = service.client("0123456789abcdef0123456789abcdef");
  EXPECT_EQ(right.Get("/v1/health")->status, 200);
}

TEST_F(ServiceApi, ARestartedServiceFinishesTheWorkItAccepted) {
  std::vector<std::string> ids;
  {
    Service service(db(), allow());
    auto client = service.client();
    json batch = {{"evaluations", json::array()}};
    for (int i = 0; i < 4; ++i) {
      batch["evaluations"].push_back(evaluation("restart-" + std::to_string(i)));
    }
    const auto posted = client.Post("/v1/evaluations", batch.dump(), "application/json");
    ASSERT_EQ(posted->status, 202);
    // Parsed into a variable: a range over a member of the temporary would dangle.
    const json accepted = json::parse(posted->body);
    for (const auto& id : accepted["ids"]) {
      ids.push_back(id);
    }
    ASSERT_EQ(ids.size(), 4u) << posted->body;
    std::this_thread::sleep_for(300ms);
    service.process().stop(SIGKILL); // mid-work: whatever was building or running is lost
  }
  {
    store::Store left(db(), false);
    store::JobQueue jobs(left);
    EXPECT_FALSE(jobs.queued().empty() && jobs.requeue_interrupted() == 0)
        << "every job was done before the kill: the test shows no restart";
  }
  Service service(db(), allow());
  auto client = service.client();
  for (const auto& id : ids) {
    EXPECT_EQ(wait_done(client, id)["state"], "done") << id;
  }
}

TEST_F(ServiceApi, ASecondSignalEndsTheServiceAtOnceAndTheNextStartEvaluatesWhatWasRunning) {
  std::string id;
  {
    Service service(db(), allow());
    auto client = service.client();
    // Timed: long enough (seconds) to be running when the signals come.
    const auto posted =
        client.Post("/v1/evaluations", evaluation("second-signal", {{"timing", true}}).dump(),
                    "application/json");
    ASSERT_EQ(posted->status, 202);
    id = json::parse(posted->body)["ids"][0];
    const auto end = std::chrono::steady_clock::now() + 120s;
    while (json::parse(client.Get("/v1/evaluations/" + id)->body)["state"] != "running") {
      ASSERT_LT(std::chrono::steady_clock::now(), end) << "the evaluation never started";
      std::this_thread::sleep_for(50ms);
    }
    service.process().send(SIGTERM);
    EXPECT_FALSE(service.process().ended_within(300ms))
        << "the first signal lets the evaluation in progress finish";
    service.process().send(SIGTERM);
    const auto status = service.process().ended_within(10s);
    ASSERT_TRUE(status) << "the second signal did not end the service";
    ASSERT_TRUE(WIFEXITED(*status));
    EXPECT_EQ(WEXITSTATUS(*status), 128 + SIGTERM);
  }
  {
    store::Store left(db(), false);
    store::JobQueue jobs(left);
    EXPECT_EQ(jobs.get(id)->state, "running") << "the store still says where it was";
  }
  Service service(db(), allow());
  auto client = service.client();
  EXPECT_EQ(wait_done(client, id)["state"], "done");
}

TEST_F(ServiceApi, TwoHundredRequestsFromEightClientsNoneLostNoneEvaluatedTwice) {
  Service service(db(), allow());
  constexpr int kClients = 8, kPerClient = 25, kDistinct = 5;
  std::mutex mutex;
  std::map<std::string, int> candidate_of; // job id -> which distinct candidate
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto client = service.client();
      for (int i = 0; i < kPerClient; ++i) {
        const int which = (c * kPerClient + i) % kDistinct;
        const auto posted =
            client.Post("/v1/evaluations", evaluation("load-" + std::to_string(which)).dump(),
                        "application/json");
        ASSERT_TRUE(posted);
        ASSERT_EQ(posted->status, 202) << posted->body;
        std::lock_guard lock(mutex);
        candidate_of[json::parse(posted->body)["ids"][0]] = which;
      }
    });
  }
  for (auto& thread : clients) {
    thread.join();
  }
  ASSERT_EQ(candidate_of.size(), static_cast<std::size_t>(kClients * kPerClient));
  auto client = service.client();
  std::map<int, std::set<std::string>> evaluations_of;
  for (const auto& [id, which] : candidate_of) {
    const json done = wait_done(client, id);
    EXPECT_EQ(done["state"], "done") << id;
    EXPECT_EQ(done["result"]["status"], "ok") << id;
    evaluations_of[which].insert(done["evaluation_id"].get<std::string>());
  }
  for (const auto& [which, evaluations] : evaluations_of) {
    EXPECT_EQ(evaluations.size(), 1u)
        << "candidate " << which << " was evaluated " << evaluations.size() << " times";
  }
  service.process().stop(SIGTERM);
  store::Store stored(db(), false);
  EXPECT_EQ(stored.count_evaluations({}), static_cast<std::size_t>(kDistinct));
}

} // namespace
} // namespace kbench::testing
