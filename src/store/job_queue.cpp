#include "store/job_queue.hpp"

#include <fmt/format.h>

namespace kbench::store {
namespace {

constexpr const char* kJobColumns =
    "id, key, request, state, priority, sequence, submitted_at, coalesce(started_at, ''), "
    "coalesce(finished_at, ''), coalesce(evaluation_id, ''), cached, message";

JobRecord read_job(const Statement& s) {
  JobRecord job;
  job.id = s.text(0);
  job.key = s.text(1);
  job.request = nlohmann::json::parse(s.text(2), nullptr, false);
  job.state = s.text(3);
  job.priority = static_cast<int>(s.integer(4));
  job.sequence = s.integer(5);
  job.submitted_at = s.text(6);
  job.started_at = s.text(7);
  job.finished_at = s.text(8);
  job.evaluation_id = s.text(9);
  job.cached = s.integer(10) != 0;
  job.message = s.text(11);
  return job;
}

} // namespace

bool is_terminal_state(const std::string& state) {
  return state == "done" || state == "failed" || state == "cancelled";
}

JobRecord JobQueue::add(const std::string& key, const nlohmann::json& request, int priority,
                        const std::string& state, const std::string& evaluation_id, bool cached) {
  JobRecord job;
  job.id = new_id();
  job.key = key;
  job.request = request;
  job.state = state;
  job.priority = priority;
  job.submitted_at = utc_timestamp();
  job.evaluation_id = evaluation_id;
  job.cached = cached;
  if (is_terminal_state(state)) {
    job.finished_at = job.submitted_at;
  }
  m_store.with_database([&](Database& db) {
    Transaction transaction(db);
    auto next = db.prepare("SELECT coalesce(max(sequence), 0) + 1 FROM jobs");
    next.step();
    job.sequence = next.integer(0);
    auto insert = db.prepare(
        "INSERT INTO jobs (id, key, request, state, priority, sequence, submitted_at, "
        "finished_at, evaluation_id, cached) VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, ''), "
        "nullif(?, ''), ?)");
    insert.bind(1, job.id)
        .bind(2, key)
        .bind(3, request.dump())
        .bind(4, state)
        .bind(5, priority)
        .bind(6, job.sequence)
        .bind(7, job.submitted_at)
        .bind(8, job.finished_at)
        .bind(9, evaluation_id)
        .bind(10, cached ? 1 : 0)
        .run();
    transaction.commit();
  });
  return job;
}

std::optional<JobRecord> JobQueue::get(const std::string& id) {
  return m_store.with_database([&](Database& db) -> std::optional<JobRecord> {
    auto statement = db.prepare(fmt::format("SELECT {} FROM jobs WHERE id = ?", kJobColumns));
    statement.bind(1, id);
    if (!statement.step()) {
      return std::nullopt;
    }
    return read_job(statement);
  });
}

bool JobQueue::set_state(const std::string& id, const std::string& state,
                         const std::string& message, const std::string& evaluation_id) {
  const std::string now = utc_timestamp();
  return m_store.with_database([&](Database& db) {
    auto statement = db.prepare(
        "UPDATE jobs SET state = ?1, message = ?2, "
        "evaluation_id = coalesce(nullif(?3, ''), evaluation_id), "
        "started_at = CASE WHEN ?1 = 'building' THEN ?4 WHEN ?1 = 'queued' THEN NULL "
        "ELSE started_at END, "
        "finished_at = CASE WHEN ?1 IN ('done', 'failed', 'cancelled') THEN ?4 ELSE NULL END "
        "WHERE id = ?5 AND state NOT IN ('done', 'failed', 'cancelled')");
    statement.bind(1, state).bind(2, message).bind(3, evaluation_id).bind(4, now).bind(5, id);
    statement.run();
    return db.changes() > 0;
  });
}

std::vector<std::string> JobQueue::complete_followers(const std::string& key,
                                                      const std::string& evaluation_id) {
  const std::string now = utc_timestamp();
  return m_store.with_database([&](Database& db) {
    auto statement =
        db.prepare("UPDATE jobs SET state = 'done', cached = 1, evaluation_id = ?, finished_at = ? "
                   "WHERE key = ? AND state = 'queued' RETURNING id");
    statement.bind(1, evaluation_id).bind(2, now).bind(3, key);
    std::vector<std::string> ids;
    while (statement.step()) {
      ids.push_back(statement.text(0));
    }
    return ids;
  });
}

bool JobQueue::key_in_flight(const std::string& key) {
  return m_store.with_database([&](Database& db) {
    auto statement =
        db.prepare("SELECT 1 FROM jobs WHERE key = ? AND state IN ('building', 'running') LIMIT 1");
    statement.bind(1, key);
    return statement.step();
  });
}

std::vector<JobRecord> JobQueue::queued() {
  return m_store.with_database([&](Database& db) {
    auto statement = db.prepare(
        fmt::format("SELECT {} FROM jobs WHERE state = 'queued' ORDER BY priority DESC, sequence",
                    kJobColumns));
    std::vector<JobRecord> jobs;
    while (statement.step()) {
      jobs.push_back(read_job(statement));
    }
    return jobs;
  });
}

std::optional<std::size_t> JobQueue::position(const std::string& id) {
  return m_store.with_database([&](Database& db) -> std::optional<std::size_t> {
    auto statement = db.prepare(
        "SELECT count(*) FROM jobs AS other, jobs AS me WHERE me.id = ? AND me.state = 'queued' "
        "AND other.state = 'queued' AND (other.priority > me.priority OR (other.priority = "
        "me.priority AND other.sequence < me.sequence))");
    statement.bind(1, id);
    statement.step();
    const auto ahead = static_cast<std::size_t>(statement.integer(0));
    auto mine = db.prepare("SELECT 1 FROM jobs WHERE id = ? AND state = 'queued'");
    mine.bind(1, id);
    if (!mine.step()) {
      return std::nullopt;
    }
    return ahead;
  });
}

std::size_t JobQueue::requeue_interrupted() {
  return m_store.with_database([&](Database& db) {
    db.prepare("UPDATE jobs SET state = 'queued', started_at = NULL WHERE state IN ('building', "
               "'running')")
        .run();
    return static_cast<std::size_t>(db.changes());
  });
}

std::vector<std::pair<std::string, std::size_t>> JobQueue::counts() {
  return m_store.with_database([&](Database& db) {
    auto statement = db.prepare("SELECT state, count(*) FROM jobs GROUP BY state ORDER BY state");
    std::vector<std::pair<std::string, std::size_t>> out;
    while (statement.step()) {
      out.emplace_back(statement.text(0), static_cast<std::size_t>(statement.integer(1)));
    }
    return out;
  });
}

std::size_t JobQueue::finished_since(const std::string& since) {
  return m_store.with_database([&](Database& db) {
    auto statement = db.prepare(
        "SELECT count(*) FROM jobs WHERE state IN ('done', 'failed') AND finished_at >= ?");
    statement.bind(1, since);
    statement.step();
    return static_cast<std::size_t>(statement.integer(0));
  });
}

std::vector<nlohmann::json> JobQueue::recent_failures(std::size_t limit) {
  return m_store.with_database([&](Database& db) {
    auto statement = db.prepare(
        "SELECT jobs.id, jobs.state, coalesce(evaluations.status, ''), "
        "coalesce(nullif(jobs.message, ''), evaluations.message, ''), jobs.finished_at "
        "FROM jobs LEFT JOIN evaluations ON evaluations.id = jobs.evaluation_id "
        "WHERE jobs.state = 'failed' OR (jobs.state = 'done' AND evaluations.status <> 'ok') "
        "ORDER BY jobs.finished_at DESC, jobs.sequence DESC LIMIT ?");
    statement.bind(1, static_cast<std::int64_t>(limit));
    std::vector<nlohmann::json> out;
    while (statement.step()) {
      out.push_back({{"id", statement.text(0)},
                     {"state", statement.text(1)},
                     {"status", statement.text(2)},
                     {"message", statement.text(3)},
                     {"finished_at", statement.text(4)}});
    }
    return out;
  });
}

} // namespace kbench::store
