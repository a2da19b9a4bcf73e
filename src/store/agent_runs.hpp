#pragma once
// Agent runs in the store (the agent_runs, agent_turns and agent_tool_calls tables): one row per
// run, each turn as the wire saw it, and each tool call with the kernel it carried and the
// stored evaluation it produced. A turn and its tool calls are written together, after the
// turn, so a run killed mid-way loses at most the turn in flight, and `kbench agent --resume`
// rebuilds the conversation from what is here; `kbench replay` and `kbench export-trace` read
// the same rows.
#include "store/store.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kbench::store {

struct AgentRunRow {
  std::string id;
  std::string problem_sha256, problem_path;
  std::string model, endpoint, tier;
  int sample = 0;
  std::string state; // running, submitted, not_submitted, model_error, failed
  std::string started_at, finished_at;
  std::string final_evaluation_id;
  bool submitted = false;
  nlohmann::json config = nlohmann::json::object();  // what the run was started with
  nlohmann::json summary = nlohmann::json::object(); // turns, tool calls, tokens, budgets, ...
};

struct ToolCallRow {
  int call_index = 0;
  std::string call_id, tool, arguments, result;
  std::optional<double> seconds;
  std::string kernel_sha256, evaluation_id;
};

struct TurnRow {
  int turn = 0;
  std::string started_at;
  std::optional<double> llm_s, tool_s;
  // {"api", "url", "model", "messages_before": [...], "messages_after": [...], "sent": {...},
  //  "retried": [...]}: what was sent and what the turn added to the conversation
  nlohmann::json request = nlohmann::json::object();
  std::string response; // the response body as received
  std::string reasoning;
  nlohmann::json usage = nlohmann::json::object();
  bool truncated = false;
  std::vector<ToolCallRow> calls;
};

// A run as the lists and the leaderboard show it: the run and its final evaluation's columns.
struct RunListing {
  AgentRunRow run;
  std::string status; // the final evaluation's, "" when there is none
  std::optional<double> speedup, speedup_low, speedup_high, candidate_median_us;
  bool speedup_scored = true;
  std::string device_name, torch_version, kbench_version;
  std::vector<std::string> flags;
  std::string held_out_status; // from the run's summary, "" when none was made
};

struct RunFilter {
  std::string model, tier, problem, status, flag, since; // "" or 0: any
  int level = 0;
  std::string sort = "started_at"; // started_at, model, problem, status, speedup, turns
  bool descending = true;
  std::size_t limit = 50, offset = 0; // limit 0: all
};

class AgentRuns {
public:
  explicit AgentRuns(Store& store) : m_store(store) {}
  void create(const AgentRunRow& run);
  void add_turn(const std::string& run_id, const TurnRow& turn);
  void finish(const std::string& run_id, const std::string& state,
              const std::string& final_evaluation_id, bool submitted,
              const nlohmann::json& summary);
  // By id, or by a unique prefix of one (at least 4 characters); throws StoreError when the
  // prefix is ambiguous.
  std::optional<AgentRunRow> run(const std::string& id_or_prefix);
  std::vector<TurnRow> turns(const std::string& run_id);
  std::vector<AgentRunRow> list(std::size_t limit);
  // Runs with their final evaluations, filtered, sorted and paginated; and how many match.
  std::vector<RunListing> listing(const RunFilter& filter);
  std::size_t count(const RunFilter& filter);

private:
  Store& m_store;
};

} // namespace kbench::store
