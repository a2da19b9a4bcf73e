// pipeline/worker_requests.hpp: the requests kbench sends its workers. The expected texts are
// the requests as the senders wrote them before the builders existed; the worker's side
// (python/kbench/worker/handlers.py) reads these fields.
#include "pipeline/worker_requests.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace kbench::requests {
namespace {

namespace fs = std::filesystem;

TEST(WorkerRequests, HelloIsTheOpAlone) {
  EXPECT_EQ(hello().dump(), R"({"op":"hello"})");
}

TEST(WorkerRequests, AnEvaluationsStaticCheckCarriesEveryField) {
  EXPECT_EQ(static_check("/c/model_new.py", "auto", "/p/problem.py", fs::path()).dump(),
            R"({"backend":"auto","candidate":"/c/model_new.py","op":"static_check",)"
            R"("problem":"/p/problem.py","rules":""})");
}

TEST(WorkerRequests, StaticCheckLeavesOutAProblemAndRulesNotGiven) {
  EXPECT_EQ(static_check("/c/model_new.py", "cuda", "", std::nullopt).dump(),
            R"({"backend":"cuda","candidate":"/c/model_new.py","op":"static_check"})");
}

TEST(WorkerRequests, ABundledRuleSetGoesByItsName) {
  EXPECT_EQ(rule_set_argument("partial-torch"), "partial-torch");
  EXPECT_EQ(static_check("/c.py", "auto", "", fs::path("structural"))["rules"], "structural");
}

TEST(WorkerRequests, ARuleSetFileGoesAsAnAbsolutePath) {
  EXPECT_EQ(rule_set_argument("my-rules.json"), (fs::current_path() / "my-rules.json").string());
  EXPECT_EQ(rule_set_argument("rules/strict"), (fs::current_path() / "rules/strict").string());
  EXPECT_EQ(rule_set_argument("/etc/kbench/strict.json"), "/etc/kbench/strict.json");
  EXPECT_EQ(rule_set_argument(""), "");
}

TEST(WorkerRequests, CompileNamesTheCandidateAndTheBuildDirectory) {
  EXPECT_EQ(compile("/c.py", "/cache/extensions/ab12").dump(),
            R"({"candidate":"/c.py","extensions_dir":"/cache/extensions/ab12","op":"compile"})");
}

TEST(WorkerRequests, TheReferenceGetsTheSeedsAndWhereToWrite) {
  const nlohmann::json trials = {{{"index", 0}, {"seed", 7u}}};
  EXPECT_EQ(reference("/p.py", "cuda:1", "popcorn", "bf16", 42, trials, "/s/inputs/rank1",
                      "/s/reference/rank1")
                .dump(),
            R"({"device":"cuda:1","init_seed":42,"inputs_dir":"/s/inputs/rank1","op":"reference",)"
            R"("outputs_dir":"/s/reference/rank1","precision":"bf16","problem":"/p.py",)"
            R"("trials":[{"index":0,"seed":7}],"variant":"popcorn"})");
}

TEST(WorkerRequests, TheCandidateGetsIndicesTheBuildAndTheProblemThatDrawsTimedInputs) {
  const nlohmann::json trials = {{{"index", 0}}, {{"index", 1}}};
  EXPECT_EQ(candidate("/c.py", "/p.py", "cpu", "popcorn", "fp32", "/x", 42, trials, "/s/inputs",
                      "/s/candidate")
                .dump(),
            R"({"candidate":"/c.py","device":"cpu","extensions_dir":"/x","init_seed":42,)"
            R"("inputs_dir":"/s/inputs","op":"candidate","outputs_dir":"/s/candidate",)"
            R"("precision":"fp32","problem":"/p.py","trials":[{"index":0},{"index":1}],)"
            R"("variant":"popcorn"})");
}

TEST(WorkerRequests, TimeCarriesItsCounts) {
  EXPECT_EQ(time(3, 30).dump(), R"({"flush_l2":true,"iterations":30,"op":"time","warmup":3})");
}

// The candidate's block carries no seed: it asks for each one as its calls return.
TEST(WorkerRequests, OnlyTheReferencesBlocksCarrySeeds) {
  TimeBlock block{.block = 2, .calls = 2, .target = "eager", .shape_seed = 7, .warmup = 0};
  const auto asks = time_block(block);
  EXPECT_FALSE(asks.contains("seeds"));
  EXPECT_FALSE(asks.contains("sample_seeds"));
  EXPECT_EQ(asks["shape_seed"], 7);
  block.seeds = std::vector<std::uint64_t>{1, 18446744073709551615ULL};
  block.sample_seeds = std::vector<std::uint64_t>{3, 4};
  block.check_inputs = true;
  const auto given = time_block(block);
  EXPECT_EQ(given["seeds"].dump(), "[1,18446744073709551615]");
  EXPECT_EQ(given["sample_seeds"].dump(), "[3,4]");
  EXPECT_TRUE(given["check_inputs"].get<bool>());
}

TEST(WorkerRequests, AProblemCheckCarriesTheSettingsItIsRecordedUnder) {
  const nlohmann::json trials = {{{"index", 0}, {"seed", 9u}}};
  EXPECT_EQ(problem_check("/p.py", "cuda:0", "standard", "fp16", 1, trials, "/s/outputs",
                          Tolerance{0.01, 0.02})
                .dump(),
            R"({"device":"cuda:0","init_seed":1,"op":"problem_check","outputs_dir":"/s/outputs",)"
            R"("passthrough_bound":{"atol":0.01,"rtol":0.02},)"
            R"("precision":"fp16","problem":"/p.py","trials":[{"index":0,"seed":9}],)"
            R"("variant":"standard"})");
}

} // namespace
} // namespace kbench::requests
