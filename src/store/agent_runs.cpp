#include "store/agent_runs.hpp"

#include "store/id_lookup.hpp"

#include <fmt/format.h>

namespace kbench::store {
namespace {

constexpr const char* kRunColumns =
    "id, problem_sha256, problem_path, model, endpoint, tier, sample, state, started_at, "
    "coalesce(finished_at, ''), coalesce(final_evaluation_id, ''), submitted, config, summary";

AgentRunRow read_run(const Statement& s) {
  AgentRunRow run;
  run.id = s.text(0);
  run.problem_sha256 = s.text(1);
  run.problem_path = s.text(2);
  run.model = s.text(3);
  run.endpoint = s.text(4);
  run.tier = s.text(5);
  run.sample = static_cast<int>(s.integer(6));
  run.state = s.text(7);
  run.started_at = s.text(8);
  run.finished_at = s.text(9);
  run.final_evaluation_id = s.text(10);
  run.submitted = s.integer(11) != 0;
  run.config = nlohmann::json::parse(s.text(12), nullptr, false);
  run.summary = nlohmann::json::parse(s.text(13), nullptr, false);
  return run;
}

} // namespace

void AgentRuns::create(const AgentRunRow& run) {
  m_store.with_database([&](Database& db) {
    db.prepare("INSERT INTO agent_runs (id, problem_sha256, problem_path, model, endpoint, tier, "
               "sample, state, started_at, config, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
               "?)")
        .bind(1, run.id)
        .bind(2, run.problem_sha256)
        .bind(3, run.problem_path)
        .bind(4, run.model)
        .bind(5, run.endpoint)
        .bind(6, run.tier)
        .bind(7, run.sample)
        .bind(8, run.state)
        .bind(9, run.started_at)
        .bind(10, run.config.dump())
        .bind(11, run.summary.dump())
        .run();
  });
}

void AgentRuns::add_turn(const std::string& run_id, const TurnRow& turn) {
  m_store.with_database([&](Database& db) {
    Transaction transaction(db);
    auto insert = db.prepare(
        "INSERT INTO agent_turns (run_id, turn, started_at, llm_s, tool_s, request, response, "
        "reasoning, usage, truncated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, run_id)
        .bind(2, turn.turn)
        .bind(3, turn.started_at)
        .bind(4, turn.llm_s)
        .bind(5, turn.tool_s)
        .bind(6, turn.request.dump())
        .bind(7, turn.response)
        .bind(8, turn.reasoning)
        .bind(9, turn.usage.dump())
        .bind(10, turn.truncated ? 1 : 0)
        .run();
    for (const auto& call : turn.calls) {
      auto row = db.prepare(
          "INSERT INTO agent_tool_calls (run_id, turn, call_index, call_id, tool, arguments, "
          "result, seconds, kernel_sha256, evaluation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
          "nullif(?, ''), nullif(?, ''))");
      row.bind(1, run_id)
          .bind(2, turn.turn)
          .bind(3, call.call_index)
          .bind(4, call.call_id)
          .bind(5, call.tool)
          .bind(6, call.arguments)
          .bind(7, call.result)
          .bind(8, call.seconds)
          .bind(9, call.kernel_sha256)
          .bind(10, call.evaluation_id)
          .run();
    }
    transaction.commit();
  });
}

void AgentRuns::finish(const std::string& run_id, const std::string& state,
                       const std::string& final_evaluation_id, bool submitted,
                       const nlohmann::json& summary) {
  m_store.with_database([&](Database& db) {
    db.prepare("UPDATE agent_runs SET state = ?, finished_at = ?, final_evaluation_id = "
               "nullif(?, ''), submitted = ?, summary = ? WHERE id = ?")
        .bind(1, state)
        .bind(2, utc_timestamp())
        .bind(3, final_evaluation_id)
        .bind(4, submitted ? 1 : 0)
        .bind(5, summary.dump())
        .bind(6, run_id)
        .run();
  });
}

std::optional<AgentRunRow> AgentRuns::run(const std::string& id_or_prefix) {
  return m_store.with_database([&](Database& db) {
    return find_by_id_or_prefix<AgentRunRow>(db,
                                             fmt::format("SELECT {} FROM agent_runs", kRunColumns),
                                             id_or_prefix, read_run, "agent run");
  });
}

std::vector<TurnRow> AgentRuns::turns(const std::string& run_id) {
  return m_store.with_database([&](Database& db) {
    std::vector<TurnRow> turns;
    auto statement = db.prepare(
        "SELECT turn, started_at, llm_s, tool_s, request, response, reasoning, usage, truncated "
        "FROM agent_turns WHERE run_id = ? ORDER BY turn");
    statement.bind(1, run_id);
    while (statement.step()) {
      TurnRow turn;
      turn.turn = static_cast<int>(statement.integer(0));
      turn.started_at = statement.text(1);
      turn.llm_s = statement.optional_real(2);
      turn.tool_s = statement.optional_real(3);
      turn.request = nlohmann::json::parse(statement.text(4), nullptr, false);
      turn.response = statement.text(5);
      turn.reasoning = statement.text(6);
      turn.usage = nlohmann::json::parse(statement.text(7), nullptr, false);
      turn.truncated = statement.integer(8) != 0;
      turns.push_back(std::move(turn));
    }
    auto calls = db.prepare(
        "SELECT turn, call_index, call_id, tool, arguments, result, seconds, "
        "coalesce(kernel_sha256, ''), coalesce(evaluation_id, '') FROM agent_tool_calls WHERE "
        "run_id = ? ORDER BY turn, call_index");
    calls.bind(1, run_id);
    while (calls.step()) {
      const int turn = static_cast<int>(calls.integer(0));
      for (auto& t : turns) {
        if (t.turn == turn) {
          t.calls.push_back({static_cast<int>(calls.integer(1)), calls.text(2), calls.text(3),
                             calls.text(4), calls.text(5), calls.optional_real(6), calls.text(7),
                             calls.text(8)});
        }
      }
    }
    return turns;
  });
}

std::vector<AgentRunRow> AgentRuns::list(std::size_t limit) {
  return m_store.with_database([&](Database& db) {
    auto statement = db.prepare(fmt::format(
        "SELECT {} FROM agent_runs ORDER BY started_at DESC, rowid DESC LIMIT ?", kRunColumns));
    statement.bind(1, static_cast<std::int64_t>(limit));
    std::vector<AgentRunRow> runs;
    while (statement.step()) {
      runs.push_back(read_run(statement));
    }
    return runs;
  });
}

} // namespace kbench::store
