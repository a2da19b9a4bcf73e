#include "store/agent_runs.hpp"

#include "store/id_lookup.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>

namespace kbench::store {
namespace {

// The run's columns, each prefixed with `table.` when a query joins another table.
std::string kRunColumnsOf(const std::string& table) {
  const std::string t = table.empty() ? "" : table + ".";
  return fmt::format("{0}id, {0}problem_sha256, {0}problem_path, {0}model, {0}endpoint, {0}tier, "
                     "{0}sample, {0}state, {0}started_at, coalesce({0}finished_at, ''), "
                     "coalesce({0}final_evaluation_id, ''), {0}submitted, {0}config, {0}summary",
                     t);
}
const std::string kRunColumns = kRunColumnsOf("");

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

// The filter's clauses over agent_runs r joined with evaluations e, and its values in order.
std::string where_of(const RunFilter& f, std::vector<std::string>& values) {
  std::string sql = " WHERE 1";
  auto add = [&](const std::string& clause, const std::string& value) {
    sql += " AND " + clause;
    values.push_back(value);
  };
  if (!f.model.empty()) {
    add("r.model = ?", f.model);
  }
  if (!f.tier.empty()) {
    add("r.tier = ?", f.tier);
  }
  if (!f.problem.empty()) {
    add("r.problem_path LIKE ?", "%" + f.problem + "%");
  }
  if (f.level > 0) {
    add("r.problem_path LIKE ?", fmt::format("%level{}/%", f.level));
  }
  if (f.status == "none") {
    sql += " AND e.status IS NULL";
  } else if (!f.status.empty()) {
    add("e.status = ?", f.status);
  }
  if (!f.flag.empty()) {
    add("e.flags LIKE ?", "% " + f.flag + " %");
  }
  if (!f.since.empty()) {
    add("r.started_at >= ?", f.since);
  }
  return sql;
}

std::string order_of(const RunFilter& f) {
  static const std::map<std::string, std::string> columns = {
      {"started_at", "r.started_at"}, {"model", "r.model"},     {"problem", "r.problem_path"},
      {"status", "e.status"},         {"speedup", "e.speedup"}, {"turns", "json_extract(r.summary, '$.turns')"}};
  const auto found = columns.find(f.sort);
  const std::string column = found == columns.end() ? "r.started_at" : found->second;
  return fmt::format(" ORDER BY {} {} NULLS LAST, r.rowid DESC", column,
                     f.descending ? "DESC" : "ASC");
}

} // namespace

std::vector<RunListing> AgentRuns::listing(const RunFilter& filter) {
  return m_store.with_database([&](Database& db) {
    std::vector<std::string> values;
    const std::string where = where_of(filter, values);
    std::string sql = fmt::format(
        "SELECT {}, coalesce(e.status, ''), e.speedup, e.speedup_low, e.speedup_high, "
        "e.candidate_median_us, coalesce(e.speedup_scored, 1), coalesce(e.device_name, ''), "
        "coalesce(e.torch_version, ''), coalesce(e.kbench_version, ''), coalesce(e.flags, '') "
        "FROM agent_runs r LEFT JOIN evaluations e ON e.id = r.final_evaluation_id{}{}",
        kRunColumnsOf("r"), where, order_of(filter));
    if (filter.limit > 0) {
      sql += fmt::format(" LIMIT {} OFFSET {}", filter.limit, filter.offset);
    }
    auto statement = db.prepare(sql);
    for (std::size_t i = 0; i < values.size(); ++i) {
      statement.bind(static_cast<int>(i + 1), values[i]);
    }
    std::vector<RunListing> out;
    while (statement.step()) {
      RunListing row;
      row.run = read_run(statement);
      int c = 14;
      row.status = statement.text(c++);
      row.speedup = statement.optional_real(c++);
      row.speedup_low = statement.optional_real(c++);
      row.speedup_high = statement.optional_real(c++);
      row.candidate_median_us = statement.optional_real(c++);
      row.speedup_scored = statement.integer(c++) != 0;
      row.device_name = statement.text(c++);
      row.torch_version = statement.text(c++);
      row.kbench_version = statement.text(c++);
      std::istringstream words(statement.text(c++));
      for (std::string word; words >> word;) {
        row.flags.push_back(word);
      }
      if (row.run.summary.is_object() && row.run.summary.contains("held_out")) {
        row.held_out_status = row.run.summary["held_out"].value("status", "");
      }
      out.push_back(std::move(row));
    }
    return out;
  });
}

std::size_t AgentRuns::count(const RunFilter& filter) {
  return m_store.with_database([&](Database& db) {
    std::vector<std::string> values;
    auto statement = db.prepare(
        "SELECT count(*) FROM agent_runs r LEFT JOIN evaluations e ON e.id = r.final_evaluation_id" +
        where_of(filter, values));
    for (std::size_t i = 0; i < values.size(); ++i) {
      statement.bind(static_cast<int>(i + 1), values[i]);
    }
    statement.step();
    return static_cast<std::size_t>(statement.integer(0));
  });
}

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
