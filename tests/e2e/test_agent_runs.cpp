// Covers `kbench agent`, `kbench replay` and `kbench export-trace` (src/agent/, docs/agent.md)
// against the scripted model server (tests/fakes/model_server.py), which plays recorded
// conversations over loopback in both protocols, on the CPU device: a run that compiles, fixes
// an error and submits; malformed arguments and an unknown tool; a model that never calls a
// tool and one that never submits; 429, 500 and a slow answer past the timeout; a huge
// reasoning text; the reasoning passback rule; the probe; a run killed with SIGKILL and resumed;
// and concurrent runs whose timed windows never overlap. Each tool really runs.
#include "kbench_runner.hpp"
#include "store/agent_runs.hpp"
#include "store/store.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kbench::testing {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The honest torch ReLU (structural rules: no kernel required), and a broken one.
const std::string kGood = file_text(repo_path("tests/e2e/candidates/relu_torch.py"));
const std::string kBroken = kGood + "\nnot_defined_anywhere()\n";

json call(const std::string& tool, const std::string& code, const std::string& id = "") {
  json c = {{"name", tool},
            {"arguments", code.empty() ? "{}" : json{{"kernel_code", code}}.dump()}};
  if (!id.empty()) {
    c["id"] = id;
  }
  return c;
}

// python3 tests/fakes/model_server.py --scenario FILE --port 0 [extra], in the background.
class ModelServer {
public:
  ModelServer(const fs::path& scenario, std::vector<std::string> extra = {})
      : m_process([&] {
          std::vector<std::string> args = {"/usr/bin/env",
                                           "python3",
                                           repo_path("tests/fakes/model_server.py"),
                                           "--scenario",
                                           scenario.string(),
                                           "--port",
                                           "0"};
          args.insert(args.end(), extra.begin(), extra.end());
          return args;
        }()) {
    const auto at = m_process.first_line().find("http://");
    if (at == std::string::npos) {
      throw std::runtime_error("the model server did not start: " + m_process.first_line());
    }
    m_url = m_process.first_line().substr(at);
  }
  const std::string& url() const { return m_url; }

private:
  BackgroundProcess m_process;
  std::string m_url;
};

class AgentRuns : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("kbench-agent-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    setenv("KBENCH_AGENT_BACKOFF_S", "0.05", 1);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path scenario(const json& document) {
    const fs::path path = m_dir / ("scenario-" + std::to_string(m_scenarios++) + ".json");
    std::ofstream(path) << document.dump(1);
    return path;
  }
  fs::path db() const { return m_dir / "results.sqlite"; }

  KbenchRun agent(const ModelServer& server, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"agent",      repo_path("examples/exploits/problem_relu.py"),
                                     "--endpoint", server.url(),
                                     "--model",    "scripted",
                                     "--device",   "cpu",
                                     "--rules",    "structural",
                                     "--trials",   "2",
                                     "--db",       db().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kbench(args, false);
  }

  // The one run in the store, with its turns.
  std::pair<store::AgentRunRow, std::vector<store::TurnRow>> the_run() {
    store::Store results(db(), false);
    store::AgentRuns runs(results);
    const auto all = runs.list(10);
    EXPECT_EQ(all.size(), 1u);
    if (all.empty()) {
      return {};
    }
    return {all[0], runs.turns(all[0].id)};
  }

  fs::path m_dir;
  int m_scenarios = 0;
};

TEST_F(AgentRuns, ARunCompilesFixesAnErrorAndSubmitsInBothProtocols) {
  const auto recording =
      scenario({{"turns",
                 {{{"reasoning", "Start with the obvious kernel."},
                   {"tool_calls", {call("compile_kernel", kBroken)}}},
                  {{"reasoning", "A name was left over; remove it."},
                   {"tool_calls", {call("compile_kernel", kGood)}}},
                  {{"tool_calls", {call("run_correctness", kGood), call("static_check", kGood)}}},
                  {{"content", "Submitting."}, {"tool_calls", {call("submit_kernel", kGood)}}}}}});
  for (const std::string api : {"chat", "responses"}) {
    fs::remove(db());
    ModelServer server(recording);
    const auto run = agent(server, {"--api", api});
    ASSERT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
    EXPECT_CONTAINS(run.stdout_text, "submitted (ok)");
    const auto [row, turns] = the_run();
    EXPECT_EQ(row.state, "submitted") << api;
    EXPECT_TRUE(row.submitted);
    ASSERT_EQ(turns.size(), 4u);
    EXPECT_CONTAINS(turns[0].calls.at(0).result, "compile_kernel FAILED");
    EXPECT_CONTAINS(turns[1].calls.at(0).result, "compile_kernel: compiled");
    EXPECT_CONTAINS(turns[2].calls.at(0).result, "run_correctness PASSED: (3 / 3)");
    EXPECT_CONTAINS(turns[2].calls.at(1).result, "static_check PASSED");
    EXPECT_CONTAINS(turns[3].calls.at(0).result, "submit_kernel PASSED");
    EXPECT_EQ(turns[0].reasoning, "Start with the obvious kernel.");
    // Every call records its kernel; every evaluation it produced is stored.
    store::Store results(db(), false);
    for (const auto& turn : turns) {
      for (const auto& c : turn.calls) {
        EXPECT_EQ(c.kernel_sha256.size(), 64u) << c.tool;
        if (c.tool != "static_check") {
          EXPECT_TRUE(results.find_evaluation(c.evaluation_id)) << c.tool;
        }
      }
    }
    const auto final = results.find_evaluation(row.final_evaluation_id);
    ASSERT_TRUE(final);
    EXPECT_EQ(final->row.status, "ok");
    // The held-out re-check: a seed the model never saw, not shown to it.
    EXPECT_EQ(row.summary["held_out"]["status"], "ok") << row.summary.dump();
    EXPECT_NE(row.summary["held_out"]["seed"], 42);
    // The reference's time and the speedup stay hidden by default.
    EXPECT_EQ(turns[3].calls.at(0).result.find("Speedup"), std::string::npos);
    EXPECT_EQ(turns[3].calls.at(0).result.find("Reference runtime"), std::string::npos);
  }
}

TEST_F(AgentRuns, MalformedArgumentsAndAnUnknownToolGetAnErrorTheModelCanRead) {
  const auto recording =
      scenario({{"turns",
                 {{{"tool_calls",
                    {{{"name", "compile_kernel"}, {"arguments", "{not json"}},
                     {{"name", "launch_missiles"}, {"arguments", "{}"}},
                     {{"name", "run_correctness"}, {"arguments", "{\"code\": \"x\"}"}}}}},
                  {{"tool_calls", {call("submit_kernel", kGood)}}}}}});
  ModelServer server(recording);
  const auto run = agent(server);
  ASSERT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  const auto [row, turns] = the_run();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_CONTAINS(turns[0].calls.at(0).result,
                  "error: the arguments of compile_kernel are not a JSON object");
  EXPECT_CONTAINS(turns[0].calls.at(1).result, "error: there is no tool \"launch_missiles\"");
  EXPECT_CONTAINS(turns[0].calls.at(2).result, "needs \"kernel_code\"");
  EXPECT_EQ(row.state, "submitted");
}

TEST_F(AgentRuns, AModelThatNeverCallsAToolIsRemindedAndEndsUnsubmitted) {
  const auto recording = scenario({{"turns",
                                    {{{"content", "I think the kernel should be fast."}},
                                     {{"content", "Still thinking."}},
                                     {{"content", "Done."}}}}});
  ModelServer server(recording);
  const auto run = agent(server, {"--max-turns", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const auto [row, turns] = the_run();
  EXPECT_EQ(row.state, "not_submitted");
  EXPECT_TRUE(row.final_evaluation_id.empty()); // nothing compiled: nothing to evaluate
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_CONTAINS(turns[0].request["messages_after"].dump(), "called no tool");
  EXPECT_CONTAINS(turns[2].request["messages_before"].dump(), "last turn"); // told to submit
}

TEST_F(AgentRuns, ARunOutOfTurnsHasItsLastCompiledKernelEvaluatedAsNotSubmitted) {
  const auto recording = scenario({{"turns",
                                    {{{"tool_calls", {call("compile_kernel", kGood)}}},
                                     {{"content", "Let me think more."}},
                                     {{"content", "And more."}}}}});
  ModelServer server(recording);
  const auto run = agent(server, {"--max-turns", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const auto [row, turns] = the_run();
  EXPECT_EQ(row.state, "not_submitted");
  EXPECT_FALSE(row.submitted);
  store::Store results(db(), false);
  const auto final = results.find_evaluation(row.final_evaluation_id);
  ASSERT_TRUE(final);
  EXPECT_EQ(final->row.status, "ok");
  EXPECT_EQ(final->row.origin, "agent");
}

TEST_F(AgentRuns, ServerFailuresAreRetriedAndASlowAnswerTimesOutAndIsRetried) {
  const auto recording =
      scenario({{"turns",
                 {{{"failures", {{{"status", 429}, {"retry_after", 0}}, {{"status", 500}}}},
                   {"tool_calls", {call("compile_kernel", kGood)}}},
                  {{"slow_first_s", 4}, {"tool_calls", {call("submit_kernel", kGood)}}}}}});
  ModelServer server(recording);
  const auto run = agent(server, {"--timeout-s", "1.5"});
  ASSERT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  const auto [row, turns] = the_run();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].request["attempts"], 3);
  EXPECT_CONTAINS(turns[0].request["retried"].dump(), "HTTP 429");
  EXPECT_CONTAINS(turns[0].request["retried"].dump(), "HTTP 500");
  EXPECT_EQ(turns[1].request["attempts"], 2);
  EXPECT_EQ(row.state, "submitted");
}

TEST_F(AgentRuns, AHugeReasoningTextIsKeptWhole) {
  const std::string huge(2 << 20, 'r');
  const auto recording = scenario(
      {{"turns", {{{"reasoning", huge}, {"tool_calls", {call("submit_kernel", kGood)}}}}}});
  ModelServer server(recording);
  const auto run = agent(server);
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const auto [row, turns] = the_run();
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_EQ(turns[0].reasoning.size(), huge.size());
}

TEST_F(AgentRuns, ReasoningGoesBackWhereTheServerRequiresIt) {
  for (const std::string api : {"chat", "responses"}) {
    fs::remove(db());
    const auto recording = scenario(
        {{"require_reasoning_passback", true},
         {"turns",
          {{{"reasoning", "first thoughts"}, {"tool_calls", {call("compile_kernel", kGood)}}},
           {{"reasoning", "second thoughts"}, {"tool_calls", {call("submit_kernel", kGood)}}}}}});
    ModelServer server(recording);
    const auto run = agent(server, {"--api", api});
    ASSERT_EQ(run.exit_code, 0) << api << run.stdout_text << run.stderr_text;
    EXPECT_EQ(the_run().first.state, "submitted") << api;
  }
}

TEST_F(AgentRuns, TheProbeSaysWhatTheServerHandles) {
  // The server plays turn 0 to every fresh conversation (the probe sends two), turn 1 after
  // the tool result.
  const auto recording =
      scenario({{"turns",
                 {{{"reasoning", "ok"},
                   {"content", "OK"},
                   {"tool_calls", {{{"name", "echo"}, {"arguments", "{\"text\": \"probe\"}"}}}}},
                  {{"content", "done"}}}}});
  ModelServer server(recording, {"--api-key", "right-key"});
  setenv("KBENCH_TEST_KEY", "right-key", 1);
  setenv("KBENCH_TEST_WRONG_KEY", "wrong-key", 1);
  const auto good = run_kbench({"agent", "probe", "--endpoint", server.url(), "--model", "scripted",
                                "--api-key-env", "KBENCH_TEST_KEY"},
                               false);
  EXPECT_CONTAINS(good.stdout_text, "credentials and model accepted");
  EXPECT_CONTAINS(good.stdout_text, "tool calls");
  const auto wrong = run_kbench({"agent", "probe", "--endpoint", server.url(), "--model",
                                 "scripted", "--api-key-env", "KBENCH_TEST_WRONG_KEY"},
                                false);
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_CONTAINS(wrong.stdout_text, "credentials");
  EXPECT_CONTAINS(wrong.stdout_text, "NO");
  const auto unknown = run_kbench({"agent", "probe", "--endpoint", server.url(), "--model",
                                   "nonexistent", "--api-key-env", "KBENCH_TEST_KEY"},
                                  false);
  EXPECT_CONTAINS(unknown.stdout_text, "unknown_model");
}

TEST_F(AgentRuns, ARunKilledMidWayResumesLosingAtMostTheTurnInFlight) {
  const auto recording =
      scenario({{"turns",
                 {{{"tool_calls", {call("compile_kernel", kGood)}}},
                  {{"slow_first_s", 60}, {"tool_calls", {call("submit_kernel", kGood)}}}}}});
  ModelServer server(recording);
  std::string command = std::string(KBENCH_BINARY) + " agent " +
                        repo_path("examples/exploits/problem_relu.py") + " --endpoint " +
                        server.url() + " --model scripted --device cpu --rules structural " +
                        "--trials 2 --db " + db().string() + " > /dev/null 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), nullptr);
    _exit(127);
  }
  // Wait for turn 0 to be stored, then kill the run while turn 1 waits on the model.
  std::string run_id;
  for (int i = 0; i < 600 && run_id.empty(); ++i) {
    std::this_thread::sleep_for(100ms);
    if (!fs::exists(db())) {
      continue;
    }
    store::Store results(db(), false);
    store::AgentRuns runs(results);
    const auto all = runs.list(1);
    if (!all.empty() && runs.turns(all[0].id).size() == 1) {
      run_id = all[0].id;
    }
  }
  ASSERT_FALSE(run_id.empty()) << "turn 0 was never stored";
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const auto resumed =
      run_kbench({"agent", "--resume", run_id.substr(0, 8), "--db", db().string()}, false);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.stdout_text << resumed.stderr_text;
  const auto [row, turns] = the_run();
  EXPECT_EQ(row.id, run_id);
  EXPECT_EQ(row.state, "submitted");
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].calls.size(), 1u); // turn 0 kept once
  EXPECT_CONTAINS(turns[1].calls.at(0).result, "submit_kernel PASSED");
}

TEST_F(AgentRuns, ConcurrentRunsNeverShareATimedWindowAndTracesExport) {
  const auto recording = scenario({{"turns", {{{"tool_calls", {call("submit_kernel", kGood)}}}}}});
  ModelServer server(recording);
  const auto run = agent(server, {"--samples", "3", "--concurrency", "3"});
  ASSERT_EQ(run.exit_code, 0) << run.stdout_text << run.stderr_text;
  store::Store results(db(), false);
  store::AgentRuns runs(results);
  const auto all = runs.list(10);
  ASSERT_EQ(all.size(), 3u);
  std::vector<std::pair<double, double>> windows;
  for (const auto& r : all) {
    EXPECT_EQ(r.state, "submitted");
    const auto final = results.find_evaluation(r.final_evaluation_id);
    ASSERT_TRUE(final);
    const auto& timing = final->document["timing"];
    ASSERT_TRUE(timing["started_at_unix_s"].is_number()) << timing.dump();
    windows.emplace_back(timing["started_at_unix_s"], timing["ended_at_unix_s"]);
  }
  std::sort(windows.begin(), windows.end());
  for (std::size_t i = 1; i < windows.size(); ++i) {
    EXPECT_LE(windows[i - 1].second, windows[i].first)
        << "timed windows " << i - 1 << " and " << i << " overlap";
  }
  const auto replay = run_kbench({"replay", all[0].id, "--db", db().string()}, false);
  EXPECT_EQ(replay.exit_code, 0) << replay.stderr_text;
  EXPECT_CONTAINS(replay.stdout_text, "call submit_kernel");
  for (const std::string format : {"jsonl", "hf"}) {
    const auto exported =
        run_kbench({"export-trace", all[0].id, "--db", db().string(), "--format", format}, false);
    ASSERT_EQ(exported.exit_code, 0) << exported.stderr_text;
    std::istringstream lines(exported.stdout_text);
    int count = 0;
    for (std::string line; std::getline(lines, line); ++count) {
      EXPECT_FALSE(json::parse(line, nullptr, false).is_discarded()) << line.substr(0, 200);
    }
    EXPECT_GE(count, 3) << format;
  }
}

} // namespace
} // namespace kbench::testing
