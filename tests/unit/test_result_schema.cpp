// Tests for src/core/result.{hpp,cpp} and src/core/result_from_json.cpp: the kbench.eval/1
// document, written and read back.
#include "core/json_io.hpp"
#include "core/result.hpp"
#include "measure/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kbench;

TEST(ResultSchema, EveryStatusNameRoundTrips) {
  EXPECT_EQ(all_statuses().size(), 10u);
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

namespace {

// Every field of every section set to something other than its default, so that a field
// result_from_json drops shows as a difference between the two documents.
EvalResult full_result() {
  EvalResult r;
  r.kbench_version = "0.9.1";
  r.status = Status::incorrect;
  r.message = "2 of 6 trials failed";
  r.log = "Traceback ...";
  r.problem_path = "/p/1_relu.py";
  r.problem_sha256 = "aa11";
  r.candidate_path = "/c/relu.py";
  r.candidate_sha256 = "bb22";
  r.device = "cuda:1";
  r.device_name = "NVIDIA H200";
  r.gpu_sharing = "trials beside up to 3 other evaluations on this GPU";
  r.variant = "popcorn";
  r.precision = "bf16";
  r.world_size = 2;
  r.seed = 1234567890123ULL;
  r.trials_requested = 5;
  r.atol_override = 0.25;
  r.rtol_override = 0.125;
  r.warnings = {"process limit off", "problem failed its check"};
  r.static_check = {{"torch_compute_in_forward", "warn", "calls torch.relu", 12},
                    {"no_kernel", "reject", "no kernel", std::nullopt}};
  r.compile = {true, true, 5.5, "/cache/ext", "error: x", "the whole log", "", ""};

  TrialResult trial;
  trial.index = 3;
  trial.seed = 4000000000u;
  trial.held_out = true;
  trial.input_shapes = {{"x", {16, 16384}}};
  trial.passed = false;
  trial.failure = "output.0: 3 elements differ";
  OutputComparison output;
  output.name = "rank1/output.0";
  output.comparison.passed = false;
  output.comparison.failure = "3 elements differ";
  output.comparison.tolerance = {1e-4, 2e-4};
  output.comparison.numel = 262144;
  output.comparison.mismatches = 3;
  output.comparison.max_abs_err = 0.5;
  output.comparison.mean_abs_err = 0.001;
  output.comparison.max_rel_err = 0.75;
  output.comparison.mean_rel_err = 0.002;
  output.comparison.first_mismatches = {{{0, 7}, 1.5, 1.0}, {{2, 9}, -3.0, 2.5}};
  trial.outputs = {output, output};
  r.trials = {trial, trial};
  r.trials[1].index = 4;
  r.trials[1].passed = true;

  TimingSide side;
  side.method = "cupti";
  side.l2_flush = true;
  side.samples_us = {10.5, 11.25, 12.0};
  side.stats_us = {3, 11.25, 11.25, 0.75, 10.5, 12.0, 10.65, 11.85, 0.0667};
  side.host_stats_us = {3, 15.5, 15.75, 0.5, 15.0, 16.5, 15.1, 16.4, 0.031};
  side.stop_reason = "timeout: noise 0.9 % > 0.5 %";
  side.tracing = "cupti";
  side.tracing_overhead_us = 0.4;
  side.blocks = 7;
  side.throttled_samples_dropped = 2;
  side.min_sm_mhz = 1500;
  side.max_sm_mhz = 1980;
  side.default_sm_mhz = 1755;
  side.min_mem_mhz = 2600;
  side.max_mem_mhz = 2619;
  side.clock_reasons = {"sw_power_cap", "hw_slowdown"};
  side.launches_per_call = 2.5;
  side.kernels_per_call = {{"relu_kernel", 1}, {"copy", 2}};
  side.own_kernel_share = 0.875;
  side.peak_memory_bytes = 1LL << 33;
  side.raw_allocated_bytes = 4096;
  side.compile_s = 12.5;
  side.per_rank_us = {side.stats_us, side.host_stats_us};
  r.timing.measured = true;
  r.timing.skipped_reason = "not skipped, but filled";
  r.timing.reference = side;
  r.timing.candidate = side;
  r.timing.candidate->method = "cuda_event";
  r.timing.reference_compiled = side;
  r.timing.reference_compiled->method = "barrier_to_last_rank";
  r.timing.speedup = 1.75;
  r.timing.speedup_ci = Interval{1.5, 2.0};
  r.timing.speedup_scored = false;
  r.timing.unscored_reason = "zeros pass the tolerance for output.0 on all 3 trials";
  r.timing.speedup_vs_compiled = 0.9;
  r.timing.speedup_vs_compiled_ci = Interval{0.8, 1.0};
  r.timing.compiled_skipped_reason = "filled anyway";
  r.timing.memory_ratio = 0.5;
  r.timing.fusion_ratio = 2.0;
  r.timing.spot_checks = {"call 0 (pool set 0): passed"};
  r.timing.flags = {{"launch_bound", "mostly launch overhead"}, {"throttled", "clock low"}};
  r.timing.wall_s = 3.25;

  CountersInfo counters;
  counters.profile = "full";
  counters.skipped_reason = "filled";
  counters.tool = "ncu 2025.3.1";
  counters.gpu = {{"name", "H200"}, {"dram_gbps", 4800}};
  counters.candidate.collected = true;
  counters.candidate.call = {{"kernels", {{{"name", "relu_kernel"}, {"own", true}}}},
                             {"call", {{"fields", {{"dram_gbps", {{"value", 3.5}}}}}}}};
  counters.candidate.kernels = 1;
  counters.candidate.wall_s = 8.5;
  counters.reference.collected = false;
  counters.reference.reason = "ncu failed";
  counters.reference.wall_s = 1.5;
  counters.sol_score = 0.625;
  counters.physical_limit_fraction = 0.75;
  counters.physical_limit_detail = "dram floor";
  counters.roofline_svg = "/out/roofline.svg";
  counters.candidate_energy = {0.002, 650.0, 1000, 2.5, ""};
  counters.reference_energy = {std::nullopt, std::nullopt, 10, 0.5, "too short"};
  counters.energy_ratio = 1.25;
  counters.wall_s = 20.5;
  r.counters = counters;

  r.phases = {{"compile", 5.25, "exited with code 0", "out", "err"},
              {"reference.rank1", 2.5, "killed by SIGSEGV", "", "segfault"}};
  r.sandbox = {{"network", true, "own namespace"}, {"processes", false, "off: root"}};
  r.started_at = "2026-12-01T09:30:00Z";
  r.wall_s = 42.5;
  r.python = "3.11.2";
  r.torch_version = "2.11.0";
  return r;
}

EvalResult read_back(const nlohmann::json& document) {
  const auto decoded = result_from_json(document);
  EXPECT_TRUE(decoded.value.has_value()) << decoded.error;
  return decoded.value.value_or(EvalResult{});
}

} // namespace

TEST(ResultSchema, ReadingAFullDocumentBackWritesTheSameDocument) {
  const nlohmann::json written = to_json(full_result());
  const nlohmann::json again = to_json(read_back(written));
  EXPECT_EQ(again, written) << "diff: " << nlohmann::json::diff(written, again).dump(1);
  EXPECT_EQ(again.dump(), written.dump());
}

TEST(ResultSchema, ReadingTheTextOfAFullDocumentBackWritesTheSameText) {
  // Through text, numbers come back as unsigned or float where the writer had int or double.
  const std::string text = to_json(full_result()).dump(2);
  EXPECT_EQ(to_json(read_back(nlohmann::json::parse(text))).dump(2), text);
}

TEST(ResultSchema, ReadingKeepsTheTypedFields) {
  const EvalResult r = read_back(to_json(full_result()));
  EXPECT_EQ(r.status, Status::incorrect);
  EXPECT_EQ(r.kbench_version, "0.9.1");
  EXPECT_EQ(r.seed, 1234567890123ULL);
  EXPECT_EQ(r.trials_requested, 5);
  ASSERT_EQ(r.trials.size(), 2u);
  EXPECT_EQ(r.trials[0].seed, 4000000000u);
  EXPECT_EQ(r.trials[0].outputs[1].comparison.first_mismatches[1].index,
            (std::vector<std::int64_t>{2, 9}));
  ASSERT_TRUE(r.timing.candidate.has_value());
  EXPECT_EQ(r.timing.candidate->method, "cuda_event");
  EXPECT_DOUBLE_EQ(r.timing.candidate->stats_us.noise, 0.0667);
  EXPECT_EQ(r.timing.candidate->clock_reasons.count("hw_slowdown"), 1u);
  EXPECT_EQ(r.timing.candidate->peak_memory_bytes, 1LL << 33);
  ASSERT_TRUE(r.timing.speedup_ci.has_value());
  EXPECT_DOUBLE_EQ(r.timing.speedup_ci->high, 2.0);
  ASSERT_TRUE(r.counters.has_value());
  EXPECT_EQ(r.counters->candidate.kernels, 1u);
  EXPECT_EQ(r.counters->reference.reason, "ncu failed");
  EXPECT_FALSE(r.counters->reference_energy.joules_per_call.has_value());
  EXPECT_EQ(r.sandbox[1].detail, "off: root");
  EXPECT_EQ(r.phases[1].stderr_text, "segfault");
}

TEST(ResultSchema, ReadingADefaultResultBackWritesTheSameDocument) {
  const nlohmann::json written = to_json(EvalResult{});
  EXPECT_EQ(to_json(read_back(written)), written);
}

TEST(ResultSchema, AnOlderDocumentClaimsNoForwardSeedPolicy) {
  nlohmann::json document = to_json(EvalResult{});
  EXPECT_EQ(document["config"]["forward_seed"], std::string(kForwardSeedPolicy));
  // Written before kbench seeded each forward: its forwards were not seeded.
  document["config"].erase("forward_seed");
  EXPECT_EQ(read_back(document).forward_seed, "");
}

TEST(ResultSchema, ADocumentKbenchEvalWroteReadsBackUnchanged) {
  const nlohmann::json document =
      read_json_file(std::string(KBENCH_SOURCE_DIR) + "/tests/unit/fixtures/eval_cpu_relu.json");
  const EvalResult r = read_back(document);
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.trials.size(), 6u);
  EXPECT_EQ(to_json(r), document) << nlohmann::json::diff(document, to_json(r)).dump(1);
}

TEST(ResultSchema, NonFiniteNumbersReadBackAsNullsInTheSamePlaces) {
  EvalResult r = full_result();
  r.trials[0].outputs[0].comparison.max_abs_err = std::numeric_limits<double>::infinity();
  r.trials[0].outputs[0].comparison.first_mismatches[0].candidate = std::nan("");
  const nlohmann::json written = nlohmann::json::parse(to_json(r).dump());
  EXPECT_EQ(to_json(read_back(written)).dump(), written.dump());
}

TEST(ResultSchema, AnotherSchemaVersionIsAnErrorNamingTheField) {
  nlohmann::json document = to_json(full_result());
  document["schema"] = "kbench.eval/2";
  const auto decoded = result_from_json(document);
  EXPECT_FALSE(decoded.value.has_value());
  EXPECT_EQ(decoded.error, R"(schema: expected "kbench.eval/1", got "kbench.eval/2")");
  document.erase("schema");
  EXPECT_EQ(result_from_json(document).error, R"(schema: expected "kbench.eval/1", got null)");
  EXPECT_EQ(result_from_json(nlohmann::json::array()).error,
            "document: expected an object (a kbench.eval/1 result), got []");
}

TEST(ResultSchema, AFieldOfTheWrongTypeIsAnErrorNamingItsPath) {
  nlohmann::json document = to_json(full_result());
  document["timing"]["candidate"]["stats"]["median_us"] = "fast";
  EXPECT_EQ(result_from_json(document).error,
            R"(timing.candidate.stats.median_us: expected a number, got "fast")");
  document = to_json(full_result());
  document["correctness"]["trials"][1]["outputs"][0]["numel"] = -1;
  EXPECT_EQ(result_from_json(document).error,
            "correctness.trials[1].outputs[0].numel: expected a non-negative integer, got -1");
  document = to_json(full_result());
  document["status"] = "passed";
  EXPECT_EQ(
      result_from_json(document).error,
      "status: expected one of ok, incorrect, impossible_timing, static_rejected, compile_error, "
      "runtime_error, timeout, crashed, harness_error, unsupported, got \"passed\"");
}
