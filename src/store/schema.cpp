#include "store/schema.hpp"

#include <fmt/format.h>

namespace kbench::store {
namespace {

// Version 1: what `kbench eval` and `kbench suite` store. The whole result document is kept;
// the columns beside it are what listings, filters and leaderboards read without parsing it.
// `flags` holds the timing flags' ids between spaces (" speedup_above_10x launch_bound "), so
// that a filter on one flag is a LIKE on " id ".
constexpr const char* kVersion1 = R"sql(
CREATE TABLE problems (
  sha256 TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  first_seen TEXT NOT NULL
);
CREATE TABLE candidates (
  sha256 TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  source TEXT NOT NULL,
  first_seen TEXT NOT NULL
);
CREATE TABLE suites (
  id INTEGER PRIMARY KEY,
  manifest TEXT NOT NULL,
  options TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE TABLE evaluations (
  id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  origin TEXT NOT NULL,
  suite_id INTEGER REFERENCES suites(id),
  created_at TEXT NOT NULL,
  problem_sha256 TEXT NOT NULL,
  candidate_sha256 TEXT NOT NULL,
  problem_path TEXT NOT NULL,
  candidate_path TEXT NOT NULL,
  status TEXT NOT NULL,
  message TEXT NOT NULL,
  device TEXT NOT NULL,
  device_name TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  kbench_version TEXT NOT NULL,
  variant TEXT NOT NULL,
  precision TEXT NOT NULL,
  speedup REAL,
  speedup_low REAL,
  speedup_high REAL,
  speedup_scored INTEGER NOT NULL,
  speedup_vs_compiled REAL,
  speedup_vs_compiled_low REAL,
  speedup_vs_compiled_high REAL,
  reference_median_us REAL,
  candidate_median_us REAL,
  flags TEXT NOT NULL,
  wall_s REAL NOT NULL,
  document TEXT NOT NULL
);
CREATE INDEX evaluations_by_time ON evaluations(created_at);
CREATE INDEX evaluations_by_status ON evaluations(status, created_at);
CREATE INDEX evaluations_by_problem ON evaluations(problem_sha256, created_at);
CREATE INDEX evaluations_by_candidate ON evaluations(candidate_sha256);
CREATE INDEX evaluations_by_key ON evaluations(key, created_at);
CREATE INDEX evaluations_by_device ON evaluations(device_name, created_at);
CREATE INDEX evaluations_by_suite ON evaluations(suite_id);
)sql";

// Version 2: the evaluation service's queue (`kbench serve`), kept in the store so that a
// restarted service carries on with the work it accepted. `sequence` orders jobs of one
// priority by arrival.
constexpr const char* kVersion2 = R"sql(
CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  submitted_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT,
  evaluation_id TEXT REFERENCES evaluations(id),
  cached INTEGER NOT NULL DEFAULT 0,
  message TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_by_state ON jobs(state, priority DESC, sequence);
CREATE INDEX jobs_by_key ON jobs(key, state);
)sql";

// Version 3: agent runs (`kbench agent`): one row per run, its turns as the wire saw them, and
// each tool call with the kernel it carried and the evaluation it produced.
constexpr const char* kVersion3 = R"sql(
CREATE TABLE agent_runs (
  id TEXT PRIMARY KEY,
  problem_sha256 TEXT NOT NULL,
  problem_path TEXT NOT NULL,
  model TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  tier TEXT NOT NULL,
  sample INTEGER NOT NULL,
  state TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  final_evaluation_id TEXT REFERENCES evaluations(id),
  submitted INTEGER NOT NULL DEFAULT 0,
  config TEXT NOT NULL,
  summary TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX agent_runs_by_problem ON agent_runs(problem_sha256, started_at);
CREATE INDEX agent_runs_by_model ON agent_runs(model, tier, started_at);
CREATE TABLE agent_turns (
  run_id TEXT NOT NULL REFERENCES agent_runs(id),
  turn INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  llm_s REAL,
  tool_s REAL,
  request TEXT NOT NULL,
  response TEXT NOT NULL,
  reasoning TEXT NOT NULL,
  usage TEXT NOT NULL,
  truncated INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, turn)
);
CREATE TABLE agent_tool_calls (
  run_id TEXT NOT NULL,
  turn INTEGER NOT NULL,
  call_index INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  result TEXT NOT NULL,
  seconds REAL,
  kernel_sha256 TEXT,
  evaluation_id TEXT REFERENCES evaluations(id),
  PRIMARY KEY (run_id, turn, call_index),
  FOREIGN KEY (run_id, turn) REFERENCES agent_turns(run_id, turn)
);
)sql";

std::int64_t pragma_integer(Database& db, const char* pragma) {
  auto statement = db.prepare(fmt::format("PRAGMA {}", pragma));
  return statement.step() ? statement.integer(0) : 0;
}

bool has_tables(Database& db) {
  auto statement = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  return statement.step() && statement.integer(0) > 0;
}

// Reads the header fields, turning "file is not a database" into a sentence with advice.
std::int64_t read_application_id(Database& db) {
  try {
    return pragma_integer(db, "application_id");
  } catch (const StoreError& error) {
    throw StoreError(fmt::format(
        "{}: not a kbench store: SQLite cannot read it ({}); it is left as it is. Give --db "
        "another file (a new one is created), or move this one away if it was a store that got "
        "damaged",
        db.path().string(), error.what()));
  }
}

void migrate(Database& db, int up_to) {
  const std::int64_t application = read_application_id(db);
  const int version = static_cast<int>(pragma_integer(db, "user_version"));
  if (application == 0 && version == 0 && has_tables(db)) {
    throw StoreError(fmt::format(
        "{}: not a kbench store: an SQLite database with tables of another program; kbench "
        "leaves it as it is. Give --db another file",
        db.path().string()));
  }
  if (application != 0 && application != kApplicationId) {
    throw StoreError(fmt::format(
        "{}: not a kbench store: an SQLite database of another program (application_id {:#x}); "
        "kbench leaves it as it is. Give --db another file",
        db.path().string(), application));
  }
  if (version > current_schema_version()) {
    throw StoreError(fmt::format(
        "{}: written by a newer kbench (store schema {}, this kbench knows up to {}); it is left "
        "as it is. Use that kbench, or give --db another file",
        db.path().string(), version, current_schema_version()));
  }
  db.exec("PRAGMA journal_mode = WAL");
  for (const auto& migration : migrations()) {
    if (migration.version <= version || migration.version > up_to) {
      continue;
    }
    Transaction transaction(db);
    db.exec(migration.sql);
    db.exec(fmt::format("PRAGMA application_id = {}", kApplicationId));
    db.exec(fmt::format("PRAGMA user_version = {}", migration.version));
    transaction.commit();
  }
}

} // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = {
      {1, "evaluations, problems, candidates, suites", kVersion1},
      {2, "the evaluation service's queue", kVersion2},
      {3, "agent runs, turns and tool calls", kVersion3},
  };
  return all;
}

int current_schema_version() {
  return migrations().back().version;
}

void prepare_schema(Database& db) {
  migrate(db, current_schema_version());
  db.exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL");
}

void prepare_schema_up_to(Database& db, int version) {
  migrate(db, version);
}

} // namespace kbench::store
