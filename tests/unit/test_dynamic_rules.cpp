// pipeline/dynamic_rules.hpp: the rule set's own-kernel-share rule, read from the static check's
// answer and judged on an evaluation's timing.
#include "pipeline/dynamic_rules.hpp"

#include <gtest/gtest.h>

namespace kbench {
namespace {

const nlohmann::json kAnswer = nlohmann::json::parse(R"({
  "ok": true, "backend": "cuda", "rule_set": "default", "verdicts": [],
  "dynamic_rules": [{"rule": "own-kernel-share", "severity": "reject", "min_share": 0.01,
                     "rule_set": "default", "own_kernels": ["add_bias_kernel"]}]})");

TimingInfo traced(std::optional<double> share, const std::string& method = "cupti") {
  TimingInfo timing;
  timing.measured = true;
  timing.candidate = TimingSide{};
  timing.candidate->method = method;
  timing.candidate->own_kernel_share = share;
  timing.speedup = 3.0;
  timing.speedup_ci = Interval{2.9, 3.1};
  return timing;
}

OwnKernelShareRule rule() {
  return *parse_own_kernel_share(kAnswer);
}

TEST(DynamicRules, TheRuleIsReadFromTheStaticCheckAnswer) {
  const auto r = parse_own_kernel_share(kAnswer);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->severity, "reject");
  EXPECT_DOUBLE_EQ(r->min_share, 0.01);
  EXPECT_EQ(r->rule_set, "default");
  EXPECT_EQ(r->own_kernels, std::vector<std::string>{"add_bias_kernel"});
}

TEST(DynamicRules, NoRuleWithoutDynamicRulesOrWithTheRuleOff) {
  EXPECT_FALSE(parse_own_kernel_share(nlohmann::json::parse(R"({"verdicts": []})")));
  EXPECT_FALSE(parse_own_kernel_share(nlohmann::json()));
  EXPECT_FALSE(parse_own_kernel_share(nlohmann::json::parse(
      R"({"dynamic_rules": [{"rule": "own-kernel-share", "severity": "off"}]})")));
}

TEST(DynamicRules, ATenthOfAPercentIsRejectedAndTheMessageNamesRuleShareAndThreshold) {
  const auto judged = judge_own_kernel_share(rule(), traced(0.0012), true, 1);
  EXPECT_TRUE(judged.not_run.empty());
  ASSERT_TRUE(judged.verdict.has_value());
  EXPECT_EQ(judged.verdict->rule, "own-kernel-share");
  EXPECT_EQ(judged.verdict->severity, "reject");
  const std::string& m = judged.verdict->message;
  EXPECT_NE(m.find("(add_bias_kernel) took 0.12 %"), std::string::npos) << m;
  EXPECT_NE(m.find("threshold of 1 % (rule set default)"), std::string::npos) << m;
}

TEST(DynamicRules, AShareAtOrAboveTheThresholdPasses) {
  EXPECT_FALSE(judge_own_kernel_share(rule(), traced(0.01), true, 1).verdict);
  EXPECT_FALSE(judge_own_kernel_share(rule(), traced(0.12), true, 1).verdict);
}

TEST(DynamicRules, AWarningRuleSetWarns) {
  auto r = rule();
  r.severity = "warn";
  const auto judged = judge_own_kernel_share(r, traced(0.001), true, 1);
  ASSERT_TRUE(judged.verdict.has_value());
  EXPECT_EQ(judged.verdict->severity, "warn");
}

TEST(DynamicRules, WhereTheShareIsUnknownTheRuleSaysWhyItDidNotRun) {
  const auto cpu = judge_own_kernel_share(rule(), traced(std::nullopt, "perf_counter"), false, 1);
  EXPECT_FALSE(cpu.verdict);
  EXPECT_NE(cpu.not_run.find("did not run: it needs CUPTI"), std::string::npos) << cpu.not_run;
  const auto events = judge_own_kernel_share(rule(), traced(std::nullopt, "cuda_event"), true, 1);
  EXPECT_NE(events.not_run.find("not traced by CUPTI"), std::string::npos) << events.not_run;
  EXPECT_NE(judge_own_kernel_share(rule(), traced(0.5), true, 2).not_run.find("several ranks"),
            std::string::npos);
  TimingInfo untimed;
  untimed.skipped_reason = "timing was turned off (--no-timing)";
  EXPECT_NE(judge_own_kernel_share(rule(), untimed, true, 1).not_run.find("--no-timing"),
            std::string::npos);
  auto nameless = rule();
  nameless.own_kernels.clear();
  EXPECT_NE(judge_own_kernel_share(nameless, traced(0.0), true, 1).not_run.find("no kernel"),
            std::string::npos);
}

TEST(DynamicRules, ARejectJoinsTheVerdictsAndDropsTheSpeedupButKeepsTheTimes) {
  EvalResult result;
  result.device = "cuda:0";
  result.timing = traced(0.001);
  const std::string rejected = apply_own_kernel_share(rule(), result);
  EXPECT_EQ(rejected.rfind("own-kernel-share: ", 0), 0u) << rejected;
  ASSERT_EQ(result.static_check.size(), 1u);
  EXPECT_EQ(result.static_check[0].rule, "own-kernel-share");
  EXPECT_FALSE(result.timing.speedup);
  EXPECT_FALSE(result.timing.speedup_ci);
  EXPECT_TRUE(result.timing.candidate.has_value());
}

TEST(DynamicRules, OnTheCpuTheResultCarriesAWarningAndNothingIsRejected) {
  EvalResult result;
  result.device = "cpu";
  result.timing = traced(std::nullopt, "perf_counter");
  EXPECT_EQ(apply_own_kernel_share(rule(), result), "");
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("own-kernel-share (rule set default) did not run"),
            std::string::npos);
  EXPECT_TRUE(result.timing.speedup.has_value());
}

} // namespace
} // namespace kbench
