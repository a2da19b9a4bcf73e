// Covers src/sched/suite_plan.cpp: a manifest's errors name the file, the entry and the field,
// word for word as `kbench suite` prints them; planning resolves paths against the manifest's
// directory and each entry's device against the suite's and the GPUs here.
#include "sched/suite_plan.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace kbench::sched {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A fresh directory per test, removed after it.
class TempDirectory : public ::testing::Test {
protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::temp_directory_path() /
            ("kbench_suite_plan_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  fs::path m_dir;
};

class ReadManifest : public TempDirectory {
protected:
  fs::path write(const std::string& text) const {
    const fs::path path = m_dir / "suite.json";
    std::ofstream(path) << text;
    return path;
  }

  // The message read_manifest throws for a manifest of `text`, prefixed with the file.
  std::string error_for(const std::string& text) const {
    const fs::path path = write(text);
    try {
      read_manifest(path);
    } catch (const std::runtime_error& error) {
      const std::string message = error.what();
      const std::string prefix = path.string() + ": ";
      EXPECT_EQ(message.rfind(prefix, 0), 0u) << message << " does not name the file";
      return message.substr(std::min(message.size(), prefix.size()));
    }
    ADD_FAILURE() << "no error for " << text;
    return "";
  }
};

TEST_F(ReadManifest, ReadsEveryFieldAndDefaultsTheOptionalOnes) {
  const auto entries = read_manifest(write(R"({"entries": [
      {"problem": "p.py", "candidate": "c.py"},
      {"problem": "q.py", "candidate": "d.py", "device": "cuda", "expect": "incorrect",
       "variant": "popcorn", "run_timeout_s": 60, "world_size": 2, "rules": "partial-torch"}]})"));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].problem, "p.py");
  EXPECT_EQ(entries[0].candidate, "c.py");
  EXPECT_EQ(entries[0].device, "any");
  EXPECT_EQ(entries[0].expect, "");
  EXPECT_EQ(entries[0].variant, "");
  EXPECT_FALSE(entries[0].run_timeout_s);
  EXPECT_FALSE(entries[0].world_size);
  EXPECT_EQ(entries[0].rules, "");
  EXPECT_EQ(entries[1].device, "cuda");
  EXPECT_EQ(entries[1].expect, "incorrect");
  EXPECT_EQ(entries[1].variant, "popcorn");
  EXPECT_EQ(entries[1].run_timeout_s, 60);
  EXPECT_EQ(entries[1].world_size, 2);
  EXPECT_EQ(entries[1].rules, "partial-torch");
}

TEST_F(ReadManifest, AMissingFileIsNamed) {
  const fs::path path = m_dir / "absent.json";
  try {
    read_manifest(path);
    FAIL() << "a missing manifest must be an error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), path.string() + ": cannot open the file");
  }
}

TEST_F(ReadManifest, ADocumentWithoutAnEntriesArrayIsRefused) {
  EXPECT_EQ(error_for("[1]"), "expected an object with an \"entries\" array");
  EXPECT_EQ(error_for(R"({"entries": {}})"), "expected an object with an \"entries\" array");
}

TEST_F(ReadManifest, ANonObjectEntryIsNamedByItsIndex) {
  EXPECT_EQ(error_for(R"({"entries": [{"problem": "p.py", "candidate": "c.py"}, 3]})"),
            "entries[1] is not an object");
}

TEST_F(ReadManifest, AMissingProblemOrCandidateIsNamed) {
  EXPECT_EQ(error_for(R"({"entries": [{"candidate": "c.py"}]})"), "entries[0] has no \"problem\"");
  EXPECT_EQ(error_for(R"({"entries": [{"problem": "p.py"}]})"), "entries[0] has no \"candidate\"");
}

TEST_F(ReadManifest, AFieldOfTheWrongTypeIsNamed) {
  EXPECT_EQ(error_for(R"({"entries": [{"problem": 3, "candidate": "c.py"}]})"),
            "entries[0].problem must be a string");
  EXPECT_EQ(error_for(R"({"entries": [{"problem": "p.py", "candidate": "c.py", "rules": []}]})"),
            "entries[0].rules must be a string");
}

TEST_F(ReadManifest, AnUnknownDeviceIsNamedWithTheChoices) {
  EXPECT_EQ(
      error_for(R"({"entries": [{"problem": "p.py", "candidate": "c.py", "device": "gpu"}]})"),
      "entries[0].device must be cpu, cuda or any, not 'gpu'");
}

TEST_F(ReadManifest, AnUnknownExpectedStatusIsNamed) {
  EXPECT_EQ(
      error_for(R"({"entries": [{"problem": "p.py", "candidate": "c.py", "expect": "great"}]})"),
      "entries[0].expect: unknown status 'great'");
}

TEST_F(ReadManifest, WorldSizeAndRunTimeoutMustBePositiveIntegers) {
  for (const char* value : {"0", "-1", "\"2\"", "1.5"}) {
    EXPECT_EQ(error_for(std::string(R"({"entries": [{"problem": "p.py", "candidate": "c.py", )") +
                        R"("world_size": )" + value + "}]}"),
              "entries[0].world_size must be a positive integer")
        << value;
  }
  EXPECT_EQ(
      error_for(R"({"entries": [{"problem": "p.py", "candidate": "c.py", "run_timeout_s": 0}]})"),
      "entries[0].run_timeout_s must be a positive integer");
}

ManifestEntry entry(const std::string& problem, const std::string& device = "any") {
  return ManifestEntry{problem, "cand/" + problem, device, "", "", std::nullopt, std::nullopt, ""};
}

TEST(PlanSuite, PathsAreRelativeToTheManifestDirectory) {
  auto with_rules = entry("p.py");
  with_rules.rules = "rules/relaxed.json";
  auto bundled = entry("q.py");
  bundled.rules = "partial-torch";
  EvalOptions suite;
  suite.device = "cpu";
  const auto plan = plan_suite({with_rules, bundled}, suite, "/suites/level1", "", 0);
  ASSERT_EQ(plan.size(), 2u);
  ASSERT_TRUE(plan[0].run);
  EXPECT_EQ(plan[0].run->problem, fs::path("/suites/level1/p.py"));
  EXPECT_EQ(plan[0].run->candidate, fs::path("/suites/level1/cand/p.py"));
  EXPECT_EQ(plan[0].run->rules, fs::path("/suites/level1/rules/relaxed.json"));
  ASSERT_TRUE(plan[1].run);
  EXPECT_EQ(plan[1].run->rules, fs::path("partial-torch")) << "a bundled name stays a name";
}

TEST(PlanSuite, AnEntryOverridesOnlyWhatItNames) {
  auto custom = entry("p.py");
  custom.variant = "popcorn2";
  custom.run_timeout_s = 45;
  custom.world_size = 1;
  EvalOptions suite;
  suite.device = "cpu";
  suite.trials = 3;
  suite.rules = "/abs/suite-rules.json";
  const auto plan = plan_suite({custom, entry("q.py")}, suite, "m", "", 0);
  ASSERT_TRUE(plan[0].run && plan[1].run);
  EXPECT_EQ(plan[0].run->variant, "popcorn2");
  EXPECT_EQ(plan[0].run->run_timeout, 45s);
  EXPECT_EQ(plan[0].run->world_size, 1);
  EXPECT_EQ(plan[0].run->trials, 3);
  EXPECT_EQ(plan[1].run->variant, EvalOptions{}.variant);
  EXPECT_EQ(plan[1].run->run_timeout, EvalOptions{}.run_timeout);
  EXPECT_EQ(plan[1].run->world_size, EvalOptions{}.world_size);
  EXPECT_EQ(plan[1].run->rules, fs::path("/abs/suite-rules.json"));
}

TEST(PlanSuite, AnyEntriesRunOnTheSuitesDeviceAndAutoMeansCudaWithAGpu) {
  const std::vector<ManifestEntry> entries{entry("a.py", "any"), entry("b.py", "cpu")};
  EvalOptions suite; // device "auto"
  const auto with_gpu = plan_suite(entries, suite, "m", "", 1);
  EXPECT_EQ(with_gpu[0].device, "cuda");
  EXPECT_EQ(with_gpu[0].run->device, "cuda");
  EXPECT_EQ(with_gpu[1].device, "cpu") << "cpu entries always run on the CPU";
  const auto without = plan_suite(entries, suite, "m", "", 0);
  EXPECT_EQ(without[0].device, "cpu");
  EXPECT_EQ(without[0].run->device, "cpu");
}

TEST(PlanSuite, CudaEntriesAreSkippedWithoutAGpuAndCollectivesWithoutEnough) {
  auto collective = entry("allreduce.py", "cuda");
  collective.world_size = 4;
  EvalOptions suite;
  suite.device = "cpu";
  const auto none = plan_suite({entry("a.py", "cuda"), collective}, suite, "m", "", 0);
  ASSERT_EQ(none.size(), 2u);
  EXPECT_FALSE(none[0].run);
  EXPECT_EQ(none[0].skipped_reason, "needs a GPU");
  EXPECT_EQ(none[1].skipped_reason, "needs a GPU");
  const auto two = plan_suite({entry("a.py", "cuda"), collective}, suite, "m", "", 2);
  ASSERT_TRUE(two[0].run);
  EXPECT_EQ(two[0].skipped_reason, "");
  EXPECT_FALSE(two[1].run);
  EXPECT_EQ(two[1].skipped_reason, "needs 4 GPUs, 2 here");
}

TEST(PlanSuite, OnlyDeviceLeavesOutTheEntriesThatRunElsewhere) {
  EvalOptions suite;
  suite.device = "cpu";
  const auto plan = plan_suite({entry("a.py", "cuda"), entry("b.py", "any"), entry("c.py", "cpu")},
                               suite, "m", "cpu", 0);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].entry.problem, "b.py");
  EXPECT_EQ(plan[1].entry.problem, "c.py");
}

TEST(DistinctBuilds, OneCompileOnlyBuildPerCandidateAndDevice) {
  auto run = [](const std::string& candidate, const std::string& device) {
    EvalOptions o;
    o.candidate = candidate;
    o.device = device;
    return o;
  };
  const auto builds = distinct_builds({run("/s/a.py", "cpu"), run("/s/x/../a.py", "cpu"),
                                       run("/s/a.py", "cuda"), run("/s/b.py", "cpu")});
  ASSERT_EQ(builds.size(), 3u);
  EXPECT_EQ(builds[0].candidate, fs::path("/s/a.py"));
  EXPECT_EQ(builds[0].device, "cpu");
  EXPECT_EQ(builds[1].device, "cuda");
  EXPECT_EQ(builds[2].candidate, fs::path("/s/b.py"));
  for (const auto& build : builds) {
    EXPECT_TRUE(build.compile_only);
  }
}

using ExpandProblemPaths = TempDirectory;

TEST_F(ExpandProblemPaths, ADirectoryGivesItsPythonFilesSortedAndAFileItself) {
  for (const char* name : {"level1/2_b.py", "level1/1_a.py", "level1/__init__.py",
                           "level1/notes.txt", "level1/deep/3_c.py"}) {
    fs::create_directories((m_dir / name).parent_path());
    std::ofstream(m_dir / name) << "";
  }
  const auto problems = expand_problem_paths({(m_dir / "level1").string(), "not/there.py"});
  const std::vector<fs::path> expected{m_dir / "level1/1_a.py", m_dir / "level1/2_b.py",
                                       m_dir / "level1/deep/3_c.py", "not/there.py"};
  EXPECT_EQ(problems, expected);
}

} // namespace
} // namespace kbench::sched
