// pipeline/static_check.hpp: reading the static_check op's verdicts.
#include "pipeline/static_check.hpp"

#include <gtest/gtest.h>

namespace kbench {
namespace {

const nlohmann::json kAnswer = nlohmann::json::parse(R"({
  "ok": true, "backend": "cuda", "rule_set": "default",
  "verdicts": [
    {"rule": "fallback", "severity": "reject", "message": "calls torch", "line": 26},
    {"rule": "lazy-output", "severity": "warn", "message": "a view", "line": null},
    {"rule": "patching", "severity": "reject", "message": "patches torch", "line": null}
  ]})");

TEST(StaticCheck, VerdictsKeepTheirOrderFieldsAndLines) {
  const auto verdicts = parse_verdicts(kAnswer);
  ASSERT_EQ(verdicts.size(), 3U);
  EXPECT_EQ(verdicts[0].rule, "fallback");
  EXPECT_EQ(verdicts[0].severity, "reject");
  EXPECT_EQ(verdicts[0].message, "calls torch");
  EXPECT_EQ(verdicts[0].line, 26);
  EXPECT_FALSE(verdicts[1].line.has_value());
}

TEST(StaticCheck, AVerdictWithoutASeverityIsAWarningAndALineThatIsNoIntegerIsNone) {
  const auto verdicts = parse_verdicts(
      nlohmann::json::parse(R"({"verdicts": [{"rule": "x", "message": "m", "line": "7"}]})"));
  ASSERT_EQ(verdicts.size(), 1U);
  EXPECT_EQ(verdicts[0].severity, "warn");
  EXPECT_FALSE(verdicts[0].line.has_value());
}

TEST(StaticCheck, AnAnswerWithoutVerdictsHasNone) {
  EXPECT_TRUE(parse_verdicts(nlohmann::json::object()).empty());
  EXPECT_TRUE(parse_verdicts(nlohmann::json()).empty());
}

TEST(StaticCheck, RejectionsListTheRejectingVerdictsWithTheirLines) {
  EXPECT_EQ(rejections(parse_verdicts(kAnswer)),
            "line 26 fallback: calls torch; patching: patches torch");
}

TEST(StaticCheck, WarningsAloneRejectNothing) {
  EXPECT_EQ(rejections({{"lazy-output", "warn", "a view", 3}}), "");
}

} // namespace
} // namespace kbench
