#include "checks/problem_findings.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

using namespace kbench;
using namespace kbench::checks;
namespace fs = std::filesystem;

namespace {

compare::Tensor f32(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  compare::Tensor t;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(float));
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

void write(const fs::path& path, const std::map<std::string, compare::Tensor>& tensors) {
  compare::TensorFile file;
  file.tensors = tensors;
  compare::write_safetensors(path, file);
}

const Tolerance kTol{1e-4, 1e-4};

class JudgeProblem : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kbench_judge_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A trial whose outputs, repeat and inputs are given.
  TrialFacts trial(int index, const compare::Tensor& out, const compare::Tensor& repeat,
                   const compare::Tensor& input) {
    TrialFacts t;
    t.index = index;
    t.ran = true;
    t.weights_follow_seed = true;
    const std::string stem = "trial_" + std::to_string(index) + ".";
    t.outputs = dir / (stem + "outputs");
    t.repeat = dir / (stem + "repeat");
    t.inputs = dir / (stem + "inputs");
    write(t.outputs, {{"output.0", out}});
    write(t.repeat, {{"output.0", repeat}});
    write(t.inputs, {{"input.0", input}});
    return t;
  }
  fs::path dir;
};

bool has(const std::vector<Finding>& findings, const std::string& check,
         const std::string& severity) {
  for (const auto& f : findings) {
    if (f.check == check && f.severity == severity) {
      return true;
    }
  }
  return false;
}

} // namespace

TEST(ProblemFindings, NearConstantUsesTheTolerance) {
  EXPECT_TRUE(near_constant(f32({3}, {1.0f, 1.00005f, 0.99995f}), kTol));
  EXPECT_FALSE(near_constant(f32({3}, {1.0f, 1.1f, 1.0f}), kTol));
  EXPECT_FALSE(near_constant(f32({1}, {1.0f}), kTol)); // one value says nothing
}

TEST(ProblemFindings, UniformAxesFindsRepeatedRowsAndColumns) {
  // Rows all equal: uniform along axis 0, not along axis 1.
  EXPECT_EQ(uniform_axes(f32({3, 2}, {1, 2, 1, 2, 1, 2}), kTol), std::vector<int>{0});
  // Columns all equal within each row: uniform along axis 1.
  EXPECT_EQ(uniform_axes(f32({2, 3}, {1, 1, 1, 5, 5, 5}), kTol), std::vector<int>{1});
  EXPECT_TRUE(uniform_axes(f32({2, 2}, {1, 2, 3, 4}), kTol).empty());
  EXPECT_TRUE(uniform_axes(f32({4}, {1, 1, 1, 1}), kTol).empty()); // 1-D: near-constant's job
}

TEST_F(JudgeProblem, HealthyTrialsHaveNoFindings) {
  ProblemFacts facts;
  facts.trials.push_back(trial(0, f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}),
                               f32({2, 2}, {0.5f, 1, 1.5f, 2})));
  facts.trials.push_back(trial(1, f32({2, 2}, {4, 3, 2, 1}), f32({2, 2}, {4, 3, 2, 1}),
                               f32({2, 2}, {2, 1.5f, 1, 0.5f})));
  EXPECT_TRUE(judge_problem(facts).empty());
}

TEST_F(JudgeProblem, EachDefectIsNamed) {
  ProblemFacts facts;
  // Same output for both seeds, a repeat that differs, zeros pass (tiny outputs), input passes.
  const auto tiny = f32({2, 2}, {1e-6f, 2e-6f, 3e-6f, 4e-6f});
  facts.trials.push_back(trial(0, tiny, f32({2, 2}, {1, 1, 1, 1}), tiny));
  facts.trials.push_back(trial(1, tiny, tiny, tiny));
  TrialFacts broken;
  broken.index = 2;
  broken.error = "RuntimeError: shapes differ";
  broken.input_shapes = nlohmann::json::array({{{"shape", {17, 44}}}});
  facts.trials.push_back(broken);
  facts.on_gpu = true;
  facts.call_us = 3.0;
  const auto findings = judge_problem(facts);
  EXPECT_TRUE(has(findings, "reference-runs", "error"));
  EXPECT_TRUE(has(findings, "deterministic", "error"));
  EXPECT_TRUE(has(findings, "depends-on-inputs", "error"));
  EXPECT_TRUE(has(findings, "trivial-answer", "error"));
  EXPECT_TRUE(has(findings, "not-launch-bound", "warn"));
}

TEST_F(JudgeProblem, AForwardDeterministicOnlyWhenSeededGetsANoteNotAnError) {
  ProblemFacts facts;
  const auto out = f32({2, 2}, {1, 2, 3, 4});
  facts.trials.push_back(trial(0, out, out, f32({2, 2}, {0.5f, 1, 1.5f, 2})));
  facts.trials.push_back(trial(1, f32({2, 2}, {4, 3, 2, 1}), f32({2, 2}, {4, 3, 2, 1}),
                               f32({2, 2}, {2, 1.5f, 1, 0.5f})));
  // Unseeded, trial 0's third call drew other numbers; trial 1's agrees (no file: not judged).
  facts.trials[0].unseeded = dir / "trial_0.unseeded";
  write(facts.trials[0].unseeded, {{"output.0", f32({2, 2}, {1.5f, 2, 3, 4})}});
  auto findings = judge_problem(facts);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_TRUE(has(findings, "seeded-forward", "info"));
  EXPECT_NE(findings[0].message.find("on 1 of 2 trials"), std::string::npos) << findings[0].message;

  // Unseeded outputs that agree: nothing to note.
  write(facts.trials[0].unseeded, {{"output.0", out}});
  EXPECT_TRUE(judge_problem(facts).empty());

  // Seeded calls that disagree: nondeterministic, an error, and no note on top.
  write(facts.trials[0].repeat, {{"output.0", f32({2, 2}, {9, 9, 9, 9})}});
  write(facts.trials[0].unseeded, {{"output.0", f32({2, 2}, {1.5f, 2, 3, 4})}});
  findings = judge_problem(facts);
  EXPECT_TRUE(has(findings, "deterministic", "error"));
  EXPECT_FALSE(has(findings, "seeded-forward", "info"));
}

TEST_F(JudgeProblem, MemoryNearTheDeviceLimitIsAnError) {
  ProblemFacts facts;
  facts.trials.push_back(trial(0, f32({2}, {1, 2}), f32({2}, {1, 2}), f32({2}, {3, 4})));
  facts.peak_memory_bytes = 95;
  facts.device_memory_bytes = 100;
  EXPECT_TRUE(has(judge_problem(facts), "fits-device-memory", "error"));
  facts.peak_memory_bytes = 60;
  EXPECT_TRUE(has(judge_problem(facts), "fits-device-memory", "warn"));
}

TEST_F(JudgeProblem, OneConstantForEveryTrialIsATrivialAnswer) {
  // Zeros fail and each trial differs, but every value on both trials is within 1e-4 of 0.5.
  ProblemFacts facts;
  facts.trials.push_back(trial(0, f32({3}, {0.50004f, 0.49997f, 0.5f}),
                               f32({3}, {0.50004f, 0.49997f, 0.5f}), f32({3}, {1, 2, 3})));
  facts.trials.push_back(trial(1, f32({3}, {0.49998f, 0.50003f, 0.50001f}),
                               f32({3}, {0.49998f, 0.50003f, 0.50001f}), f32({3}, {3, 2, 1})));
  bool found = false;
  for (const auto& f : judge_problem(facts)) {
    found = found || (f.check == "trivial-answer" && f.severity == "error" &&
                      f.message.find("the constant 0.5") != std::string::npos);
  }
  EXPECT_TRUE(found);
}

TEST_F(JudgeProblem, MostElementsBelowAtolIsAWarningEvenWhenZerosFail) {
  // A softmax over many columns in small: 1000 values of 5e-6 and two that zeros miss.
  std::vector<float> values(1002, 5e-6f);
  values[10] = 0.4f;
  values[500] = 0.3f;
  ProblemFacts facts;
  facts.trials.push_back(trial(0, f32({1002}, values), f32({1002}, values), f32({2}, {1, 2})));
  const auto findings = judge_problem(facts);
  EXPECT_FALSE(has(findings, "trivial-answer", "error"));
  ASSERT_TRUE(has(findings, "mostly-below-atol", "warn"));
  for (const auto& f : findings) {
    if (f.check == "mostly-below-atol") {
      EXPECT_NE(f.message.find("all zeros miss only 2 of its 1002 elements"), std::string::npos)
          << f.message;
    }
  }
}

TEST_F(JudgeProblem, ExactZerosAndAModestShareBelowAtolAreNotWarnedAbout) {
  // A ReLU's zeros are exact: structure, not tolerance. Half of the rest below atol is not most.
  ProblemFacts facts;
  const auto relu = f32({6}, {0, 0, 0, 0.5f, 2e-5f, 0.7f});
  facts.trials.push_back(trial(0, relu, relu, f32({6}, {-1, -2, -3, 0.5f, 2e-5f, 0.7f})));
  EXPECT_FALSE(has(judge_problem(facts), "mostly-below-atol", "warn"));
}

namespace {

std::vector<std::string> described(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    out.push_back(f.check + "/" + f.severity + ": " + f.message);
  }
  return out;
}

} // namespace

// What `kbench problems check` does: each trial judged as the worker finishes it, then its
// files removed (the outputs too once no trivial answer is left to verify).
TEST_F(JudgeProblem, TrialByTrialWithFilesRemovedJudgesAsAllAtOnce) {
  auto streamed = [&](const ProblemFacts& facts, std::vector<bool>& outputs_kept) {
    ProblemJudge judge(facts.tolerance);
    for (const auto& t : facts.trials) {
      judge.add_trial(t);
      for (const auto& path : {t.repeat, t.unseeded, t.inputs}) {
        fs::remove(path);
      }
      outputs_kept.push_back(judge.outputs_needed_again());
      if (!outputs_kept.back()) {
        fs::remove(t.outputs);
      }
    }
    return judge.findings(facts);
  };

  ProblemFacts healthy;
  healthy.trials.push_back(trial(0, f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {1, 2, 3, 4}),
                                 f32({2, 2}, {0.5f, 1, 1.5f, 2})));
  healthy.trials.push_back(trial(1, f32({2, 2}, {4, 3, 2, 1}), f32({2, 2}, {4, 3, 2, 1}),
                                 f32({2, 2}, {2, 1.5f, 1, 0.5f})));
  std::vector<bool> kept;
  EXPECT_TRUE(streamed(healthy, kept).empty());
  EXPECT_EQ(kept, (std::vector<bool>{false, false})); // nothing trivial can pass: all removed

  ProblemFacts constant; // one constant passes every trial: the outputs are read again
  constant.trials.push_back(trial(0, f32({3}, {0.50004f, 0.49997f, 0.5f}),
                                  f32({3}, {0.50004f, 0.49997f, 0.5f}), f32({3}, {1, 2, 3})));
  constant.trials.push_back(trial(1, f32({3}, {0.49998f, 0.50003f, 0.50001f}),
                                  f32({3}, {0.49998f, 0.50003f, 0.50001f}), f32({3}, {3, 2, 1})));
  const auto all_at_once = described(judge_problem(constant));
  kept.clear();
  EXPECT_EQ(described(streamed(constant, kept)), all_at_once);
  EXPECT_EQ(kept, (std::vector<bool>{true, true}));
  EXPECT_FALSE(all_at_once.empty());
}

TEST_F(JudgeProblem, ARepeatTheWorkerFoundIdenticalNeedsNoFile) {
  ProblemFacts facts;
  for (int i = 0; i < 2; ++i) {
    const auto out = f32({2, 2}, {1.0f + i, 2, 3, 4});
    facts.trials.push_back(trial(i, out, out, f32({2}, {1, 2})));
    fs::remove(facts.trials.back().repeat);
    facts.trials.back().repeat_identical = true;
  }
  EXPECT_TRUE(judge_problem(facts).empty());
}

TEST_F(JudgeProblem, AnInputTheWorkerToldApartCountsAsATrialItFailed) {
  // Trial 0 writes its input (it is the output: an identity); trial 1's worker found the
  // input far from the output on the device and sent the pair instead of the file.
  const auto out0 = f32({2, 2}, {1, 2, 3, 4});
  const auto out1 = f32({2, 2}, {4, 3, 2, 1});
  ProblemFacts facts;
  facts.trials.push_back(trial(0, out0, out0, out0));
  TrialFacts second = trial(1, out1, out1, out1);
  fs::remove(second.inputs);
  second.passthrough_refuted = {{"output.0", "input.0"}};
  facts.trials.push_back(second);
  const auto findings = judge_problem(facts);
  EXPECT_TRUE(has(findings, "trivial-answer", "warn"));
  EXPECT_FALSE(has(findings, "trivial-answer", "error"));
  bool named = false;
  for (const auto& f : findings) {
    named = named || f.message == "input.0 passed through for output.0 passes the tolerance on 1 "
                                  "of 2 trials";
  }
  EXPECT_TRUE(named);
  // Without the worker's word for trial 1, the one trial with a file would make it an error.
  facts.trials[1].passthrough_refuted.clear();
  EXPECT_TRUE(has(judge_problem(facts), "trivial-answer", "error"));
}
