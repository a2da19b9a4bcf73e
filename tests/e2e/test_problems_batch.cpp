// `kbench problems check` over many problems in one process (issue 16 item 2): --jobs checks at
// once with workers forked by one warm fork server, the same verdicts as checking each problem
// alone, --jsonl written as checks finish, --resume skipping what it holds, and a crashing or
// hanging problem leaving the others' checks as they are.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;
namespace fs = std::filesystem;

namespace {

std::string fixture(const std::string& name) {
  return repo_path("tests/e2e/problems/" + name);
}

std::string temp(const std::string& name) {
  return ::testing::TempDir() + "kbench_problems_batch_" + name;
}

struct Batch {
  kbench::testing::KbenchRun run;
  nlohmann::json reports = nlohmann::json::array();
};

Batch check(const std::vector<std::string>& problems, std::vector<std::string> extra) {
  const std::string json = temp("reports.json");
  fs::remove(json);
  std::vector<std::string> args = {"problems", "check"};
  args.insert(args.end(), problems.begin(), problems.end());
  for (const std::string option : {"--device", "cpu", "--trials", "2", "--json"}) {
    args.push_back(option);
  }
  args.push_back(json);
  args.insert(args.end(), extra.begin(), extra.end());
  Batch batch{run_kbench(args, false)};
  std::ifstream in(json);
  if (in) {
    in >> batch.reports;
  }
  return batch;
}

// What a check decided, without what depends on when and where it ran (wall time, call time).
nlohmann::json verdict_of(const nlohmann::json& report) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : report["trials"]) {
    trials.push_back({t["index"], t["seed"], t["ran"], t["input_shapes"], t["error"]});
  }
  return {report["verdict"], report["message"], report["findings"], trials};
}

std::string key_of(const nlohmann::json& report) {
  return report["problem"]["path"].get<std::string>() + " [" +
         report["variant"].get<std::string>() + "]";
}

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

} // namespace

TEST(ProblemsBatch, VerdictsAreThoseOfEachProblemCheckedAlone) {
  // Two variants and problems from two folders: every worker still comes from one server.
  const std::vector<std::string> problems = {
      fixture("near_zero_output.py"), fixture("uniform_rows.py"), fixture("jittered_scale.py"),
      fixture("seed_independent_output.py"), repo_path("problems/level1/1_relu.py")};
  const auto batch =
      check(problems, {"--variant", "standard", "--variant", "popcorn", "--jobs", "3"});
  ASSERT_EQ(batch.reports.size(), 2 * problems.size()) << batch.run.stderr_text;
  std::map<std::string, nlohmann::json> batched;
  for (const auto& report : batch.reports) {
    batched[key_of(report)] = report;
    EXPECT_EQ(report["worker_started"], "forked") << key_of(report) << batch.run.stderr_text;
  }
  for (const auto& problem : problems) {
    for (const std::string variant : {"standard", "popcorn"}) {
      const auto alone = check({problem}, {"--variant", variant, "--jobs", "1"});
      ASSERT_EQ(alone.reports.size(), 1u) << alone.run.stderr_text;
      const auto& single = alone.reports[0];
      ASSERT_TRUE(batched.contains(key_of(single))) << key_of(single);
      EXPECT_EQ(verdict_of(batched[key_of(single)]), verdict_of(single)) << key_of(single);
    }
  }
  // The fixtures' known defects came out in the batch too (the comparison is not vacuous).
  EXPECT_EQ(batched[fixture("near_zero_output.py") + " [standard]"]["verdict"], "fail");
  EXPECT_EQ(batched[fixture("jittered_scale.py") + " [popcorn]"]["verdict"], "pass");
  EXPECT_EQ(batch.run.exit_code, 1);
}

TEST(ProblemsBatch, JsonlHoldsOneLinePerCheckAndResumeSkipsThem) {
  const std::string jsonl = temp("checks.jsonl");
  fs::remove(jsonl);
  const std::vector<std::string> problems = {
      fixture("uniform_rows.py"), fixture("jittered_scale.py"), fixture("near_zero_output.py")};
  const std::vector<std::string> options = {"--variant", "standard", "--jobs",
                                            "2",         "--jsonl",  jsonl};
  const auto first = check(problems, options);
  ASSERT_EQ(first.reports.size(), 3u) << first.run.stderr_text;
  EXPECT_CONTAINS(first.run.stderr_text, "3/3 checked");
  const auto lines = read_lines(jsonl);
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& line : lines) {
    EXPECT_TRUE(line.contains("check_key")) << line.dump();
    EXPECT_EQ(line["schema"], "kbench.problem_check/1");
  }

  // All there: nothing is checked again, and the table and exit code are the same.
  auto options_resumed = options;
  options_resumed.push_back("--resume");
  const auto again = check(problems, options_resumed);
  EXPECT_CONTAINS(again.run.stderr_text, "3 of 3 reused");
  EXPECT_EQ(again.run.exit_code, first.run.exit_code);
  ASSERT_EQ(again.reports.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(verdict_of(again.reports[i]), verdict_of(first.reports[i]));
  }
  EXPECT_EQ(read_lines(jsonl).size(), 3u);

  // A killed batch leaves its last line cut short: that check runs again, the others do not.
  std::string text;
  {
    std::ifstream in(jsonl);
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  const std::size_t last = text.rfind('\n', text.size() - 2) + 1;
  const std::string cut_problem = nlohmann::json::parse(text.substr(last))["problem"]["path"];
  {
    std::ofstream out(jsonl, std::ios::trunc);
    out << text.substr(0, last + (text.size() - last) / 2);
  }
  const auto resumed = check(problems, options_resumed);
  EXPECT_CONTAINS(resumed.run.stderr_text, "the last line is cut short");
  EXPECT_CONTAINS(resumed.run.stderr_text, "2 of 3 reused");
  EXPECT_CONTAINS(resumed.run.stderr_text, cut_problem + " [standard] -> ");
  const auto after = read_lines(jsonl); // parses: the cut line was dropped, not glued to
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[2]["problem"]["path"], cut_problem);
  ASSERT_EQ(resumed.reports.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(verdict_of(resumed.reports[i]), verdict_of(first.reports[i]));
  }

  // Other settings are other checks: nothing is reused.
  const auto other = run_kbench({"problems", "check", problems[0], "--device", "cpu", "--trials",
                                 "3", "--variant", "standard", "--jsonl", jsonl, "--resume"},
                                false);
  EXPECT_CONTAINS(other.stderr_text, "0 of 1 reused");
}

TEST(ProblemsBatch, ResumeWithoutJsonlIsAUsageError) {
  const auto run = run_kbench(
      {"problems", "check", fixture("uniform_rows.py"), "--device", "cpu", "--resume"}, false);
  EXPECT_EQ(run.exit_code, 64);
  EXPECT_CONTAINS(run.stderr_text, "--jsonl FILE");
}

TEST(ProblemsBatch, ACrashingAndAHangingProblemLeaveTheOthersAsTheyAre) {
  const std::vector<std::string> problems = {
      fixture("crashing_reference.py"), fixture("uniform_rows.py"), fixture("hanging_reference.py"),
      fixture("near_zero_output.py")};
  const auto batch =
      check(problems, {"--variant", "standard", "--jobs", "4", "--run-timeout", "40"});
  ASSERT_EQ(batch.reports.size(), 4u) << batch.run.stderr_text;
  const auto& crashed = batch.reports[0];
  EXPECT_EQ(crashed["verdict"], "not checked");
  EXPECT_CONTAINS(crashed["message"].get<std::string>(), "SIGKILL");
  const auto& hung = batch.reports[2];
  EXPECT_EQ(hung["verdict"], "not checked");
  EXPECT_CONTAINS(hung["message"].get<std::string>(), "40 s");
  EXPECT_EQ(batch.run.exit_code, 2);
  for (const std::size_t i : {1u, 3u}) {
    const auto alone = check({problems[i]}, {"--variant", "standard", "--jobs", "1"});
    ASSERT_EQ(alone.reports.size(), 1u) << alone.run.stderr_text;
    EXPECT_EQ(verdict_of(batch.reports[i]), verdict_of(alone.reports[0])) << problems[i];
    EXPECT_EQ(batch.reports[i]["worker_started"], "forked");
  }
}
