// Tests for src/core/options.{hpp,cpp}: the canonical JSON form of EvalOptions, its identity part,
// and the problems validate reports.
#include "core/options.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace kbench;

namespace {

// Every field of the canonical form set to something other than its default.
EvalOptions full_options() {
  EvalOptions o;
  o.problem = "/p/1_relu.py";
  o.candidate = "/c/relu.py";
  o.device = "cuda";
  o.gpu = 3;
  o.world_size = 4;
  o.trials = 7;
  o.seed = 1234567890123ULL;
  o.variant = "popcorn2";
  o.precision = "bf16";
  o.atol = 0.25;
  o.rtol = 0.125;
  o.compile_timeout = std::chrono::seconds(900);
  o.run_timeout = std::chrono::seconds(120);
  o.no_timing = true;
  o.warmup = 9;
  o.iterations = 50;
  o.min_samples = 20;
  o.timing_precision = 0.02;
  o.min_time = 1.5;
  o.timing_timeout = 30;
  o.throttle_recovery = 0.25;
  o.warm = true;
  o.no_compile_baseline = true;
  o.no_reference_cache = true;
  o.profile = "full";
  o.roofline = "/out/roofline.svg";
  o.backend = "triton";
  o.rules = "partial-torch";
  o.python = "/venv/bin/python";
  o.cache_dir = "/cache";
  o.keep_scratch = true;
  return o;
}

std::set<std::string> keys_of(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) {
    keys.insert(key);
  }
  return keys;
}

std::string error_for(const nlohmann::json& document) {
  const auto decoded = options_from_json(document);
  EXPECT_FALSE(decoded.value.has_value()) << document.dump();
  return decoded.error;
}

} // namespace

TEST(Options, EveryFieldSurvivesARoundTrip) {
  const nlohmann::json written = to_json(full_options());
  const auto decoded = options_from_json(written);
  ASSERT_TRUE(decoded.value.has_value()) << decoded.error;
  EXPECT_EQ(to_json(*decoded.value), written);
  // No field keeps its default, so a field the reader dropped would show above.
  const nlohmann::json defaults = to_json(EvalOptions{});
  for (const auto& [key, value] : written.items()) {
    EXPECT_NE(value, defaults[key]) << key;
  }
  const EvalOptions& o = *decoded.value;
  EXPECT_EQ(o.seed, 1234567890123ULL);
  EXPECT_EQ(o.compile_timeout, std::chrono::seconds(900));
  EXPECT_EQ(o.atol, 0.25);
  EXPECT_EQ(o.roofline, "/out/roofline.svg");
}

TEST(Options, TheTextOfTheDocumentReadsBackTheSame) {
  const std::string text = to_json(full_options()).dump();
  const auto decoded = options_from_json(nlohmann::json::parse(text));
  ASSERT_TRUE(decoded.value.has_value()) << decoded.error;
  EXPECT_EQ(to_json(*decoded.value).dump(), text);
}

TEST(Options, KeysAreTheFlagNamesWithUnderscores) {
  // clang-format off
  const std::set<std::string> flags = {
      "problem", "candidate", "device", "gpu", "world_size", "trials", "seed", "variant",
      "precision", "atol", "rtol", "compile_timeout", "run_timeout", "no_timing", "warmup",
      "iterations", "min_samples", "timing_precision", "min_time", "timing_timeout",
      "throttle_recovery", "warm", "no_compile_baseline", "no_reference_cache", "profile",
      "roofline", "backend", "rules", "python", "cache_dir", "keep_scratch"};
  // clang-format on
  EXPECT_EQ(keys_of(to_json(EvalOptions{})), flags);
}

TEST(Options, DurationsAreWholeSecondsAndUnsetTolerancesAreNull) {
  const nlohmann::json defaults = to_json(EvalOptions{});
  EXPECT_TRUE(defaults["compile_timeout"].is_number_integer());
  EXPECT_EQ(defaults["compile_timeout"], 600);
  EXPECT_EQ(defaults["run_timeout"], 300);
  EXPECT_TRUE(defaults["atol"].is_null());
  EXPECT_TRUE(defaults["rtol"].is_null());
}

TEST(Options, TheHostsOwnSettingsAreNotPartOfTheForm) {
  EvalOptions o;
  o.compile_only = true;
  o.output_keep_bytes = 1;
  const nlohmann::json document = to_json(o);
  EXPECT_FALSE(document.contains("compile_only"));
  EXPECT_FALSE(document.contains("output_keep_bytes"));
  EXPECT_EQ(document, to_json(EvalOptions{}));
}

TEST(Options, AnEmptyObjectGivesTheDefaults) {
  const auto decoded = options_from_json(nlohmann::json::object());
  ASSERT_TRUE(decoded.value.has_value()) << decoded.error;
  EXPECT_EQ(to_json(*decoded.value), to_json(EvalOptions{}));
}

TEST(Options, APartialDocumentChangesOnlyItsFields) {
  const auto decoded = options_from_json({{"trials", 9}, {"min_time", 2}, {"atol", nullptr}});
  ASSERT_TRUE(decoded.value.has_value()) << decoded.error;
  nlohmann::json expected = to_json(EvalOptions{});
  expected["trials"] = 9;
  expected["min_time"] = 2.0;
  EXPECT_EQ(to_json(*decoded.value), expected);
}

TEST(Options, AFieldOfTheWrongTypeIsNamedWithWhatWasExpected) {
  EXPECT_EQ(error_for({{"trials", "five"}}), R"(options.trials: expected an integer, got "five")");
  EXPECT_EQ(error_for({{"trials", 2.5}}), "options.trials: expected an integer, got 2.5");
  EXPECT_EQ(error_for({{"trials", 1LL << 40}}),
            "options.trials: expected an integer from -2147483648 to 2147483647, got "
            "1099511627776");
  EXPECT_EQ(error_for({{"seed", -1}}), "options.seed: expected a non-negative integer, got -1");
  EXPECT_EQ(error_for({{"no_timing", 1}}), "options.no_timing: expected true or false, got 1");
  EXPECT_EQ(error_for({{"min_time", "1s"}}), R"(options.min_time: expected a number, got "1s")");
  EXPECT_EQ(error_for({{"min_time", nullptr}}), "options.min_time: expected a number, got null");
  EXPECT_EQ(error_for({{"atol", "tight"}}), R"(options.atol: expected a number, got "tight")");
  EXPECT_EQ(error_for({{"device", 0}}), "options.device: expected a string, got 0");
  EXPECT_EQ(error_for({{"rules", false}}), "options.rules: expected a path (a string), got false");
  EXPECT_EQ(error_for({{"compile_timeout", 1.5}}),
            "options.compile_timeout: expected an integer (seconds), got 1.5");
  EXPECT_EQ(error_for(nlohmann::json::array({1, 2})), "options: expected an object, got [1,2]");
}

TEST(Options, AnUnknownFieldIsNamed) {
  EXPECT_EQ(error_for({{"trials", 3}, {"trails", 3}}),
            "options.trails: unknown field; expected one of the eval flags' names with "
            "underscores (min_time for --min-time)");
  EXPECT_NE(error_for({{"compile_only", true}}).find("options.compile_only: unknown field"),
            std::string::npos);
}

TEST(Options, ErrorsNameTheDocumentTheCallerGives) {
  const auto decoded = options_from_json({{"warm", "yes"}}, "request.options");
  EXPECT_EQ(decoded.error, R"(request.options.warm: expected true or false, got "yes")");
}

TEST(Options, LongValuesAreShortenedInErrors) {
  const std::string error = error_for({{"gpu", std::string(200, 'x')}});
  EXPECT_LT(error.size(), 120u);
  EXPECT_NE(error.find("..."), std::string::npos);
}

TEST(Options, TheIdentityLeavesOutWhereTheRunHappensAndWhereFilesGo) {
  const nlohmann::json identity = identity_json(full_options());
  for (const char* key : {"problem", "candidate", "gpu", "python", "cache_dir", "keep_scratch",
                          "roofline", "no_reference_cache"}) {
    EXPECT_FALSE(identity.contains(key)) << key;
  }
  for (const char* key : {"device", "trials", "seed", "precision", "atol", "profile", "rules",
                          "run_timeout", "min_time", "warm", "backend"}) {
    EXPECT_TRUE(identity.contains(key)) << key;
  }
  EvalOptions moved = full_options();
  moved.problem = "/elsewhere/1_relu.py";
  moved.gpu = 0;
  moved.cache_dir = "/tmp/cache";
  moved.keep_scratch = false;
  moved.no_reference_cache = !moved.no_reference_cache;
  EXPECT_EQ(identity_json(moved), identity);
  moved.seed = 1;
  EXPECT_NE(identity_json(moved), identity);
}

TEST(Options, TheDefaultsAreValid) {
  EXPECT_TRUE(validate(EvalOptions{}).empty());
  EXPECT_TRUE(validate(full_options()).empty());
}

TEST(Options, ValidateKeepsTheFlagsWording) {
  EvalOptions o;
  o.device = "tpu";
  o.trials = 0;
  o.variant = "odd";
  o.precision = "fp8";
  o.profile = "everything";
  o.atol = -1;
  o.run_timeout = std::chrono::seconds(0);
  o.warmup = -1;
  o.timing_precision = 0;
  o.gpu = -1;
  o.world_size = 65;
  EXPECT_EQ(validate(o), (std::vector<std::string>{
                             "--device must be cuda, cpu or auto, not 'tpu'",
                             "--trials must be between 1 and 1000",
                             "--variant must be one of standard, popcorn, popcorn2, not 'odd'",
                             "--precision must be fp32, fp16 or bf16, not 'fp8'",
                             "--profile must be sol or full, not 'everything'",
                             "--atol and --rtol must not be negative",
                             "--compile-timeout and --run-timeout must be positive",
                             "--iterations and --warmup must not be negative",
                             "--min-samples must be at least 1, --timing-precision and "
                             "--timing-timeout positive and --min-time not negative",
                             "--gpu must not be negative",
                             "--world-size must be between 1 and 64 (0: the problem's "
                             "KBENCH_WORLD_SIZE)",
                         }));
  EvalOptions chart;
  chart.roofline = "r.svg";
  EXPECT_EQ(validate(chart), (std::vector<std::string>{"--roofline needs --profile sol or "
                                                       "--profile full (the chart plots "
                                                       "counters)"}));
}

TEST(Options, EachProblemNamesTheFieldsThatBrokeItsRule) {
  EvalOptions o;
  o.trials = 0;
  o.rtol = -1;
  o.warmup = -1;
  o.min_time = -1;
  o.timing_timeout = 0;
  std::vector<std::vector<std::string>> fields;
  for (const auto& problem : find_option_problems(o)) {
    fields.push_back(problem.fields);
  }
  EXPECT_EQ(fields, (std::vector<std::vector<std::string>>{
                        {"trials"}, {"rtol"}, {"warmup"}, {"timing_timeout", "min_time"}}));
}
