// Covers src/web/: every page drawn from a seeded store (tests/support/seeded_store.cpp): the
// values stored show, texts from models and candidates are escaped everywhere (pages and the
// static report hold no script), filters, sorting and pagination, the leaderboard's figures,
// the compare view's highlighting, the line diff, and a running run's page reloading itself.
#include "seeded_store.hpp"
#include "web/html.hpp"
#include "web/leaderboard.hpp"
#include "web/site.hpp"
#include "web/text_diff.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace kbench::web {
namespace {
namespace fs = std::filesystem;
using kbench::testing::kHostile;

#define EXPECT_HAS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (needle)

class WebPages : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() /
            ("kbench-web-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    m_store = std::make_unique<store::Store>(m_dir / "results.sqlite");
    m_seeded = kbench::testing::seed_store(*m_store, m_dir / "problems", 12);
  }
  void TearDown() override {
    m_store.reset();
    fs::remove_all(m_dir);
  }
  Response get(const std::string& path, const Query& query = {}) {
    return render(*m_store, {m_dir / "cache"}, path, query, Links{});
  }
  fs::path m_dir;
  std::unique_ptr<store::Store> m_store;
  kbench::testing::Seeded m_seeded;
};

TEST_F(WebPages, EveryPageIsDrawnWithTheStoredValues) {
  const auto index = get("/");
  EXPECT_EQ(index.status, 200);
  EXPECT_HAS(index.body, "agent run(s)");
  const auto run = get("/runs/" + m_seeded.run_ids.front());
  ASSERT_EQ(run.status, 200);
  EXPECT_HAS(run.body, "model-a");
  EXPECT_HAS(run.body, "1.80x [1.75, 1.85]"); // speedup with its interval
  EXPECT_HAS(run.body, "27.78 µs");           // the candidate's median: 50 µs / 1.8
  EXPECT_HAS(run.body, "long_scoreboard");    // warp stalls
  EXPECT_HAS(run.body, "<svg");               // charts
  EXPECT_HAS(run.body, "held-out re-check");
  EXPECT_HAS(run.body, "turn 2");
  EXPECT_HAS(run.body, "Kernel versions"); // the diffs between versions
  EXPECT_EQ(get("/evaluations/" + m_seeded.evaluation_id).status, 200);
  EXPECT_EQ(get("/problems/" + m_seeded.problem_sha256).status, 200);
  EXPECT_HAS(get("/problems/" + m_seeded.problem_sha256).body, "1_relu.py");
  EXPECT_EQ(get("/runs").status, 200);
  EXPECT_EQ(get("/evaluations").status, 200);
  EXPECT_EQ(get("/static/kbench.css").content_type, "text/css; charset=utf-8");
  const auto raw = get("/raw/evaluations/" + m_seeded.evaluation_id + ".json");
  EXPECT_EQ(raw.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(raw.body)["schema"], "kbench.eval/1");
  EXPECT_EQ(get("/runs/0000000000000000").status, 404);
  EXPECT_EQ(get("/nowhere").status, 404);
}

TEST_F(WebPages, TextsFromModelsAndCandidatesAreEscapedEverywhere) {
  const std::vector<std::string> paths = {"/",
                                          "/runs",
                                          "/runs/" + m_seeded.hostile_run,
                                          "/evaluations",
                                          "/leaderboard",
                                          "/compare?a=" + m_seeded.hostile_run +
                                              "&b=" + m_seeded.run_ids.front()};
  for (const auto& path : paths) {
    const auto question = path.find('?');
    Query query;
    if (question != std::string::npos) {
      std::istringstream pairs(path.substr(question + 1));
      for (std::string pair; std::getline(pairs, pair, '&');) {
        query[pair.substr(0, pair.find('='))] = pair.substr(pair.find('=') + 1);
      }
    }
    const auto page = get(path.substr(0, question), query);
    EXPECT_EQ(page.body.find("<script"), std::string::npos) << path;
    EXPECT_EQ(page.body.find("<img src=x"), std::string::npos) << path;
  }
  const auto hostile = get("/runs/" + m_seeded.hostile_run).body;
  EXPECT_HAS(hostile, escape(kHostile)); // shown, as text
  EXPECT_HAS(hostile, "Content-Security-Policy");
  // The static report holds no script either.
  const fs::path site = m_dir / "site";
  const auto files = export_site(*m_store, {m_dir / "cache"}, site);
  EXPECT_GT(files, 10u);
  for (const auto& entry : fs::recursive_directory_iterator(site)) {
    if (entry.path().extension() == ".html") {
      std::ifstream in(entry.path());
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      EXPECT_EQ(text.find("<script"), std::string::npos) << entry.path();
      EXPECT_EQ(text.find("<img src=x"), std::string::npos) << entry.path();
    }
  }
  EXPECT_TRUE(fs::exists(site / "runs" / (m_seeded.hostile_run + ".html")));
  EXPECT_TRUE(fs::exists(site / "static" / "kbench.css"));
}

TEST_F(WebPages, FiltersSortingAndPagesWork) {
  const auto only_b = get("/runs", {{"model", "model-b"}}).body;
  EXPECT_EQ(only_b.find(">model-a<"), std::string::npos);
  EXPECT_HAS(only_b, ">model-b<");
  const auto level2 = get("/runs", {{"level", "2"}}).body;
  EXPECT_EQ(level2.find("2_gelu.py"), std::string::npos);
  EXPECT_HAS(level2, "1_linear_relu.py");
  // Sorted by speedup, ascending: the slowest final comes first.
  const auto sorted = get("/runs", {{"sort", "speedup"}, {"order", "asc"}}).body;
  EXPECT_LT(sorted.find("0.90x"), sorted.find("3.15x"));
  const auto failed = get("/evaluations", {{"where", "status=incorrect"}}).body;
  EXPECT_HAS(failed, "1 in all");
  EXPECT_HAS(get("/evaluations", {{"where", "speed>1"}}).body, "no field");
}

// Every figure of an evaluation links to its place in the raw document: each such link's JSON
// pointer names a field the stored document has.
TEST_F(WebPages, EveryFigureLinksToAFieldOfTheRawDocument) {
  const auto page = get("/evaluations/" + m_seeded.evaluation_id).body;
  const auto document =
      nlohmann::json::parse(get("/raw/evaluations/" + m_seeded.evaluation_id + ".json").body);
  const std::string prefix = "/raw/evaluations/" + m_seeded.evaluation_id + ".json#";
  int links = 0;
  for (auto at = page.find(prefix); at != std::string::npos; at = page.find(prefix, at + 1)) {
    const auto start = at + prefix.size();
    const std::string pointer = page.substr(start, page.find('"', start) - start);
    EXPECT_TRUE(document.contains(nlohmann::json::json_pointer(pointer))) << pointer;
    ++links;
  }
  EXPECT_GE(links, 15);
}

TEST_F(WebPages, ARunStillInProgressReloadsItself) {
  EXPECT_HAS(get("/runs/" + m_seeded.running_run).body, "http-equiv=\"refresh\"");
  EXPECT_EQ(get("/runs/" + m_seeded.run_ids.front()).body.find("http-equiv=\"refresh\""),
            std::string::npos);
}

TEST_F(WebPages, TheLeaderboardCountsExcludedRunsApartAndNamesItsBoard) {
  const auto board = get("/leaderboard").body;
  EXPECT_HAS(board, "NVIDIA H200 · torch 2.11.0+cu130");
  EXPECT_HAS(board, "fast_1.5");
  EXPECT_HAS(board, "1 of 5"); // model-a level 1: the impossible_timing run is counted apart
}

TEST_F(WebPages, CompareHighlightsDifferences) {
  const auto two = get("/compare", {{"a", m_seeded.run_ids[0]}, {"b", m_seeded.run_ids[6]}}).body;
  EXPECT_HAS(two, "class=\"diff\"");
  EXPECT_HAS(two, "0.67x <span class=\"sig\""); // 1.2x against 1.8x, intervals apart
  EXPECT_HAS(two, "1.50x");                     // the runtime: 41.67 µs against 27.78 µs
  const auto same = get("/compare", {{"a", m_seeded.run_ids[0]}, {"b", m_seeded.run_ids[1]}}).body;
  EXPECT_EQ(same.find("class=\"sig\""), std::string::npos); // 1.8x and 1.89x: intervals overlap
  const auto models = get("/compare", {{"model_a", "model-a"}, {"model_b", "model-b"}}).body;
  EXPECT_HAS(models, "Over 3 problems both attempted");
  EXPECT_HAS(models, "paired bootstrap");
}

TEST(Leaderboard, FastPGeomeanAndPassAtKFollowKernelBench) {
  std::vector<BoardRun> runs;
  const double speedups[] = {2.0, 0.5, 1.2, 4.0};
  for (int p = 0; p < 4; ++p) {
    for (int s = 0; s < 2; ++s) {
      BoardRun run;
      run.model = "m";
      run.tier = "default";
      run.problem = std::to_string(p);
      run.level = 1;
      run.sample = s;
      run.status = (p == 3 && s == 0) ? "incorrect" : "ok";
      run.speedup = speedups[p];
      runs.push_back(run);
    }
  }
  const auto rows = leaderboard(runs);
  ASSERT_EQ(rows.size(), 1u);
  const auto& row = rows[0];
  EXPECT_EQ(row.problems, 4);
  EXPECT_DOUBLE_EQ(row.correct_share, 0.75);
  EXPECT_DOUBLE_EQ(row.fast_p.at(0.0), 0.75);
  EXPECT_DOUBLE_EQ(row.fast_p.at(1.0),
                   0.5); // 2.0 and 1.2; 0.5 is slower, 4.0's first sample failed
  EXPECT_DOUBLE_EQ(row.fast_p.at(1.5), 0.25);
  EXPECT_NEAR(*row.geomean_correct, std::cbrt(2.0 * 0.5 * 1.2), 1e-12);
  EXPECT_NEAR(*row.geomean_all, std::pow(2.0 * 0.5 * 1.2 * 1.0, 0.25), 1e-12);
  EXPECT_LE(row.geomean_correct_ci->low, *row.geomean_correct);
  EXPECT_GE(row.geomean_correct_ci->high, *row.geomean_correct);
  EXPECT_DOUBLE_EQ(*row.pass_at_1, (1 + 1 + 1 + 0.5) / 4);
  EXPECT_EQ(row.k, 2);
  EXPECT_DOUBLE_EQ(*row.pass_at_k, 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 3), 0.0);
  EXPECT_NEAR(pass_at_k(10, 1, 3), 0.3, 1e-12);
  EXPECT_EQ(exclusion_reason("impossible_timing", true, ""), "timing ruled invalid");
  EXPECT_EQ(exclusion_reason("ok", false, ""), "a trivial answer passes: speedup not a score");
  EXPECT_EQ(exclusion_reason("ok", true, "incorrect"), "failed the held-out re-check");
  EXPECT_EQ(exclusion_reason("ok", true, "ok"), "");
}

TEST(TextDiff, KeepsContextAroundChanges) {
  std::string before, after;
  for (int i = 0; i < 20; ++i) {
    before += "line " + std::to_string(i) + "\n";
    after += (i == 10 ? std::string("changed\n") : "line " + std::to_string(i) + "\n");
  }
  const auto diff = line_diff(before, after, 2);
  int added = 0, removed = 0, skipped = 0;
  for (const auto& line : diff) {
    added += line.kind == '+';
    removed += line.kind == '-';
    skipped += line.kind == '@';
  }
  EXPECT_EQ(added, 1);
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(skipped, 2);
  const auto changed = line_diff("old\n", "new\n");
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].kind, '-'); // the old line first, as diff -u shows it
  EXPECT_EQ(changed[1].kind, '+');
  EXPECT_TRUE(line_diff("a\nb\n", "a\nb\n").empty());
}

} // namespace
} // namespace kbench::web
