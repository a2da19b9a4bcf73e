#include "store/store.hpp"

#include "core/sha256.hpp"
#include "sched/paths.hpp"
#include "store/id_lookup.hpp"
#include "store/schema.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

namespace kbench::store {
namespace fs = std::filesystem;
namespace {

constexpr const char* kRowColumns =
    "id, key, origin, suite_id, created_at, problem_sha256, candidate_sha256, problem_path, "
    "candidate_path, status, message, device, device_name, torch_version, kbench_version, "
    "variant, precision, speedup, speedup_low, speedup_high, speedup_scored, speedup_vs_compiled, "
    "speedup_vs_compiled_low, speedup_vs_compiled_high, reference_median_us, "
    "candidate_median_us, flags, wall_s";

std::vector<std::string> split_flags(const std::string& text) {
  std::vector<std::string> flags;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    flags.push_back(word);
  }
  return flags;
}

std::string joined_flags(const std::vector<std::string>& flags) {
  std::string text = " ";
  for (const auto& flag : flags) {
    text += flag + " ";
  }
  return text;
}

EvaluationRow read_row(const Statement& s) {
  EvaluationRow row;
  int c = 0;
  row.id = s.text(c++);
  row.key = s.text(c++);
  row.origin = s.text(c++);
  if (!s.is_null(c)) {
    row.suite_id = s.integer(c);
  }
  ++c;
  row.created_at = s.text(c++);
  row.problem_sha256 = s.text(c++);
  row.candidate_sha256 = s.text(c++);
  row.problem_path = s.text(c++);
  row.candidate_path = s.text(c++);
  row.status = s.text(c++);
  row.message = s.text(c++);
  row.device = s.text(c++);
  row.device_name = s.text(c++);
  row.torch_version = s.text(c++);
  row.kbench_version = s.text(c++);
  row.variant = s.text(c++);
  row.precision = s.text(c++);
  row.speedup = s.optional_real(c++);
  row.speedup_low = s.optional_real(c++);
  row.speedup_high = s.optional_real(c++);
  row.speedup_scored = s.integer(c++) != 0;
  row.speedup_vs_compiled = s.optional_real(c++);
  row.speedup_vs_compiled_low = s.optional_real(c++);
  row.speedup_vs_compiled_high = s.optional_real(c++);
  row.reference_median_us = s.optional_real(c++);
  row.candidate_median_us = s.optional_real(c++);
  row.flags = split_flags(s.text(c++));
  row.wall_s = s.real(c++);
  return row;
}

// The file's text when it still has the contents that were evaluated, else "" (moved, edited
// or deleted since: the sha256 in the row still names what ran).
std::string source_if_unchanged(const std::string& path, const std::string& sha256) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return {};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return sha256_hex(text.str()) == sha256 ? text.str() : std::string();
}

StoredEvaluation stored_evaluation(const Statement& statement) {
  return {read_row(statement), nlohmann::json::parse(statement.text(28), nullptr, false)};
}

std::optional<StoredEvaluation> one_evaluation(Statement& statement) {
  if (!statement.step()) {
    return std::nullopt;
  }
  return stored_evaluation(statement);
}

} // namespace

EvaluationRow row_of(const EvalResult& result) {
  EvaluationRow row;
  row.created_at = result.started_at.empty() ? utc_timestamp() : result.started_at;
  row.problem_sha256 = result.problem_sha256;
  row.candidate_sha256 = result.candidate_sha256;
  row.problem_path = result.problem_path;
  row.candidate_path = result.candidate_path;
  row.status = status_name(result.status);
  row.message = result.message;
  row.device = result.device;
  row.device_name = result.device_name;
  row.torch_version = result.torch_version;
  row.kbench_version = result.kbench_version;
  row.variant = result.variant;
  row.precision = result.precision;
  const auto& timing = result.timing;
  row.speedup = timing.speedup;
  if (timing.speedup_ci) {
    row.speedup_low = timing.speedup_ci->low;
    row.speedup_high = timing.speedup_ci->high;
  }
  row.speedup_scored = timing.speedup_scored;
  row.speedup_vs_compiled = timing.speedup_vs_compiled;
  if (timing.speedup_vs_compiled_ci) {
    row.speedup_vs_compiled_low = timing.speedup_vs_compiled_ci->low;
    row.speedup_vs_compiled_high = timing.speedup_vs_compiled_ci->high;
  }
  if (timing.reference) {
    row.reference_median_us = timing.reference->stats_us.median;
  }
  if (timing.candidate) {
    row.candidate_median_us = timing.candidate->stats_us.median;
  }
  for (const auto& flag : timing.flags) {
    row.flags.push_back(flag.id);
  }
  row.wall_s = result.wall_s;
  return row;
}

Store::Store(const fs::path& path, bool create)
    : m_db([&] {
        std::error_code ignored;
        if (!create && !fs::exists(path, ignored)) {
          throw StoreError(fmt::format("{}: no store there; kbench eval and kbench suite make one "
                                       "(default {}); name another with --db",
                                       path.string(), default_path().string()));
        }
        if (create && path.has_parent_path()) {
          fs::create_directories(path.parent_path(), ignored);
        }
        return Database(path, create);
      }()) {
  prepare_schema(m_db);
}

fs::path Store::default_path() {
  return sched::cache_directory() / "results.sqlite";
}

std::string Store::add_evaluation(const EvalResult& result, const std::string& key,
                                  const std::string& origin, std::optional<std::int64_t> suite_id) {
  EvaluationRow row = row_of(result);
  row.id = new_id();
  const std::string document = to_json(result).dump();
  // Read outside the lock: the files may be large, and other threads may be waiting.
  const std::string problem_source = source_if_unchanged(row.problem_path, row.problem_sha256);
  const std::string candidate_source =
      source_if_unchanged(row.candidate_path, row.candidate_sha256);
  std::lock_guard lock(m_mutex);
  Transaction transaction(m_db);
  for (const auto& [table, sha, file, source] :
       {std::tuple{"problems", row.problem_sha256, row.problem_path, problem_source},
        std::tuple{"candidates", row.candidate_sha256, row.candidate_path, candidate_source}}) {
    if (sha.empty()) {
      continue;
    }
    // A later store of the same contents keeps the first path; a source missing at first is
    // filled in when a later evaluation could read it.
    m_db.prepare(fmt::format("INSERT INTO {} (sha256, path, source, first_seen) VALUES (?, ?, ?, "
                             "?) ON CONFLICT(sha256) DO UPDATE SET source = excluded.source "
                             "WHERE source = '' AND excluded.source <> ''",
                             table))
        .bind(1, sha)
        .bind(2, file)
        .bind(3, source)
        .bind(4, row.created_at)
        .run();
  }
  auto insert = m_db.prepare(fmt::format(
      "INSERT INTO evaluations ({}, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      kRowColumns));
  insert.bind(1, row.id).bind(2, key).bind(3, origin);
  if (suite_id) {
    insert.bind(4, *suite_id);
  } else {
    insert.bind_null(4);
  }
  insert.bind(5, row.created_at)
      .bind(6, row.problem_sha256)
      .bind(7, row.candidate_sha256)
      .bind(8, row.problem_path)
      .bind(9, row.candidate_path)
      .bind(10, row.status)
      .bind(11, row.message)
      .bind(12, row.device)
      .bind(13, row.device_name)
      .bind(14, row.torch_version)
      .bind(15, row.kbench_version)
      .bind(16, row.variant)
      .bind(17, row.precision)
      .bind(18, row.speedup)
      .bind(19, row.speedup_low)
      .bind(20, row.speedup_high)
      .bind(21, row.speedup_scored ? 1 : 0)
      .bind(22, row.speedup_vs_compiled)
      .bind(23, row.speedup_vs_compiled_low)
      .bind(24, row.speedup_vs_compiled_high)
      .bind(25, row.reference_median_us)
      .bind(26, row.candidate_median_us)
      .bind(27, joined_flags(row.flags))
      .bind(28, row.wall_s)
      .bind(29, document);
  insert.run();
  transaction.commit();
  return row.id;
}

std::optional<StoredEvaluation> Store::find_evaluation(const std::string& id_or_prefix) {
  std::lock_guard lock(m_mutex);
  return find_by_id_or_prefix<StoredEvaluation>(
      m_db, fmt::format("SELECT {}, document FROM evaluations", kRowColumns), id_or_prefix,
      [](const Statement& s) { return stored_evaluation(s); }, "stored evaluation");
}

std::optional<StoredEvaluation> Store::latest_for_key(const std::string& key) {
  std::lock_guard lock(m_mutex);
  auto statement =
      m_db.prepare(fmt::format("SELECT {}, document FROM evaluations WHERE key = ? AND status <> "
                               "'harness_error' ORDER BY created_at DESC, rowid DESC LIMIT 1",
                               kRowColumns));
  statement.bind(1, key);
  return one_evaluation(statement);
}

std::vector<EvaluationRow> Store::list_evaluations(const EvaluationFilter& filter,
                                                   std::size_t limit, std::size_t offset) {
  std::lock_guard lock(m_mutex);
  auto statement = m_db.prepare(
      fmt::format("SELECT {} FROM evaluations WHERE 1{} ORDER BY created_at DESC, rowid DESC "
                  "LIMIT ? OFFSET ?",
                  kRowColumns, filter_sql(filter)));
  const int next = bind_filter(statement, filter, 1);
  statement.bind(next, static_cast<std::int64_t>(limit))
      .bind(next + 1, static_cast<std::int64_t>(offset));
  std::vector<EvaluationRow> rows;
  while (statement.step()) {
    rows.push_back(read_row(statement));
  }
  return rows;
}

void Store::each_evaluation(
    const EvaluationFilter& filter,
    const std::function<void(const EvaluationRow&, const std::string&)>& each) {
  std::lock_guard lock(m_mutex);
  auto statement = m_db.prepare(
      fmt::format("SELECT {}, document FROM evaluations WHERE 1{} ORDER BY created_at, rowid",
                  kRowColumns, filter_sql(filter)));
  bind_filter(statement, filter, 1);
  while (statement.step()) {
    each(read_row(statement), statement.text(28));
  }
}

std::size_t Store::count_evaluations(const EvaluationFilter& filter) {
  std::lock_guard lock(m_mutex);
  auto statement =
      m_db.prepare(fmt::format("SELECT count(*) FROM evaluations WHERE 1{}", filter_sql(filter)));
  bind_filter(statement, filter, 1);
  return statement.step() ? static_cast<std::size_t>(statement.integer(0)) : 0;
}

std::optional<std::string> Store::problem_source(const std::string& sha256) {
  std::lock_guard lock(m_mutex);
  auto statement = m_db.prepare("SELECT source FROM problems WHERE sha256 = ?");
  statement.bind(1, sha256);
  return statement.step() ? std::optional(statement.text(0)) : std::nullopt;
}

std::optional<std::string> Store::candidate_source(const std::string& sha256) {
  std::lock_guard lock(m_mutex);
  auto statement = m_db.prepare("SELECT source FROM candidates WHERE sha256 = ?");
  statement.bind(1, sha256);
  return statement.step() ? std::optional(statement.text(0)) : std::nullopt;
}

std::int64_t Store::begin_suite(const std::string& manifest, const nlohmann::json& options) {
  std::lock_guard lock(m_mutex);
  auto statement = m_db.prepare(
      "INSERT INTO suites (manifest, options, started_at) VALUES (?, ?, ?) RETURNING id");
  statement.bind(1, manifest).bind(2, options.dump()).bind(3, utc_timestamp());
  statement.step();
  return statement.integer(0);
}

void Store::finish_suite(std::int64_t suite_id) {
  std::lock_guard lock(m_mutex);
  m_db.prepare("UPDATE suites SET finished_at = ? WHERE id = ?")
      .bind(1, utc_timestamp())
      .bind(2, suite_id)
      .run();
}

std::string new_id() {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard lock(mutex);
  return fmt::format("{:016x}", generator());
}

std::string utc_timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms);
}

} // namespace kbench::store
