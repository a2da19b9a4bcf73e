// Covers src/sched/suite_keys.cpp: which suite entries are the same evaluation (contents and
// options, not paths), and which lines of an earlier --jsonl a --resume reuses: the same key,
// never a harness_error, never a line of other options; a cut-short last line is dropped with
// a warning naming the file and the line; a bad line before the last is an error.
#include "sched/suite_keys.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace kbench::sched {
namespace {

namespace fs = std::filesystem;

class SuiteKeys : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("kbench_suite_keys_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    write("problem.py", "class Model: pass\n");
    write("a.py", "class ModelNew: pass  # a\n");
    write("a_copy.py", "class ModelNew: pass  # a\n");
    write("b.py", "class ModelNew: pass  # b\n");
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(m_dir / name, std::ios::binary) << text;
    return m_dir / name;
  }
  EvalOptions run(const std::string& candidate) const {
    EvalOptions options;
    options.problem = m_dir / "problem.py";
    options.candidate = m_dir / candidate;
    options.device = "cpu";
    return options;
  }
  // A result line as `kbench suite` writes it for `options`, with `status`.
  std::string line(const EvalOptions& options, Status status) const {
    const auto key = evaluation_key(options);
    EXPECT_TRUE(key);
    EvalResult result;
    result.status = status;
    result.problem_sha256 = key->problem_sha256;
    result.candidate_sha256 = key->candidate_sha256;
    result.device = options.device;
    return suite_line(result, *key).dump() + "\n";
  }

  fs::path m_dir;
};

TEST_F(SuiteKeys, TheSameContentsAndOptionsAreOneEvaluation) {
  auto other_trials = run("a.py");
  other_trials.trials = 7;
  auto other_gpu = run("a.py");
  other_gpu.gpu = 3; // which of equal GPUs: the same evaluation
  const auto duplicates = find_duplicates(
      {evaluation_key(run("a.py")), evaluation_key(run("b.py")), evaluation_key(run("a_copy.py")),
       evaluation_key(other_trials), evaluation_key(other_gpu), evaluation_key(run("missing.py")),
       evaluation_key(run("missing.py"))});
  ASSERT_EQ(duplicates.size(), 7u);
  EXPECT_FALSE(duplicates[0]);
  EXPECT_FALSE(duplicates[1]);
  EXPECT_EQ(duplicates[2], 0u) << "same contents under another name";
  EXPECT_FALSE(duplicates[3]) << "other options";
  EXPECT_EQ(duplicates[4], 0u);
  EXPECT_FALSE(duplicates[5]) << "an unreadable candidate has no key";
  EXPECT_FALSE(duplicates[6]);
}

TEST_F(SuiteKeys, ADeviceOrPrecisionChangeIsAnotherEvaluation) {
  auto cuda = run("a.py");
  cuda.device = "cuda";
  auto half = run("a.py");
  half.precision = "fp16";
  EXPECT_FALSE(evaluation_key(run("a.py")) == evaluation_key(cuda));
  EXPECT_FALSE(evaluation_key(run("a.py")) == evaluation_key(half));
}

TEST_F(SuiteKeys, ABuildAloneIsNotTheEvaluation) {
  auto build = run("a.py");
  build.compile_only = true;
  auto correctness = run("a.py");
  correctness.no_timing = true;
  EXPECT_FALSE(evaluation_key(run("a.py")) == evaluation_key(build));
  EXPECT_FALSE(evaluation_key(run("a.py")) == evaluation_key(correctness));
  EXPECT_FALSE(evaluation_key(build) == evaluation_key(correctness));
}

TEST_F(SuiteKeys, ResumeReusesTheSameKeyOnly) {
  auto other_options = run("b.py");
  other_options.iterations = 5;
  const auto path = write("results.jsonl",
                          line(run("a.py"), Status::incorrect) + line(other_options, Status::ok));
  const auto log = read_resume_log(path);
  EXPECT_TRUE(log.warnings.empty());
  EXPECT_EQ(log.complete_bytes, fs::file_size(path));
  const EvalResult* a = find_reusable(log, *evaluation_key(run("a.py")));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->status, Status::incorrect);
  EXPECT_EQ(find_reusable(log, *evaluation_key(run("b.py"))), nullptr)
      << "a result of other options is not reused";
  EXPECT_NE(find_reusable(log, *evaluation_key(other_options)), nullptr);
}

TEST_F(SuiteKeys, AHarnessErrorIsRunAgainAndTheLastResultWins) {
  const auto path = write(
      "results.jsonl", line(run("a.py"), Status::ok) + line(run("a.py"), Status::harness_error) +
                           line(run("b.py"), Status::crashed) + line(run("b.py"), Status::timeout));
  const auto log = read_resume_log(path);
  EXPECT_EQ(find_reusable(log, *evaluation_key(run("a.py"))), nullptr);
  const EvalResult* b = find_reusable(log, *evaluation_key(run("b.py")));
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->status, Status::timeout);
}

TEST_F(SuiteKeys, ACutShortLastLineIsDroppedWithTheFileAndLineNamed) {
  const std::string first = line(run("a.py"), Status::ok);
  const std::string second = line(run("b.py"), Status::ok);
  const auto path = write("results.jsonl", first + second.substr(0, second.size() / 2));
  const auto log = read_resume_log(path);
  ASSERT_EQ(log.records.size(), 1u);
  EXPECT_EQ(log.complete_bytes, first.size());
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find(path.string() + ":2: the last line is cut short"),
            std::string::npos)
      << log.warnings[0];
  EXPECT_EQ(find_reusable(log, *evaluation_key(run("b.py"))), nullptr);
}

TEST_F(SuiteKeys, ABadLineBeforeTheLastIsAnError) {
  const auto path = write("results.jsonl", line(run("a.py"), Status::ok) + "{not json\n" +
                                               line(run("b.py"), Status::ok));
  try {
    read_resume_log(path);
    FAIL() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(path.string() + ":2: not a result document"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(SuiteKeys, LinesWithoutSuiteOptionsAreNotReusedAndSaySo) {
  EvalResult result;
  result.status = Status::ok;
  result.problem_sha256 = evaluation_key(run("a.py"))->problem_sha256;
  result.candidate_sha256 = evaluation_key(run("a.py"))->candidate_sha256;
  const auto path = write("results.jsonl", to_json(result).dump() + "\n");
  const auto log = read_resume_log(path);
  EXPECT_TRUE(log.records.empty());
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find("carry no suite_options"), std::string::npos) << log.warnings[0];
  EXPECT_TRUE(read_resume_log(m_dir / "absent.jsonl").records.empty());
}

} // namespace
} // namespace kbench::sched
