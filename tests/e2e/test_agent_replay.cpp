// Covers the built-in replay model (`kbench agent --model replay:FILE`, src/agent/replay_model.cpp)
// on the CPU device, with no server: the recorded run in examples/agent/ (the seed's masked
// broadcast: a kernel that does not build, the fix, correctness, static check, submission) is
// stored turn by turn as recorded and ends `ok`; a recording with malformed turns gets the
// errors a model would; a malformed file is refused naming its line or field; and a run's
// exported trace (jsonl and hf) plays again to the same tool calls.
#include "kbench_runner.hpp"
#include "store/agent_runs.hpp"
#include "store/store.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace kbench::testing {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

class AgentReplay : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("kbench-replay-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path db() const { return m_dir / "results.sqlite"; }

  KbenchRun play(const std::string& file, const std::string& problem) {
    return run_kbench({"agent", repo_path(problem), "--model", "replay:" + file, "--device", "cpu",
                       "--variant", "popcorn", "--db", db().string()},
                      false);
  }

  // The runs in the store, newest first, each with its turns.
  std::vector<std::pair<store::AgentRunRow, std::vector<store::TurnRow>>> runs() {
    store::Store results(db(), false);
    store::AgentRuns agent_runs(results);
    std::vector<std::pair<store::AgentRunRow, std::vector<store::TurnRow>>> out;
    for (const auto& row : agent_runs.list(10)) {
      out.emplace_back(row, agent_runs.turns(row.id));
    }
    return out;
  }

  std::string final_status(const store::AgentRunRow& run) {
    store::Store results(db(), false);
    const auto final = results.find_evaluation(run.final_evaluation_id);
    return final ? final->document.value("status", "") : "";
  }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(m_dir / name) << text;
    return m_dir / name;
  }

  fs::path m_dir;
};

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tool calls of each turn, as (name, arguments parsed: the hf format re-serialises them).
using Calls = std::vector<std::vector<std::pair<std::string, json>>>;

Calls calls_of(const std::vector<store::TurnRow>& turns) {
  Calls out;
  for (const auto& turn : turns) {
    out.emplace_back();
    for (const auto& call : turn.calls) {
      out.back().emplace_back(call.tool, json::parse(call.arguments, nullptr, false));
    }
  }
  return out;
}

TEST_F(AgentReplay, TheRecordedRunPlaysTurnByTurnAndItsExportedTracePlaysAgain) {
  const std::string recording_file = repo_path("examples/agent/masked_broadcast_cpu.json");
  const auto played = play(recording_file, "examples/agent/problem_cpu.py");
  ASSERT_EQ(played.exit_code, 0) << played.stdout_text << played.stderr_text;
  EXPECT_CONTAINS(played.stdout_text, "submitted (ok), 5 turn(s)");
  auto stored = runs();
  ASSERT_EQ(stored.size(), 1u);
  const auto& [run, turns] = stored[0];
  EXPECT_EQ(run.state, "submitted");
  EXPECT_EQ(final_status(run), "ok");
  EXPECT_EQ(run.endpoint, "replay:" + recording_file);

  // Turn by turn, what was stored is what was recorded: reasoning, text, calls, tokens.
  const json recording = json::parse(file_text(recording_file));
  ASSERT_EQ(turns.size(), recording["turns"].size());
  for (std::size_t t = 0; t < turns.size(); ++t) {
    const auto& recorded = recording["turns"][t];
    EXPECT_EQ(turns[t].reasoning, recorded["reasoning"].get<std::string>()) << "turn " << t;
    const auto& said = turns[t].request["messages_after"][0];
    EXPECT_EQ(said["content"], recorded["content"]) << "turn " << t;
    ASSERT_EQ(turns[t].calls.size(), 1u) << "turn " << t;
    EXPECT_EQ(turns[t].calls[0].tool, recorded["tool_calls"][0]["name"].get<std::string>())
        << "turn " << t;
    EXPECT_EQ(turns[t].calls[0].arguments,
              recorded["tool_calls"][0]["arguments"].get<std::string>())
        << "turn " << t;
    EXPECT_EQ(turns[t].usage["input"], recorded["usage"]["input"]) << "turn " << t;
  }
  // The tools really ran: the first kernel did not build, for the reason recorded.
  EXPECT_CONTAINS(turns[0].calls[0].result, "compile_kernel FAILED");
  EXPECT_CONTAINS(turns[0].calls[0].result, "pick");
  EXPECT_CONTAINS(turns[1].calls[0].result, "compiled");
  EXPECT_CONTAINS(turns[2].calls[0].result, "run_correctness PASSED");
  EXPECT_CONTAINS(turns[3].calls[0].result, "static_check PASSED");

  // Its exported trace, in either format, is a replay file: the same calls, and `ok` again.
  const Calls recorded_calls = calls_of(turns);
  for (const std::string format : {"jsonl", "hf"}) {
    const auto exported =
        run_kbench({"export-trace", run.id, "--format", format, "--db", db().string()}, false);
    ASSERT_EQ(exported.exit_code, 0) << exported.stderr_text;
    const auto trace = write("trace." + format, exported.stdout_text);
    const auto again = play(trace.string(), "examples/agent/problem_cpu.py");
    ASSERT_EQ(again.exit_code, 0) << format << ": " << again.stdout_text << again.stderr_text;
    const auto newest = runs().front();
    EXPECT_EQ(calls_of(newest.second), recorded_calls) << format;
    EXPECT_EQ(newest.first.state, "submitted") << format;
    EXPECT_EQ(final_status(newest.first), "ok") << format;
  }
}

TEST_F(AgentReplay, TurnsThatNoLongerFitGetTheErrorsAModelWouldAndARecordingThatEndsSaysSo) {
  const json recording = {{"turns",
                           {{{"content", "calling tools that do not fit"},
                             {"tool_calls",
                              {{{"name", "compile_kernel"}, {"arguments", "{not json"}},
                               {{"name", "launch_missiles"}, {"arguments", json::object()}},
                               {{"name", "run_correctness"}, {"arguments", {{"code", "x"}}}}}}},
                            {{"content", "no tool this time"}}}}};
  const auto file = write("malformed.json", recording.dump());
  const auto played = play(file.string(), "examples/agent/problem_cpu.py");
  EXPECT_EQ(played.exit_code, 2) << played.stdout_text << played.stderr_text; // a model_error run
  EXPECT_CONTAINS(played.stdout_text, "model_error");
  const auto stored = runs();
  ASSERT_EQ(stored.size(), 1u);
  const auto& [run, turns] = stored[0];
  ASSERT_GE(turns.size(), 2u);
  EXPECT_CONTAINS(turns[0].calls.at(0).result,
                  "error: the arguments of compile_kernel are not a JSON object");
  EXPECT_CONTAINS(turns[0].calls.at(1).result, "error: there is no tool \"launch_missiles\"");
  EXPECT_CONTAINS(turns[0].calls.at(2).result, "needs \"kernel_code\"");
  // After its two turns the recording is over: the run ends unsubmitted, saying why.
  EXPECT_EQ(run.state, "model_error");
  EXPECT_CONTAINS(run.summary.dump(), "the recording has 2 turn(s)");
  EXPECT_FALSE(run.submitted);
}

TEST_F(AgentReplay, AMalformedFileIsRefusedNamingTheLineOrTheField) {
  const struct {
    std::string name, text, expected;
  } cases[] = {
      {"not-json.jsonl", "{\"event\": \"run\"}\nnot json at all\n", "line 2: not a JSON object"},
      {"bad-field.json", R"({"turns": [{"content": 7}]})", "turn 0: \"content\" must be a string"},
      {"no-name.json", R"({"turns": [{"tool_calls": [{"arguments": "{}"}]}]})",
       "turn 0: a tool call has no \"name\""},
      {"empty.json", R"({"turns": []})", "the whole file: no assistant turn to play"},
  };
  for (const auto& c : cases) {
    const auto file = write(c.name, c.text);
    const auto played = play(file.string(), "examples/agent/problem_cpu.py");
    EXPECT_NE(played.exit_code, 0) << c.name;
    EXPECT_CONTAINS(played.stderr_text, file.string() + ": " + c.expected);
  }
  const auto missing = play((m_dir / "nowhere.json").string(), "examples/agent/problem_cpu.py");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_CONTAINS(missing.stderr_text, "nowhere.json: cannot be read");
}

} // namespace
} // namespace kbench::testing
