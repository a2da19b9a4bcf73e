// Covers src/report/suite_progress.cpp: the progress line's counts, rate and ETA.
#include "report/suite_progress.hpp"

#include <gtest/gtest.h>

namespace kbench::report {
namespace {

TEST(SuiteProgress, NoRateOrEtaBeforeTheFirstResult) {
  EXPECT_EQ(format_progress({0, 40, 0, 0, 3.0}), "0/40 evaluated, 0 failed");
}

TEST(SuiteProgress, RateAndEtaFromTheResultsSoFar) {
  // 12 in 300 s: 2.4 a minute, 28 left at 25 s each.
  EXPECT_EQ(format_progress({12, 40, 3, 1, 300.0}),
            "12/40 evaluated, 2.4/min, ETA 11 min 40 s, 3 failed (1 not as expected)");
  EXPECT_EQ(format_progress({2, 3, 0, 0, 10.0}), "2/3 evaluated, 12.0/min, ETA 5 s, 0 failed");
  EXPECT_EQ(format_progress({1, 200, 0, 0, 60.0}),
            "1/200 evaluated, 1.0/min, ETA 3 h 19 min, 0 failed");
}

TEST(SuiteProgress, NoEtaOnceDone) {
  EXPECT_EQ(format_progress({5, 5, 0, 0, 60.0}), "5/5 evaluated, 5.0/min, 0 failed");
}

} // namespace
} // namespace kbench::report
