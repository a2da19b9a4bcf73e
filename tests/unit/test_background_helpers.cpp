#include "sched/background_helpers.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace kbench::sched {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A helper that writes its start, sleeps, and writes its end: run two at once and the lines of
// one land between the other's.
std::vector<std::string> marking(const fs::path& log, int n, const std::string& sleep_s) {
  return {"/bin/sh", "-c",
          "echo start " + std::to_string(n) + " >> '" + log.string() + "'; sleep " + sleep_s +
              "; echo end " + std::to_string(n) + " >> '" + log.string() + "'"};
}

TEST(BackgroundHelpers, RunOneAtATimeInTheOrderAskedAndAreWaitedFor) {
  const fs::path dir =
      fs::temp_directory_path() / ("kbench-test-helpers-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path log = dir / "log";
  const int before = wait_for_background_helpers();
  std::mutex mutex;
  std::vector<int> exit_codes;
  for (int n = 1; n <= 3; ++n) {
    run_helper_in_background(marking(log, n, "0.2"), {"PATH=/usr/bin:/bin"},
                             std::chrono::seconds(30), [&](const HelperOutcome& outcome) {
                               std::lock_guard lock(mutex);
                               exit_codes.push_back(outcome.exit_code);
                             });
  }
  // Queued without waiting: the caller goes on while the first still sleeps.
  EXPECT_EQ(read_all(log).find("end 3"), std::string::npos);
  EXPECT_EQ(unfinished_background_helpers(), 3); // two queued, one running
  EXPECT_EQ(wait_for_background_helpers(), before + 3);
  EXPECT_EQ(unfinished_background_helpers(), 0);
  EXPECT_EQ(read_all(log), "start 1\nend 1\nstart 2\nend 2\nstart 3\nend 3\n");
  EXPECT_EQ(exit_codes, (std::vector<int>{0, 0, 0}));
  fs::remove_all(dir);
}

TEST(BackgroundHelpers, AHelperPastItsDeadlineIsKilledAndTheNextStillRuns) {
  const fs::path dir =
      fs::temp_directory_path() / ("kbench-test-helpers-deadline-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path log = dir / "log";
  std::vector<HelperOutcome> outcomes;
  run_helper_in_background(marking(log, 1, "30"), {"PATH=/usr/bin:/bin"},
                           std::chrono::milliseconds(300),
                           [&](const HelperOutcome& outcome) { outcomes.push_back(outcome); });
  run_helper_in_background(marking(log, 2, "0"), {"PATH=/usr/bin:/bin"}, std::chrono::seconds(30),
                           [&](const HelperOutcome& outcome) { outcomes.push_back(outcome); });
  const auto start = std::chrono::steady_clock::now();
  wait_for_background_helpers();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].timed_out);
  EXPECT_FALSE(outcomes[1].timed_out);
  EXPECT_EQ(outcomes[1].exit_code, 0);
  EXPECT_EQ(read_all(log), "start 1\nstart 2\nend 2\n");
  fs::remove_all(dir);
}

} // namespace
} // namespace kbench::sched
