// Trivial answers (compare/trivial_answers.hpp): zeros, one constant, each trial's mean, judged
// exactly as the comparator judges a candidate. Every answer reported here is also checked the
// other way: a tensor filled with it passes compare_tensors on every trial.
#include "compare/trivial_answers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace kbench::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
Tensor make(DType dtype, std::vector<std::int64_t> shape, const std::vector<T>& values) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  if (!values.empty()) {
    std::memcpy(t.data.data(), values.data(), t.data.size());
  }
  return t;
}

Tensor f32(const std::vector<float>& values) {
  return make(DType::F32, {static_cast<std::int64_t>(values.size())}, values);
}
Tensor f64(const std::vector<double>& values) {
  return make(DType::F64, {static_cast<std::int64_t>(values.size())}, values);
}

// One output per trial, "output.0".
std::vector<TensorFile> trials_of(const std::vector<Tensor>& outputs) {
  std::vector<TensorFile> files;
  for (const auto& tensor : outputs) {
    TensorFile file;
    file.tensors["output.0"] = tensor;
    files.push_back(file);
  }
  return files;
}

struct Found {
  std::vector<TrivialAnswer> answers;
  int loads = 0;
};

Found find(const std::vector<TensorFile>& trials, ToleranceOverride tolerance = {}) {
  Found found;
  found.answers = find_trivial_answers(
      trials.size(),
      [&](std::size_t i) {
        ++found.loads;
        return trials.at(i);
      },
      tolerance);
  return found;
}

// The answer as a candidate would return it, for the comparator to judge (float outputs only).
Tensor filled(const Tensor& like, double value) {
  if (like.dtype == DType::F64) {
    return make(DType::F64, like.shape, std::vector<double>(like.numel(), value));
  }
  return make(DType::F32, like.shape, std::vector<float>(like.numel(), static_cast<float>(value)));
}

void expect_passes_everywhere(const TrivialAnswer& answer, const std::vector<TensorFile>& trials,
                              ToleranceOverride tolerance = {}) {
  ASSERT_NE(answer.kind, TrivialKind::mean); // each trial has its own: the test checks those
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const Tensor& reference = trials[i].tensors.at(answer.output);
    const double value = answer.value;
    EXPECT_TRUE(compare_tensors(filled(reference, value), reference,
                                tolerance_for(reference.dtype, tolerance))
                    .passed)
        << "trial " << i << ", value " << value;
  }
}

TEST(TrivialAnswers, ZerosPassOutputsBelowTheTolerance) {
  const auto trials = trials_of({f32({1e-9f, -3e-9f, 2e-9f}), f32({4e-9f, 0.0f, -1e-9f})});
  const auto found = find(trials);
  ASSERT_EQ(found.answers.size(), 1u);
  const auto& answer = found.answers[0];
  EXPECT_EQ(answer.output, "output.0");
  EXPECT_EQ(answer.kind, TrivialKind::zeros);
  EXPECT_EQ(answer.value, 0.0);
  EXPECT_NEAR(answer.max_abs, 4e-9, 1e-15);
  EXPECT_EQ(answer.trials, 2u);
  EXPECT_EQ(answer.tolerance.atol, 1e-4);
  EXPECT_EQ(found.loads, 2); // nothing left to verify: zeros were judged element by element
  expect_passes_everywhere(answer, trials);
  const std::string text = describe_trivial_answer(answer);
  EXPECT_NE(text.find("zeros pass the tolerance for output.0 on all 2 trials"), std::string::npos)
      << text;
  EXPECT_NE(text.find("largest |reference| 4e-09"), std::string::npos) << text;
}

TEST(TrivialAnswers, OneConstantThatPassesEveryTrialIsFoundAndPasses) {
  // Every value within 1e-4 + 1e-4 * 0.5 of 0.5, in both trials; zeros fail.
  const auto trials =
      trials_of({f32({0.50004f, 0.49997f, 0.5f}), f32({0.49998f, 0.50003f, 0.50001f})});
  const auto found = find(trials);
  ASSERT_EQ(found.answers.size(), 1u);
  EXPECT_EQ(found.answers[0].kind, TrivialKind::constant);
  EXPECT_NEAR(found.answers[0].value, 0.5, 1e-4);
  expect_passes_everywhere(found.answers[0], trials);
  EXPECT_NE(describe_trivial_answer(found.answers[0]).find("the constant 0.5"), std::string::npos);
}

TEST(TrivialAnswers, TheConstantsBoundaryIsTheComparatorsToTheLastBit) {
  // atol 0.25, rtol 0 (powers of two: every bound is exact): 0.25 is within 0.25 of both 0 and
  // 0.5, and no value is within 0.25 of both 0 and 0.5 + 2^-40.
  const ToleranceOverride tolerance{0.25, 0.0};
  const auto touching = trials_of({f64({0.0, 0.5})});
  const auto found = find(touching, tolerance);
  ASSERT_EQ(found.answers.size(), 1u);
  EXPECT_EQ(found.answers[0].kind, TrivialKind::constant);
  EXPECT_EQ(found.answers[0].value, 0.25);
  expect_passes_everywhere(found.answers[0], touching, tolerance);

  EXPECT_TRUE(find(trials_of({f64({0.0, 0.5 + std::ldexp(1.0, -40)})}), tolerance).answers.empty());
}

TEST(TrivialAnswers, AFlatOutputWhoseLevelMovesBetweenTrialsPassesWithEachTrialsMean) {
  const auto trials =
      trials_of({f32({1.00001f, 0.99999f, 1.0f, 1.0f}), f32({2.0f, 2.00002f, 1.99998f, 2.0f})});
  const auto found = find(trials);
  ASSERT_EQ(found.answers.size(), 1u);
  EXPECT_EQ(found.answers[0].kind, TrivialKind::mean);
  EXPECT_NEAR(found.answers[0].value, 1.0, 1e-5);
  EXPECT_EQ(found.loads, 4); // the means were verified in a second pass
  // The second trial's own mean passes it too.
  EXPECT_TRUE(
      compare_tensors(f32({2.0f, 2.0f, 2.0f, 2.0f}), trials[1].tensors.at("output.0"), {1e-4, 1e-4})
          .passed);
}

TEST(TrivialAnswers, AnHonestOutputHasNoneAndIsReadOnce) {
  std::vector<float> values;
  for (int i = 0; i < 10000; ++i) {
    values.push_back(std::sin(0.37f * static_cast<float>(i)));
  }
  const auto found = find(trials_of({f32(values), f32(values), f32(values)}));
  EXPECT_TRUE(found.answers.empty());
  // Every output was dead after the first trial: the others are never loaded.
  EXPECT_EQ(found.loads, 1);
}

TEST(TrivialAnswers, OneLargeElementIsEnoughToFailZeros) {
  // A softmax over many columns, in small: all but one element below atol.
  std::vector<float> values(1000, 5e-6f);
  values[617] = 0.3f;
  const auto found = find(trials_of({f32(values)}));
  EXPECT_TRUE(found.answers.empty());
  EXPECT_EQ(count_matching(f32(values), 0.0, {1e-4, 1e-4}), 999u);
}

TEST(TrivialAnswers, NonFiniteReferencesFollowTheComparator) {
  // A finite constant never matches NaN or inf.
  EXPECT_TRUE(find(trials_of({f64({1e-9, kNaN})})).answers.empty());
  EXPECT_TRUE(find(trials_of({f64({kInf, -kInf})})).answers.empty());
  // Every element the same non-finite value: that value everywhere is an answer that passes.
  const auto all_inf = find(trials_of({f64({kInf, kInf}), f64({kInf, kInf})}));
  ASSERT_EQ(all_inf.answers.size(), 1u);
  EXPECT_EQ(all_inf.answers[0].kind, TrivialKind::constant);
  EXPECT_EQ(all_inf.answers[0].value, kInf);
  const auto all_nan = find(trials_of({f64({kNaN, kNaN, kNaN})}));
  ASSERT_EQ(all_nan.answers.size(), 1u);
  EXPECT_TRUE(std::isnan(all_nan.answers[0].value));
}

TEST(TrivialAnswers, IntegerOutputsAreExact) {
  const auto same = find(trials_of({make<std::int64_t>(DType::I64, {3}, {7, 7, 7}),
                                    make<std::int64_t>(DType::I64, {3}, {7, 7, 7})}));
  ASSERT_EQ(same.answers.size(), 1u);
  EXPECT_EQ(same.answers[0].kind, TrivialKind::constant);
  EXPECT_EQ(same.answers[0].value, 7.0);
  EXPECT_EQ(same.answers[0].tolerance.atol, 0.0);
  // The tolerance given for floats does not loosen integers.
  EXPECT_TRUE(
      find(trials_of({make<std::int64_t>(DType::I64, {3}, {7, 8, 7})}), {ToleranceOverride{5, 5}})
          .answers.empty());
  const auto indices = find(trials_of({make<std::int64_t>(DType::I64, {3}, {0, 0, 0})}));
  ASSERT_EQ(indices.answers.size(), 1u);
  EXPECT_EQ(indices.answers[0].kind, TrivialKind::zeros);
}

TEST(TrivialAnswers, HalfPrecisionConstantsMustBeValuesTheDtypeHolds) {
  // float16 1000 and 1000.5 (0x63D0, 0x63D1) are neighbours. With atol 0.25 only 1000.25 is
  // within reach of both, and float16 cannot hold it; with atol 0.5 1000 itself passes.
  const auto reference = make<std::uint16_t>(DType::F16, {2}, {0x63D0, 0x63D1});
  EXPECT_TRUE(find(trials_of({reference}), {0.25, 0.0}).answers.empty());
  const auto found = find(trials_of({reference}), {0.5, 0.0});
  ASSERT_EQ(found.answers.size(), 1u);
  EXPECT_EQ(found.answers[0].kind, TrivialKind::constant);
  EXPECT_EQ(found.answers[0].value, 1000.0);
}

TEST(TrivialAnswers, RoundToDtypeRoundsToNearestEven) {
  EXPECT_EQ(round_to_dtype(1000.25, DType::F16), 1000.0);
  EXPECT_EQ(round_to_dtype(1000.75, DType::F16), 1001.0);
  EXPECT_EQ(round_to_dtype(65504.0, DType::F16), 65504.0);
  EXPECT_EQ(round_to_dtype(65520.0, DType::F16), kInf); // halfway to 65536: overflows
  EXPECT_EQ(round_to_dtype(-65520.0, DType::F16), -kInf);
  EXPECT_EQ(round_to_dtype(1e-8, DType::F16), 0.0); // under half the smallest subnormal, 2^-24
  EXPECT_EQ(round_to_dtype(std::ldexp(3.0, -25), DType::F16), std::ldexp(1.0, -23));
  EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -8), DType::BF16), 1.0);
  EXPECT_EQ(round_to_dtype(1.0 + 3 * std::ldexp(1.0, -8), DType::BF16), 1.015625);
  EXPECT_EQ(round_to_dtype(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(1e39, DType::F32), kInf);
  EXPECT_EQ(round_to_dtype(0.1, DType::F64), 0.1);
  EXPECT_EQ(round_to_dtype(2.5, DType::I32), 2.0);
  EXPECT_EQ(round_to_dtype(3.5, DType::I32), 4.0);
  EXPECT_EQ(round_to_dtype(300.0, DType::U8), 255.0);
  EXPECT_EQ(round_to_dtype(-3.0, DType::U8), 0.0);
  EXPECT_EQ(round_to_dtype(0.7, DType::BOOL), 1.0);
  EXPECT_TRUE(std::isnan(round_to_dtype(kNaN, DType::F16)));
}

TEST(TrivialAnswers, OneElementOutputsAreNotAnsweredByTheirOwnMean) {
  // A scalar that changes between trials: its mean is itself, not a shortcut.
  EXPECT_TRUE(find(trials_of({f32({0.7f}), f32({0.9f})})).answers.empty());
  // The same scalar on every trial is a constant a kernel could hard-code.
  const auto same = find(trials_of({f32({0.7f}), f32({0.7f})}));
  ASSERT_EQ(same.answers.size(), 1u);
  EXPECT_EQ(same.answers[0].kind, TrivialKind::constant);
}

TEST(TrivialAnswers, OnlyTheTrivialOutputOfSeveralIsReported) {
  std::vector<TensorFile> trials(2);
  for (auto& file : trials) {
    file.tensors["output.0"] = f32({0.1f, 0.9f, -0.4f});
    file.tensors["output.1"] = f32({1e-7f, -1e-7f});
  }
  const auto found = find(trials);
  ASSERT_EQ(found.answers.size(), 1u);
  EXPECT_EQ(found.answers[0].output, "output.1");
}

TEST(TrivialAnswers, AnOutputMissingOrEmptyOnATrialIsNotAnAnswerOnEveryTrial) {
  std::vector<TensorFile> trials = trials_of({f32({1e-9f}), f32({1e-9f})});
  trials[1].tensors.clear();
  trials[1].tensors["output.1"] = f32({0.0f});
  EXPECT_TRUE(find(trials).answers.empty());
  EXPECT_TRUE(find(trials_of({f32({}), f32({})})).answers.empty());
}

TEST(TrivialAnswers, NoTrialsNoAnswers) {
  EXPECT_TRUE(find({}).answers.empty());
}

TEST(TrivialAnswers, AllMatchingIsCountMatchingOverEveryElement) {
  const Tolerance tol{1e-4, 1e-4};
  const Tensor flat = f64({2.0, 2.0 + 1e-5, 2.0 - 1e-5, 2.0});
  EXPECT_TRUE(all_matching(flat, 2.0, tol));
  EXPECT_EQ(count_matching(flat, 2.0, tol), 4u);
  const Tensor one_off = f64({2.0, 2.0, 2.5, 2.0});
  EXPECT_FALSE(all_matching(one_off, 2.0, tol));
  EXPECT_EQ(count_matching(one_off, 2.0, tol), 3u);
  EXPECT_FALSE(all_matching(f64({0.0, std::nan("")}), 0.0, tol));
  EXPECT_TRUE(all_matching(f64({}), 1.0, tol));
}

} // namespace
} // namespace kbench::compare
