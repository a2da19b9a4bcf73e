// Covers src/store/: the schema and its migrations, refused files (never written), storing and
// finding evaluations (by id, prefix and key), filters and listings, suites, the service's job
// queue, and the CSV export's cells.
#include "report/csv.hpp"
#include "store/evaluation_filter.hpp"
#include "store/job_queue.hpp"
#include "store/row_columns.hpp"
#include "store/schema.hpp"
#include "store/store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace kbench::store {
namespace {
namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("kbench-test-store-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }
  fs::path file(const std::string& name) const { return m_dir / name; }
  std::string bytes_of(const fs::path& path) const {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  fs::path m_dir;
};

EvalResult result(const std::string& status_text, std::optional<double> speedup = std::nullopt) {
  EvalResult r;
  r.status = *status_from_name(status_text);
  r.message = status_text == "ok" ? "" : "it failed";
  r.problem_path = "/nowhere/problem.py";
  r.problem_sha256 = "aa";
  r.candidate_path = "/nowhere/candidate.py";
  r.candidate_sha256 = "bb";
  r.device = r.device_name = "cpu";
  r.variant = "standard";
  r.torch_version = "2.11.0";
  r.started_at = "2026-12-02T10:00:00Z";
  if (speedup) {
    r.timing.measured = true;
    r.timing.speedup = speedup;
    r.timing.speedup_ci = Interval{*speedup * 0.99, *speedup * 1.01};
    r.timing.flags.push_back({"launch_bound", "host far above device"});
  }
  return r;
}

TEST_F(StoreTest, ANewFileGetsTheCurrentSchemaInWalMode) {
  Store store(file("results.sqlite"));
  Database db(file("results.sqlite"), false);
  auto version = db.prepare("PRAGMA user_version");
  ASSERT_TRUE(version.step());
  EXPECT_EQ(version.integer(0), current_schema_version());
  auto mode = db.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "wal");
}

TEST_F(StoreTest, AnOlderStoreIsMigratedInPlaceAndKeepsItsRows) {
  {
    Database db(file("old.sqlite"), true);
    prepare_schema_up_to(db, 1);
    db.exec("INSERT INTO suites (manifest, options, started_at) VALUES ('m.json', '{}', 'then')");
  }
  Store store(file("old.sqlite"));
  JobQueue jobs(store); // version 2's table exists now
  EXPECT_TRUE(jobs.queued().empty());
  Database db(file("old.sqlite"), false);
  auto kept = db.prepare("SELECT manifest FROM suites");
  ASSERT_TRUE(kept.step());
  EXPECT_EQ(kept.text(0), "m.json");
  auto version = db.prepare("PRAGMA user_version");
  version.step();
  EXPECT_EQ(version.integer(0), current_schema_version());
}

TEST_F(StoreTest, AFileThatIsNotADatabaseIsRefusedAndLeftAsItIs) {
  const auto path = file("notes.sqlite");
  std::ofstream(path) << "these are my notes, not a database\n" << std::string(4096, 'x');
  const std::string before = bytes_of(path);
  try {
    Store store(path);
    FAIL() << "opened a text file as a store";
  } catch (const StoreError& error) {
    EXPECT_NE(std::string(error.what()).find("not a kbench store"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
  }
  EXPECT_EQ(bytes_of(path), before);
}

TEST_F(StoreTest, AnotherProgramsDatabaseIsRefusedAndLeftAsItIs) {
  const auto path = file("other.sqlite");
  {
    Database db(path, true);
    db.exec("CREATE TABLE accounts (id INTEGER); INSERT INTO accounts VALUES (1)");
  }
  const std::string before = bytes_of(path);
  EXPECT_THROW(Store{path}, StoreError);
  EXPECT_EQ(bytes_of(path), before);
  {
    Database db(path, false);
    db.exec("PRAGMA application_id = 42");
  }
  try {
    Store store(path);
    FAIL();
  } catch (const StoreError& error) {
    EXPECT_NE(std::string(error.what()).find("another program"), std::string::npos);
  }
}

TEST_F(StoreTest, AStoreFromANewerKbenchIsRefused) {
  const auto path = file("newer.sqlite");
  { Store store(path); }
  {
    Database db(path, false);
    db.exec("PRAGMA user_version = 999");
  }
  try {
    Store store(path);
    FAIL();
  } catch (const StoreError& error) {
    EXPECT_NE(std::string(error.what()).find("newer kbench"), std::string::npos) << error.what();
  }
}

TEST_F(StoreTest, ReadingCommandsDoNotCreateAStore) {
  EXPECT_THROW(Store(file("missing.sqlite"), false), StoreError);
  EXPECT_FALSE(fs::exists(file("missing.sqlite")));
}

TEST_F(StoreTest, AnEvaluationIsFoundByIdByPrefixAndByKey) {
  Store store(file("results.sqlite"));
  const std::string id = store.add_evaluation(result("ok", 1.5), "key-1", "eval");
  ASSERT_EQ(id.size(), 16u);
  const auto found = store.find_evaluation(id);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->row.status, "ok");
  EXPECT_DOUBLE_EQ(*found->row.speedup, 1.5);
  EXPECT_EQ(found->row.flags, std::vector<std::string>{"launch_bound"});
  EXPECT_EQ(found->document["status"], "ok");
  EXPECT_TRUE(store.find_evaluation(id.substr(0, 6)));
  EXPECT_FALSE(store.find_evaluation("abc")); // too short to be a prefix
  EXPECT_FALSE(store.find_evaluation("zzzz"));
  ASSERT_TRUE(store.latest_for_key("key-1"));
  EXPECT_EQ(store.latest_for_key("key-1")->row.id, id);
  EXPECT_FALSE(store.latest_for_key("key-2"));
}

TEST_F(StoreTest, AHarnessErrorIsNeverTheAnswerToARepeatedRequest) {
  Store store(file("results.sqlite"));
  const std::string good = store.add_evaluation(result("incorrect"), "k", "service");
  store.add_evaluation(result("harness_error"), "k", "service");
  ASSERT_TRUE(store.latest_for_key("k"));
  EXPECT_EQ(store.latest_for_key("k")->row.id, good);
}

TEST_F(StoreTest, FiltersSelectByStatusNumberFlagAndText) {
  Store store(file("results.sqlite"));
  store.add_evaluation(result("ok", 2.0), "a", "eval");
  store.add_evaluation(result("ok", 0.5), "b", "suite");
  store.add_evaluation(result("incorrect"), "c", "eval");
  EXPECT_EQ(store.count_evaluations(parse_filter({"status=ok"})), 2u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"speedup>=1.5"})), 1u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"status!=ok"})), 1u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"flag=launch_bound"})), 2u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"flag!=launch_bound"})), 1u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"origin=suite", "status=ok"})), 1u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"candidate~candidate"})), 3u);
  // The value is a bound parameter, never SQL.
  EXPECT_EQ(store.count_evaluations(parse_filter({"status=ok' OR '1'='1"})), 0u);
  EXPECT_EQ(store.count_evaluations(parse_filter({"problem~%"})), 0u);
  const auto rows = store.list_evaluations(parse_filter({"status=ok"}), 1);
  ASSERT_EQ(rows.size(), 1u);
}

TEST_F(StoreTest, ABadConditionNamesItselfAndTheFields) {
  for (const std::string bad : {"speed>1", "speedup>fast", "status", "=ok", "flag>x", "wall_s~1"}) {
    try {
      parse_condition(bad);
      FAIL() << bad << " was accepted";
    } catch (const StoreError& error) {
      EXPECT_NE(std::string(error.what()).find(bad), std::string::npos) << error.what();
    }
  }
  const auto le = parse_condition("speedup<=2");
  EXPECT_EQ(le.field, "speedup");
  EXPECT_EQ(le.op, "<=");
  EXPECT_EQ(le.value, "2");
}

TEST_F(StoreTest, TheSourcesAreKeptWhenTheFilesStillHoldWhatRan) {
  const auto problem = file("problem.py");
  std::ofstream(problem) << "class Model: pass\n";
  EvalResult r = result("ok");
  r.problem_path = problem.string();
  r.problem_sha256 = "ff"; // not its contents: the source is not kept
  Store store(file("results.sqlite"));
  store.add_evaluation(r, "k", "eval");
  Database db(file("results.sqlite"), false);
  auto source = db.prepare("SELECT source FROM problems WHERE sha256 = 'ff'");
  ASSERT_TRUE(source.step());
  EXPECT_EQ(source.text(0), "");
}

TEST_F(StoreTest, ConcurrentWritersFromTwoConnectionsLoseNothing) {
  Store first(file("results.sqlite"));
  Store second(file("results.sqlite"));
  std::thread a([&] {
    for (int i = 0; i < 50; ++i)
      first.add_evaluation(result("ok"), "a", "eval");
  });
  std::thread b([&] {
    for (int i = 0; i < 50; ++i)
      second.add_evaluation(result("ok"), "b", "eval");
  });
  a.join();
  b.join();
  EXPECT_EQ(first.count_evaluations({}), 100u);
}

TEST_F(StoreTest, SuitesRecordTheirEvaluations) {
  Store store(file("results.sqlite"));
  const auto suite = store.begin_suite("/m.json", {{"trials", 5}});
  store.add_evaluation(result("ok"), "k", "suite", suite);
  store.finish_suite(suite);
  EXPECT_EQ(store.count_evaluations(parse_filter({"suite=" + std::to_string(suite)})), 1u);
}

TEST_F(StoreTest, JobsMoveThroughTheirStatesAndFollowersAreCompletedOnce) {
  Store store(file("results.sqlite"));
  JobQueue jobs(store);
  const auto leader = jobs.add("k", {{"x", 1}}, 0);
  const auto follower = jobs.add("k", {{"x", 1}}, 0);
  const auto urgent = jobs.add("other", {}, 5);
  EXPECT_EQ(jobs.position(urgent.id), 0u);
  EXPECT_EQ(jobs.position(leader.id), 1u);
  EXPECT_EQ(jobs.position(follower.id), 2u);
  EXPECT_TRUE(jobs.set_state(leader.id, "building"));
  EXPECT_TRUE(jobs.key_in_flight("k"));
  EXPECT_FALSE(jobs.position(leader.id));
  const std::string evaluation = store.add_evaluation(result("ok"), "k", "service");
  EXPECT_TRUE(jobs.set_state(leader.id, "done", "", evaluation));
  EXPECT_EQ(jobs.complete_followers("k", evaluation), std::vector<std::string>{follower.id});
  const auto done = jobs.get(follower.id);
  EXPECT_EQ(done->state, "done");
  EXPECT_TRUE(done->cached);
  EXPECT_EQ(done->evaluation_id, evaluation);
  EXPECT_FALSE(jobs.set_state(follower.id, "running")); // terminal stays terminal
  EXPECT_TRUE(jobs.complete_followers("k", evaluation).empty());
}

TEST_F(StoreTest, ARestartedServiceFindsItsUnfinishedJobsQueued) {
  std::string running_id;
  {
    Store store(file("results.sqlite"));
    JobQueue jobs(store);
    running_id = jobs.add("k", {}, 0).id;
    jobs.set_state(running_id, "running");
  }
  Store store(file("results.sqlite"));
  JobQueue jobs(store);
  EXPECT_EQ(jobs.requeue_interrupted(), 1u);
  ASSERT_EQ(jobs.queued().size(), 1u);
  EXPECT_EQ(jobs.queued()[0].id, running_id);
}

TEST(Csv, CellsAreQuotedAndFormulasDisarmed) {
  EXPECT_EQ(report::csv_cell("plain"), "plain");
  EXPECT_EQ(report::csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(report::csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(report::csv_cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(report::csv_cell("-0.5"), "-0.5");
  EXPECT_EQ(report::csv_cell("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(report::csv_line({"a", "b"}), "a,b\r\n");
  EXPECT_EQ(row_values(EvaluationRow{}).size(), row_column_names().size());
}

} // namespace
} // namespace kbench::store
