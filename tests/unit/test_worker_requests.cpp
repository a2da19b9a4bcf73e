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

TEST(WorkerRequests, TheCandidateGetsIndicesAndTheBuild) {
  const nlohmann::json trials = {{{"index", 0}}, {{"index", 1}}};
  EXPECT_EQ(candidate("/c.py", "cpu", "fp32", "/x", 42, trials, "/s/inputs", "/s/candidate").dump(),
            R"({"candidate":"/c.py","device":"cpu","extensions_dir":"/x","init_seed":42,)"
            R"("inputs_dir":"/s/inputs","op":"candidate","outputs_dir":"/s/candidate",)"
            R"("precision":"fp32","trials":[{"index":0},{"index":1}]})");
}

TEST(WorkerRequests, PoolAndTimeCarryTheirCounts) {
  EXPECT_EQ(pool(8).dump(), R"({"op":"pool","pool_size":8})");
  EXPECT_EQ(time(3, 30).dump(), R"({"flush_l2":true,"iterations":30,"op":"time","warmup":3})");
}

TEST(WorkerRequests, AProblemCheckCarriesTheSettingsItIsRecordedUnder) {
  const nlohmann::json trials = {{{"index", 0}, {"seed", 9u}}};
  EXPECT_EQ(problem_check("/p.py", "cuda:0", "standard", "fp16", 1, trials, "/s/outputs").dump(),
            R"({"device":"cuda:0","init_seed":1,"op":"problem_check","outputs_dir":"/s/outputs",)"
            R"("precision":"fp16","problem":"/p.py","trials":[{"index":0,"seed":9}],)"
            R"("variant":"standard"})");
}

} // namespace
} // namespace kbench::requests
