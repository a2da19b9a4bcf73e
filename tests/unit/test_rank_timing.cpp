// pipeline/rank_group.hpp: spans_across_ranks, the sample of a collective call.
#include "pipeline/rank_group.hpp"

#include <gtest/gtest.h>

namespace kbench {
namespace {

PhaseOutcome rank(std::vector<double> starts_ns, std::vector<double> ends_ns) {
  PhaseOutcome outcome;
  outcome.ok = true;
  outcome.body = {{"starts_ns", starts_ns}, {"ends_ns", ends_ns}};
  return outcome;
}

TEST(SpansAcrossRanks, ASampleRunsFromTheEarliestStartToTheLatestEnd) {
  const auto spans =
      spans_across_ranks({rank({1000, 10000}, {3000, 12000}), rank({1500, 9000}, {5000, 11000})});
  ASSERT_EQ(spans.size(), 2U);
  EXPECT_DOUBLE_EQ(spans[0], 4.0); // 1000 ns to 5000 ns
  EXPECT_DOUBLE_EQ(spans[1], 3.0); // 9000 ns to 12000 ns
}

TEST(SpansAcrossRanks, ASampleSomeRankLacksIsLeftOut) {
  const auto spans = spans_across_ranks({rank({1000, 10000}, {3000, 12000}), rank({1500}, {5000})});
  ASSERT_EQ(spans.size(), 1U);
  EXPECT_DOUBLE_EQ(spans[0], 4.0);
}

TEST(SpansAcrossRanks, AnInvalidStampLeavesNoSampleOutOfPlace) {
  // A negative stamp is dropped from its rank's list, which then is one short.
  const auto spans =
      spans_across_ranks({rank({1000, 10000}, {3000, 12000}), rank({-1, 9000}, {5000, 11000})});
  ASSERT_EQ(spans.size(), 1U);
}

} // namespace
} // namespace kbench
