// pipeline/trivial_problem.hpp: R's outputs in the scratch layout, every trial and every rank,
// judged for trivial answers; the verdict's warning and the unscored speedup on a result.
#include "compare/safetensors.hpp"
#include "pipeline/trivial_problem.hpp"

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

class TrivialProblem : public ::testing::Test {
protected:
  void reference(int rank, int trial, const std::vector<float>& values) {
    const fs::path dir = m_scratch.rank_dir("reference", rank);
    fs::create_directories(dir);
    compare::TensorFile file;
    file.tensors = {{"output.0", f32(values)}};
    compare::write_safetensors(dir / ("trial_" + std::to_string(trial) + ".outputs.safetensors"),
                               file);
  }
  sched::ScratchDirectory m_scratch = sched::ScratchDirectory::create("kbench-test");
};

TEST_F(TrivialProblem, NearZeroOutputsOnEveryTrialLeaveTheSpeedupUnscored) {
  // Trials 0, 1 and the held-out 2 (indices need not be 0..n-1 in order).
  for (int trial : {0, 1, 2}) {
    reference(0, trial, {1e-9f, -2e-9f, 3e-9f});
  }
  const TrivialVerdict verdict = judge_trivial_answers(m_scratch, {2, 0, 1}, {});
  ASSERT_EQ(verdict.answers.size(), 1u);
  EXPECT_NE(verdict.warning.find("trivial answer: zeros pass the tolerance for output.0 on all 3 "
                                 "trials"),
            std::string::npos)
      << verdict.warning;
  EXPECT_NE(verdict.warning.find("the speedup is not scored"), std::string::npos);

  EvalResult result;
  result.timing.speedup = 106.0;
  apply_trivial_verdict(verdict, result);
  EXPECT_FALSE(result.timing.speedup_scored);
  EXPECT_NE(result.timing.unscored_reason.find("zeros pass"), std::string::npos);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0], verdict.warning);
  EXPECT_EQ(to_json(result)["timing"]["speedup_scored"], false);
}

TEST_F(TrivialProblem, OneTrialThatZerosMissIsEnough) {
  reference(0, 0, {1e-9f, 2e-9f});
  reference(0, 1, {1e-9f, 0.5f});
  const TrivialVerdict verdict = judge_trivial_answers(m_scratch, {0, 1}, {});
  EXPECT_TRUE(verdict.answers.empty());
  EXPECT_TRUE(verdict.warning.empty());
  EvalResult result;
  apply_trivial_verdict(verdict, result);
  EXPECT_TRUE(result.timing.speedup_scored);
  EXPECT_TRUE(result.warnings.empty());
}

TEST_F(TrivialProblem, EveryRankIsJudgedUnderItsOwnName) {
  m_scratch = sched::ScratchDirectory::create("kbench-test", 2);
  reference(0, 0, {0.25f, 0.75f}); // rank 0 is honest
  reference(1, 0, {1e-9f, 1e-9f}); // rank 1 is near zero
  const TrivialVerdict verdict = judge_trivial_answers(m_scratch, {0}, {});
  ASSERT_EQ(verdict.answers.size(), 1u);
  EXPECT_EQ(verdict.answers[0].output, "rank1/output.0");
}

TEST_F(TrivialProblem, AMissingReferenceFileThrows) {
  EXPECT_THROW(judge_trivial_answers(m_scratch, {0}, {}), compare::TensorFileError);
}

} // namespace
} // namespace kbench
