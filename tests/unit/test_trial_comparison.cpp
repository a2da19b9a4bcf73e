// pipeline/trial_comparison.hpp: the trials' lists and their comparison over the scratch layout.
#include "compare/safetensors.hpp"
#include "core/seeding.hpp"
#include "pipeline/trial_comparison.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace kbench {
namespace {

namespace fs = std::filesystem;

compare::Tensor f32(const std::vector<float>& values) {
  compare::Tensor t;
  t.dtype = compare::DType::F32;
  t.shape = {static_cast<std::int64_t>(values.size())};
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// A scratch directory laid out as the phases leave it, for `world` ranks.
class TrialComparison : public ::testing::Test {
protected:
  void write(const std::string& phase, int rank, const std::string& file,
             const std::vector<float>& values) {
    const fs::path dir = m_scratch.rank_dir(phase, rank);
    fs::create_directories(dir);
    compare::TensorFile tensors;
    tensors.tensors = {{"output.0", f32(values)}};
    compare::write_safetensors(dir / file, tensors);
  }
  // Trial `index` with the given outputs on every rank; the first trial's rerun agrees.
  void trial(int index, const std::vector<float>& reference, const std::vector<float>& candidate,
             int ranks = 1) {
    const std::string name = "trial_" + std::to_string(index) + ".outputs.safetensors";
    for (int rank = 0; rank < ranks; ++rank) {
      write("reference", rank, name, reference);
      write("candidate", rank, name, candidate);
      write("candidate", rank, "trial_" + std::to_string(index) + ".again.outputs.safetensors",
            reference);
    }
  }
  std::vector<TrialResult> trials(int count) {
    std::vector<TrialResult> out(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      out[static_cast<std::size_t>(i)].index = i;
    }
    return out;
  }
  sched::ScratchDirectory m_scratch = sched::ScratchDirectory::create("kbench-test");
};

TEST_F(TrialComparison, EqualOutputsPassEveryTrial) {
  trial(0, {1, 2}, {1, 2});
  trial(1, {3, 4}, {3, 4});
  auto results = trials(2);
  EXPECT_EQ(compare_trials(m_scratch, results, {}), "");
  EXPECT_TRUE(results[0].passed);
  EXPECT_TRUE(results[1].passed);
  EXPECT_EQ(results[1].outputs.size(), 1U);
}

TEST_F(TrialComparison, TheFirstFailingTrialIsNamed) {
  trial(0, {1, 2}, {1, 2});
  trial(1, {3, 4}, {3, 5});
  auto results = trials(2);
  const std::string failure = compare_trials(m_scratch, results, {});
  EXPECT_EQ(failure.rfind("trial 1: ", 0), 0U) << failure;
  EXPECT_FALSE(results[1].passed);
}

TEST_F(TrialComparison, AFirstTrialThatDiffersWhenRunAgainFails) {
  trial(0, {1, 2}, {1, 2});
  write("candidate", 0, "trial_0.again.outputs.safetensors", {1, 7});
  auto results = trials(1);
  compare_trials(m_scratch, results, {});
  EXPECT_FALSE(results[0].passed);
  EXPECT_NE(results[0].failure.find("run again after the other trials"), std::string::npos)
      << results[0].failure;
}

TEST_F(TrialComparison, WithSeveralRanksEveryRankIsComparedAndNamed) {
  m_scratch = sched::ScratchDirectory::create("kbench-test", 2);
  trial(0, {1, 2}, {1, 2}, 2);
  write("candidate", 1, "trial_0.outputs.safetensors", {1, 9});
  auto results = trials(1);
  compare_trials(m_scratch, results, {});
  EXPECT_FALSE(results[0].passed);
  EXPECT_EQ(results[0].failure.rfind("rank 1: ", 0), 0U) << results[0].failure;
  ASSERT_EQ(results[0].outputs.size(), 2U);
  EXPECT_EQ(results[0].outputs[1].name, "rank1/output.0");
}

TEST(TrialLists, TheReferenceGetsOneHeldOutTrialAfterTheSeededOnes) {
  const auto trials = reference_trials(42, 3);
  ASSERT_EQ(trials.size(), 4U);
  EXPECT_EQ(trials[3]["index"], 3);
  EXPECT_TRUE(trials[3].contains("seed"));
  EXPECT_EQ(trials[0], reference_trials(42, 3)[0]); // the seeded ones follow --seed
  for (const auto& trial : trials) {                // the held-out one included
    EXPECT_EQ(trial["forward_seed"].get<std::uint32_t>(),
              forward_seed(trial["seed"].get<std::uint32_t>()))
        << trial.dump();
  }
}

TEST(TrialLists, TheCandidateGetsIndicesAndForwardSeedsNotTrialSeeds) {
  std::vector<TrialResult> trials(2);
  trials[0].index = 0;
  trials[0].seed = 11;
  trials[1].index = 1;
  trials[1].seed = 12;
  trials[1].seed = 0xFFFFFFFFU;
  EXPECT_EQ(candidate_trials(trials).dump(),
            R"([{"forward_seed":12,"index":0},{"forward_seed":0,"index":1}])");
}

TEST(TrialLists, TheHeldOutTrialIsMarkedWhenReadBack) {
  const auto answer = nlohmann::json::parse(
      R"({"trials": [{"index": 0, "seed": 5, "input_shapes": [[2]]}, {"index": 1, "seed": 9}]})");
  const auto trials = trials_from_reference(answer, 1);
  ASSERT_EQ(trials.size(), 2U);
  EXPECT_EQ(trials[0].seed, 5U);
  EXPECT_FALSE(trials[0].held_out);
  EXPECT_TRUE(trials[1].held_out);
}

} // namespace
} // namespace kbench
