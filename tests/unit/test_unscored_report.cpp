// The summary and the suite table say when a speedup is not scored (timing.speedup_scored).
#include "report/suite_table.hpp"
#include "report/summary.hpp"

#include <gtest/gtest.h>

namespace kbench::report {
namespace {

EvalResult timed(bool scored) {
  EvalResult r;
  r.status = Status::ok;
  r.problem_path = "/p/level2/23_conv3d_groupnorm_mean.py";
  r.candidate_path = "/c/zeros.py";
  r.device = "cpu";
  r.timing.measured = true;
  r.timing.speedup = 106.0;
  if (!scored) {
    r.timing.speedup_scored = false;
    r.timing.unscored_reason = "a trivial answer passes this problem: zeros pass";
  }
  return r;
}

TEST(UnscoredReport, TheSummarySaysWhyTheSpeedupIsNotScored) {
  const std::string text = format_summary(timed(false));
  EXPECT_NE(text.find("106.00x vs eager"), std::string::npos) << text;
  EXPECT_NE(text.find("score       speedup not scored: a trivial answer passes this problem"),
            std::string::npos)
      << text;
  EXPECT_EQ(format_summary(timed(true)).find("not scored"), std::string::npos);
}

TEST(UnscoredReport, TheSuiteTableMarksTheSpeedup) {
  std::vector<SuiteRow> rows(2);
  rows[0].result = timed(false);
  rows[1].result = timed(true);
  const std::string table = format_suite_table(rows);
  EXPECT_NE(table.find("106.00x (not scored)"), std::string::npos) << table;
  EXPECT_EQ(table.find("not scored"), table.rfind("not scored")) << table; // the first row only
}

} // namespace
} // namespace kbench::report
