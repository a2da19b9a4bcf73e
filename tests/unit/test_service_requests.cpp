// Covers src/service/request.cpp and src/service/rewards.cpp: a request's fields and their
// errors (each names the field), the path rule (only beneath an allowed folder), sources written
// by their sha256, batches accepted whole or not at all, and the reward presets and formulas,
// which never pay a result that should not count.
#include "service/request.hpp"
#include "service/rewards.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kbench::service {
namespace {
namespace fs = std::filesystem;

class Requests : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("kbench-test-requests-" + std::to_string(::getpid()));
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "allowed");
    std::ofstream(m_dir / "allowed" / "problem.py") << "class Model: pass\n";
    std::ofstream(m_dir / "secret.py") << "KEY = 1\n";
    m_limits.allowed_paths = {fs::canonical(m_dir / "allowed")};
    m_limits.sources_dir = m_dir / "sources";
    m_limits.max_source_bytes = 1000;
  }
  void TearDown() override { fs::remove_all(m_dir); }
  ParsedRequests parse(const nlohmann::json& body) {
    return parse_requests(body.dump(), EvalOptions{}, m_limits);
  }
  nlohmann::json one(const nlohmann::json& options = nlohmann::json::object()) {
    return {{"problem", {{"path", (m_dir / "allowed" / "problem.py").string()}}},
            {"candidate", {{"source", "class ModelNew: pass\n"}}},
            {"options", options}};
  }
  fs::path m_dir;
  RequestLimits m_limits;
};

TEST_F(Requests, OneEvaluationBecomesOptionsOnTopOfTheDefaults) {
  const auto parsed = parse(one(
      {{"device", "cpu"}, {"trials", 3}, {"timing", false}, {"priority", 7}, {"reward", "kevin"}}));
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.evaluations.size(), 1u);
  const auto& request = parsed.evaluations[0];
  EXPECT_EQ(request.run.device, "cpu");
  EXPECT_EQ(request.run.trials, 3);
  EXPECT_TRUE(request.run.no_timing);
  EXPECT_EQ(request.priority, 7);
  ASSERT_TRUE(request.reward);
  EXPECT_EQ(request.reward->preset, "kevin");
  // The source was written by its sha256, readable by the workers' user.
  EXPECT_EQ(request.run.candidate.parent_path(), m_limits.sources_dir);
  EXPECT_EQ(request.run.candidate.extension(), ".py");
  EXPECT_TRUE(fs::exists(request.run.candidate));
  // The stored form reads back to the same run.
  const auto back = request_from_stored(stored_request(request));
  EXPECT_EQ(back.run.candidate, request.run.candidate);
  EXPECT_EQ(back.priority, 7);
  EXPECT_EQ(back.reward->preset, "kevin");
}

TEST_F(Requests, EveryMistakeNamesItsField) {
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {one({{"trials", "five"}}), "options.trials"},
      {one({{"trails", 5}}), "options.trails"},
      {one({{"trials", 0}}), "options.trials"},
      {one({{"reward", "fastest"}}), "options.reward"},
      {one({{"reward", {{"formula", {{"speedup", 1}, {"bonus", 2}}}}}}),
       "options.reward.formula.bonus"},
      {{{"problem", {{"path", "x"}}}}, "request"},
      {{{"evaluations", {one(), one({{"precision", "fp8"}})}}}, "evaluations[1].options"},
      {{{"evaluations", nlohmann::json::array()}}, "evaluations"},
  };
  for (const auto& [body, field] : cases) {
    const auto parsed = parse(body);
    EXPECT_TRUE(parsed.evaluations.empty()) << body.dump();
    EXPECT_NE(parsed.error.find(field), std::string::npos) << parsed.error << " / " << field;
  }
  EXPECT_NE(parse_requests("{not json", {}, m_limits).error.find("not JSON"), std::string::npos);
}

TEST_F(Requests, PathsAreReadOnlyBeneathTheAllowedFolders) {
  auto body = one();
  body["problem"]["path"] = (m_dir / "secret.py").string();
  EXPECT_NE(parse(body).error.find("not beneath a folder this service reads"), std::string::npos);
  body["problem"]["path"] = (m_dir / "allowed" / ".." / "secret.py").string();
  EXPECT_NE(parse(body).error.find("not beneath"), std::string::npos);
  m_limits.allowed_paths.clear();
  body["problem"]["path"] = (m_dir / "allowed" / "problem.py").string();
  EXPECT_NE(parse(body).error.find("reads no paths"), std::string::npos);
}

TEST_F(Requests, ASourceOverTheLimitOrOfAStrangeKindIsRefused) {
  auto body = one();
  body["candidate"]["source"] = std::string(2000, '#');
  EXPECT_NE(parse(body).error.find("candidate.source: 2000 bytes"), std::string::npos)
      << parse(body).error;
  body["candidate"] = {{"source", "x"}, {"filename", "kernel.sh"}};
  EXPECT_NE(parse(body).error.find("candidate.filename"), std::string::npos);
  body["candidate"] = {{"source", "x"}, {"path", "y"}};
  EXPECT_NE(parse(body).error.find("either"), std::string::npos);
}

EvalResult ok_result(double speedup, bool scored = true) {
  EvalResult r;
  r.status = Status::ok;
  r.timing.measured = true;
  r.timing.speedup = speedup;
  r.timing.speedup_ci = Interval{speedup * 0.98, speedup * 1.02};
  r.timing.speedup_scored = scored;
  r.timing.unscored_reason = scored ? "" : "zeros pass the tolerance";
  return r;
}

RewardSpec spec(const nlohmann::json& value) {
  auto decoded = reward_from_json(value, "reward");
  EXPECT_TRUE(decoded.value) << decoded.error;
  return decoded.value.value_or(RewardSpec{});
}

TEST(Rewards, ThePresetsFollowTheirTrainers) {
  EXPECT_DOUBLE_EQ(compute_reward(spec("kevin"), ok_result(2.0)).value, 2.3);
  EXPECT_DOUBLE_EQ(compute_reward(spec("drkernel"), ok_result(3.5)).value, 1.0);
  EXPECT_DOUBLE_EQ(compute_reward(spec("drkernel"), ok_result(1.6)).value, 0.6);
  EXPECT_DOUBLE_EQ(compute_reward(spec("drkernel"), ok_result(0.9)).value, -0.1);
  EXPECT_DOUBLE_EQ(compute_reward(spec("log2"), ok_result(4.0)).value, 2.0);
  EXPECT_DOUBLE_EQ(compute_reward(spec("log2"), ok_result(1000.0)).value, 3.0);
  EXPECT_DOUBLE_EQ(compute_reward(spec({{"preset", "correct"}}), ok_result(0.5)).value, 1.0);
  const auto reward = compute_reward(spec("kevin"), ok_result(2.0));
  ASSERT_TRUE(reward.speedup_ci95);
  EXPECT_DOUBLE_EQ(reward.speedup_ci95->low, 1.96);
}

TEST(Rewards, AResultThatShouldNotCountGetsTheFailureValue) {
  EvalResult failed;
  failed.status = Status::compile_error;
  EXPECT_DOUBLE_EQ(compute_reward(spec("drkernel"), failed).value, -0.5);
  failed.status = Status::impossible_timing; // a timing ruled invalid
  EXPECT_DOUBLE_EQ(compute_reward(spec("drkernel"), failed).value, -0.3);
  EXPECT_DOUBLE_EQ(compute_reward(spec("kevin"), failed).value, 0.0);
  EXPECT_DOUBLE_EQ(compute_reward(spec("log2"), failed).value, -3.0);
  // Correct, but the speedup is not a score (a trivial answer passes), or was not measured.
  const auto unscored = compute_reward(spec("kevin"), ok_result(50.0, false));
  EXPECT_DOUBLE_EQ(unscored.value, 0.0);
  EXPECT_NE(unscored.why.find("not a score"), std::string::npos);
  EvalResult untimed;
  untimed.status = Status::ok;
  untimed.timing.skipped_reason = "timing was turned off";
  EXPECT_DOUBLE_EQ(compute_reward(spec("kevin"), untimed).value, 0.0);
  EXPECT_DOUBLE_EQ(compute_reward(spec("correct"), untimed).value, 1.0);
}

TEST(Rewards, AFormulaCombinesItsTerms) {
  const auto formula = spec({{"formula",
                              {{"correct", 0.3},
                               {"log2_speedup", 0.3},
                               {"clip", {-1, 1}},
                               {"failure", -1},
                               {"failures", {{"compile_error", -2}}}}}});
  EXPECT_DOUBLE_EQ(compute_reward(formula, ok_result(2.0)).value, 0.6);
  EXPECT_DOUBLE_EQ(compute_reward(formula, ok_result(1e9)).value, 1.0);
  EvalResult failed;
  failed.status = Status::compile_error;
  EXPECT_DOUBLE_EQ(compute_reward(formula, failed).value, -2.0);
  for (const nlohmann::json& bad :
       {nlohmann::json{{"formula", {{"clip", {2, 1}}}}},
        nlohmann::json{{"formula", {{"failures", {{"nope", 1}}}}}},
        nlohmann::json{{"formula", {{"tiers", {{1}}}}}}, nlohmann::json(3)}) {
    EXPECT_FALSE(reward_from_json(bad, "reward").value) << bad.dump();
  }
}

} // namespace
} // namespace kbench::service
