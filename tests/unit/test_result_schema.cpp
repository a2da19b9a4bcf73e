#include "core/result.hpp"
#include "measure/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kbench;

TEST(ResultSchema, EveryStatusNameRoundTrips) {
  EXPECT_EQ(all_statuses().size(), 9u);
  for (Status status : all_statuses()) {
    const auto back = status_from_name(status_name(status));
    ASSERT_TRUE(back.has_value()) << status_name(status);
    EXPECT_EQ(*back, status);
  }
  EXPECT_FALSE(status_from_name("passed").has_value());
}

TEST(ResultSchema, DocumentCarriesSchemaStatusAndUnits) {
  EvalResult r;
  r.status = Status::ok;
  r.trials_requested = 1;
  TrialResult trial;
  trial.passed = true;
  OutputComparison output;
  output.name = "output.0";
  output.comparison.passed = true;
  output.comparison.numel = 4;
  output.comparison.max_abs_err = 1e-6;
  trial.outputs.push_back(output);
  r.trials.push_back(trial);
  TimingSide side;
  side.method = "cuda_event";
  side.samples_us = {10, 12};
  side.stats_us = measure::summarize(side.samples_us);
  r.timing.measured = true;
  r.timing.candidate = side;
  r.timing.reference = side;
  r.timing.speedup = 1.0;

  const nlohmann::json doc = to_json(r);
  EXPECT_EQ(doc["schema"], "kbench.eval/1");
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["correctness"]["trials_passed"], 1);
  EXPECT_DOUBLE_EQ(doc["correctness"]["max_abs_err"].get<double>(), 1e-6);
  const auto& stats = doc["timing"]["candidate"]["stats"];
  for (const char* key :
       {"median_us", "mean_us", "std_us", "min_us", "max_us", "p10_us", "p90_us", "noise_pct"}) {
    EXPECT_TRUE(stats.contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(stats["median_us"].get<double>(), 11.0);
  EXPECT_DOUBLE_EQ(doc["timing"]["speedup"].get<double>(), 1.0);
}

TEST(ResultSchema, NonFiniteNumbersBecomeNullNotFakeValues) {
  EvalResult r;
  r.status = Status::incorrect;
  TrialResult trial;
  OutputComparison output;
  output.comparison.numel = 1;
  output.comparison.max_abs_err = std::numeric_limits<double>::infinity();
  output.comparison.first_mismatches.push_back({{0}, std::nan(""), 1.0});
  trial.outputs.push_back(output);
  r.trials.push_back(trial);
  const nlohmann::json doc = to_json(r);
  const auto& out = doc["correctness"]["trials"][0]["outputs"][0];
  EXPECT_TRUE(out["max_abs_err"].is_null());
  EXPECT_TRUE(out["first_mismatches"][0]["candidate"].is_null());
  EXPECT_EQ(out["first_mismatches"][0]["reference"], 1.0);
  // The dump must be valid JSON (nlohmann would write NaN as null anyway, but the intent is ours).
  EXPECT_NO_THROW(nlohmann::json::parse(doc.dump()));
}

TEST(ResultSchema, FailedResultWithoutTrialsHasNullErrors) {
  EvalResult r;
  r.status = Status::compile_error;
  r.message = "did not compile";
  const nlohmann::json doc = to_json(r);
  EXPECT_EQ(doc["message"], "did not compile");
  EXPECT_TRUE(doc["correctness"]["max_abs_err"].is_null());
  EXPECT_TRUE(doc["timing"]["speedup"].is_null());
}
