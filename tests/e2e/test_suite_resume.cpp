// `kbench suite`'s dedupe and --resume, through the real binary on the CPU: an entry listed
// twice is evaluated once and shown twice; a killed suite's jsonl (last line cut short) resumes
// with a warning naming the file and line, reruns only what is missing and leaves a jsonl of
// whole lines; a jsonl of other options is not reused.
#include "kbench_runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using kbench::testing::repo_path;
using kbench::testing::run_kbench;

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Every line is a whole result document with the options a resume matches on.
void expect_whole_lines(const fs::path& path, std::size_t lines) {
  std::istringstream in(read_text(path));
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n) {
    const auto document = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(document.is_discarded()) << path << ":" << n + 1 << ": " << line;
    EXPECT_TRUE(document.contains("suite_options")) << line;
  }
  EXPECT_EQ(n, lines) << read_text(path);
}

TEST(SuiteResume, DuplicatesRunOnceAndAKilledSuiteResumesWhereItStopped) {
  const fs::path dir =
      fs::temp_directory_path() / ("kbench-suite-resume-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto manifest = dir / "suite.json";
  const auto jsonl = dir / "results.jsonl";
  const std::string relu = repo_path("problems/level1/1_relu.py");
  std::ofstream(manifest) << nlohmann::json{
      {"entries",
       {{{"problem", relu},
         {"candidate", repo_path("examples/cpu/level1_relu.py")},
         {"device", "cpu"},
         {"expect", "ok"}},
        {{"problem", relu},
         {"candidate", repo_path("examples/broken/cpu_wrong_result.py")},
         {"device", "cpu"},
         {"expect", "incorrect"},
         {"rules", "structural"}},
        {{"problem", relu},
         {"candidate", repo_path("examples/cpu/level1_relu.py")},
         {"device", "cpu"},
         {"expect", "ok"}}}}}.dump();
  const std::vector<std::string> flags = {"--trials", "2", "--no-timing", "--jsonl",
                                          jsonl.string()};
  auto args = [&](std::vector<std::string> more) {
    std::vector<std::string> all = {"suite", manifest.string()};
    all.insert(all.end(), flags.begin(), flags.end());
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };

  const auto first = run_kbench(args({}), false);
  EXPECT_EQ(first.exit_code, 0) << first.stdout_text << first.stderr_text;
  EXPECT_EQ(count(first.stderr_text, "]   -> "), 2u) << first.stderr_text;
  EXPECT_EQ(first.stderr_text.find("[#3] " + relu), std::string::npos) << first.stderr_text;
  EXPECT_NE(first.stdout_text.find("[duplicate of #1]"), std::string::npos) << first.stdout_text;
  EXPECT_NE(first.stdout_text.find("3 evaluated, 0 skipped, 0 not as expected"), std::string::npos)
      << first.stdout_text;
  expect_whole_lines(jsonl, 2);

  // Killed while writing the second line.
  const std::string text = read_text(jsonl);
  const auto first_line_end = text.find('\n') + 1;
  std::ofstream(jsonl, std::ios::binary | std::ios::trunc)
      << text.substr(0, first_line_end + (text.size() - first_line_end) / 2);
  const auto resumed = run_kbench(args({"--resume"}), false);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.stdout_text << resumed.stderr_text;
  EXPECT_NE(resumed.stderr_text.find(jsonl.string() + ":2: the last line is cut short"),
            std::string::npos)
      << resumed.stderr_text;
  EXPECT_NE(
      resumed.stderr_text.find("1 result(s) reused from " + jsonl.string() + ", 1 to evaluate"),
      std::string::npos)
      << resumed.stderr_text;
  EXPECT_NE(resumed.stderr_text.find("[#2] " + relu), std::string::npos) << resumed.stderr_text;
  EXPECT_EQ(resumed.stderr_text.find("[#1] " + relu), std::string::npos) << resumed.stderr_text;
  EXPECT_NE(resumed.stdout_text.find("[reused from results.jsonl]"), std::string::npos)
      << resumed.stdout_text;
  EXPECT_NE(resumed.stdout_text.find("0 not as expected"), std::string::npos)
      << resumed.stdout_text;
  expect_whole_lines(jsonl, 2);

  // Other options: nothing is reused, the new results are appended after the old.
  auto other = args({"--resume"});
  other[3] = "3"; // --trials 3
  const auto changed = run_kbench(other, false);
  EXPECT_EQ(changed.exit_code, 0) << changed.stdout_text << changed.stderr_text;
  EXPECT_NE(changed.stderr_text.find("0 result(s) reused"), std::string::npos)
      << changed.stderr_text;
  EXPECT_NE(changed.stderr_text.find("2 result(s) in " + jsonl.string() +
                                     " are for other entries or other options"),
            std::string::npos)
      << changed.stderr_text;
  expect_whole_lines(jsonl, 4);

  // --resume needs the file it resumes from.
  const auto no_file = run_kbench({"suite", manifest.string(), "--resume"}, false);
  EXPECT_EQ(no_file.exit_code, 64);
  EXPECT_NE(no_file.stderr_text.find("--resume reads the results of an earlier run from --jsonl"),
            std::string::npos)
      << no_file.stderr_text;
  fs::remove_all(dir);
}

} // namespace
