#include "bench/compare_outputs/element_by_element.hpp"
#include "bench/compare_outputs/tensor_pairs.hpp"
#include "compare/tolerance.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace kbench::compare {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
Tensor make(DType dtype, std::vector<std::int64_t> shape, const std::vector<T>& values) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(values.size() * sizeof(T));
  if (!values.empty()) { // memcpy from an empty vector's null data() is undefined
    std::memcpy(t.data.data(), values.data(), t.data.size());
  }
  return t;
}

Tensor f64(std::vector<std::int64_t> shape, const std::vector<double>& values) {
  return make(DType::F64, std::move(shape), values);
}

Tensor f64(const std::vector<double>& values) {
  return f64({static_cast<std::int64_t>(values.size())}, values);
}

TEST(DefaultTolerance, PerDtype) {
  EXPECT_EQ(default_tolerance(DType::F32).atol, 1e-4);
  EXPECT_EQ(default_tolerance(DType::F32).rtol, 1e-4);
  EXPECT_EQ(default_tolerance(DType::F64).atol, 1e-4);
  EXPECT_EQ(default_tolerance(DType::F16).atol, 1e-2);
  EXPECT_EQ(default_tolerance(DType::BF16).rtol, 1e-2);
  for (DType d : {DType::I64, DType::I32, DType::I16, DType::I8, DType::U8, DType::BOOL}) {
    EXPECT_EQ(default_tolerance(d).atol, 0.0);
    EXPECT_EQ(default_tolerance(d).rtol, 0.0);
  }
}

TEST(CompareTensors, PassesWithinAndFailsJustOutsideTolerance) {
  const Tolerance tol{1e-4, 1e-4};
  const double bound = 1e-4 + 1e-4 * 100.0;
  const auto inside = compare_tensors(f64({100.0 + 0.99 * bound}), f64({100.0}), tol);
  EXPECT_TRUE(inside.passed);
  EXPECT_TRUE(inside.failure.empty());
  EXPECT_EQ(inside.mismatches, 0u);
  EXPECT_EQ(inside.numel, 1u);

  const auto outside = compare_tensors(f64({100.0 + 1.01 * bound}), f64({100.0}), tol);
  EXPECT_FALSE(outside.passed);
  EXPECT_EQ(outside.mismatches, 1u);
  EXPECT_FALSE(outside.failure.empty());

  // The rtol term scales with the reference, not the candidate.
  const auto negative = compare_tensors(f64({-100.0 - 0.99 * bound}), f64({-100.0}), tol);
  EXPECT_TRUE(negative.passed);
}

TEST(CompareTensors, NonFiniteValuesOnlyMatchThemselves) {
  const Tolerance tol{1e-2, 1e-2};
  EXPECT_FALSE(compare_tensors(f64({kNaN}), f64({1.0}), tol).passed);
  EXPECT_FALSE(compare_tensors(f64({1.0}), f64({kNaN}), tol).passed);
  EXPECT_TRUE(compare_tensors(f64({kNaN}), f64({kNaN}), tol).passed);
  EXPECT_TRUE(compare_tensors(f64({-kNaN}), f64({kNaN}), tol).passed);
  EXPECT_TRUE(compare_tensors(f64({kInf}), f64({kInf}), tol).passed);
  EXPECT_TRUE(compare_tensors(f64({-kInf}), f64({-kInf}), tol).passed);
  EXPECT_FALSE(compare_tensors(f64({kInf}), f64({-kInf}), tol).passed);
  EXPECT_FALSE(compare_tensors(f64({kInf}), f64({1e308}), tol).passed);
  EXPECT_FALSE(compare_tensors(f64({kNaN}), f64({kInf}), tol).passed);

  // Non-finite pairs stay out of the error figures.
  const auto r = compare_tensors(f64({kInf, 1.5}), f64({kInf, 1.0}), tol);
  EXPECT_EQ(r.max_abs_err, 0.5);
  EXPECT_EQ(r.mean_abs_err, 0.5);
}

TEST(CompareTensors, ShapeMismatchFailsWithoutElementwiseWork) {
  const auto r = compare_tensors(f64({4, 8}, std::vector<double>(32, 0.0)),
                                 f64({4, 9}, std::vector<double>(36, 0.0)), {1e-4, 1e-4});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failure, "shape [4, 8] != reference shape [4, 9]");
  EXPECT_EQ(r.numel, 0u);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_TRUE(r.first_mismatches.empty());

  const auto scalar = compare_tensors(f64({}, {1.0}), f64({1}, {1.0}), {});
  EXPECT_EQ(scalar.failure, "shape [] != reference shape [1]");
}

TEST(CompareTensors, DtypeMismatchFailsFirst) {
  const Tensor candidate = make<std::uint16_t>(DType::F16, {4}, {0, 0, 0, 0});
  const Tensor reference = make<float>(DType::F32, {5}, {0, 0, 0, 0, 0});
  const auto r = compare_tensors(candidate, reference, {1e-2, 1e-2});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.failure, "dtype float16 != reference dtype float32");
  EXPECT_EQ(r.numel, 0u);
}

TEST(CompareTensors, InconsistentDataSizeIsAFailureNotACrash) {
  Tensor candidate = f64({2}, {1.0, 2.0});
  candidate.data.resize(8);
  const auto r = compare_tensors(candidate, f64({2}, {1.0, 2.0}), {});
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.failure.find("candidate holds 8 bytes"), std::string::npos) << r.failure;
}

TEST(CompareTensors, IntegersAreExactWhateverTheTolerance) {
  const Tensor ref = make<std::int32_t>(DType::I32, {3}, {1, 2, 3});
  EXPECT_TRUE(compare_tensors(ref, ref, {0, 0}).passed);
  const auto r = compare_tensors(make<std::int32_t>(DType::I32, {3}, {1, 2, 4}), ref, {10, 10});
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_EQ(r.tolerance.atol, 0.0);
  EXPECT_EQ(r.tolerance.rtol, 0.0);

  const Tensor b1 = make<std::uint8_t>(DType::BOOL, {2}, {1, 0});
  const Tensor b2 = make<std::uint8_t>(DType::BOOL, {2}, {2, 0}); // any non-zero byte is true
  EXPECT_TRUE(compare_tensors(b2, b1, default_tolerance(DType::BOOL)).passed);
  EXPECT_FALSE(compare_tensors(make<std::uint8_t>(DType::BOOL, {2}, {0, 0}), b1, {}).passed);
}

TEST(CompareTensors, FirstMismatchesAreMultiDimensionalInIndexOrderAndCapped) {
  // Shape [2, 3, 4]; mismatches at flat positions 1, 6, 13, 17, 22, 23.
  std::vector<double> ref(24, 1.0), cand(24, 1.0);
  for (int flat : {1, 6, 13, 17, 22, 23}) {
    cand[flat] = 5.0;
  }
  const auto r = compare_tensors(f64({2, 3, 4}, cand), f64({2, 3, 4}, ref), {1e-4, 1e-4}, 4);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.numel, 24u);
  EXPECT_EQ(r.mismatches, 6u);
  ASSERT_EQ(r.first_mismatches.size(), 4u);
  using Index = std::vector<std::int64_t>;
  EXPECT_EQ(r.first_mismatches[0].index, (Index{0, 0, 1}));
  EXPECT_EQ(r.first_mismatches[1].index, (Index{0, 1, 2}));
  EXPECT_EQ(r.first_mismatches[2].index, (Index{1, 0, 1}));
  EXPECT_EQ(r.first_mismatches[3].index, (Index{1, 1, 1}));
  EXPECT_EQ(r.first_mismatches[0].candidate, 5.0);
  EXPECT_EQ(r.first_mismatches[0].reference, 1.0);

  const auto none = compare_tensors(f64({2, 3, 4}, cand), f64({2, 3, 4}, ref), {1e-4, 1e-4}, 0);
  EXPECT_EQ(none.mismatches, 6u);
  EXPECT_TRUE(none.first_mismatches.empty());
}

TEST(CompareTensors, ErrorFiguresOnHandComputedExample) {
  // |c - r| = [0.25, 0, 0.5, 0.5]; relative (r != 0 only) = [0.25, 0, 0.125].
  const auto r = compare_tensors(f64({2, 2}, {1.25, 2.0, 0.5, -3.5}),
                                 f64({2, 2}, {1.0, 2.0, 0.0, -4.0}), {0.3, 0.1});
  EXPECT_EQ(r.numel, 4u);
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
  EXPECT_DOUBLE_EQ(r.mean_abs_err, 0.3125);
  EXPECT_DOUBLE_EQ(r.max_rel_err, 0.25);
  EXPECT_DOUBLE_EQ(r.mean_rel_err, 0.125);
  // Only the r == 0 element exceeds its bound (0.5 > 0.3 + 0.1 * 0).
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_EQ(r.first_mismatches.size(), 1u);
  EXPECT_EQ(r.first_mismatches[0].index, (std::vector<std::int64_t>{1, 0}));
  EXPECT_FALSE(r.passed);
}

TEST(CompareTensors, HalfPrecisionUsesDecodedValues) {
  // 1.0 vs 1.0078125 (0x3C08): within fp16's default 1e-2 + 1e-2 * 1.
  const Tensor ref = make<std::uint16_t>(DType::F16, {1}, {0x3C00});
  const Tensor cand = make<std::uint16_t>(DType::F16, {1}, {0x3C08});
  const auto r = compare_tensors(cand, ref, default_tolerance(DType::F16));
  EXPECT_TRUE(r.passed);
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.0078125);
}

TEST(CompareTensors, EmptyTensorsPass) {
  const auto r = compare_tensors(f64({0, 3}, {}), f64({0, 3}, {}), {1e-4, 1e-4});
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.numel, 0u);
  EXPECT_EQ(r.mean_abs_err, 0.0);
}

TEST(AllWithinTolerance, IsCompareTensorsVerdictWithoutItsFigures) {
  // Random bit patterns (NaN, infinities, subnormals, zeros), a sixteenth of them changed, and
  // the same pairs with nothing changed; the verdict of every dtype must be compare_tensors'.
  for (DType dtype : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
                      DType::U8, DType::BOOL}) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      auto [reference, candidate] = bench::random_tensor_pair(dtype, 5000, seed, 0.25);
      for (const Tolerance tol : {default_tolerance(dtype), Tolerance{0.5, 0.5}}) {
        EXPECT_EQ(all_within_tolerance(candidate, reference, tol),
                  compare_tensors(candidate, reference, tol).passed)
            << dtype_torch_name(dtype) << " seed " << seed;
        EXPECT_EQ(all_within_tolerance(reference, reference, tol),
                  compare_tensors(reference, reference, tol).passed)
            << dtype_torch_name(dtype) << " seed " << seed;
      }
    }
  }
}

TEST(AllWithinTolerance, FailsWhereCompareTensorsFailsBeforeTheValues) {
  const Tolerance tol{1e-4, 1e-4};
  EXPECT_TRUE(all_within_tolerance(f64({1.0, kInf, kNaN}), f64({1.0, kInf, kNaN}), tol));
  EXPECT_FALSE(all_within_tolerance(f64({1.0, 2.0}), f64({1.0, 2.0 + 1e-3}), tol));
  EXPECT_FALSE(all_within_tolerance(f64({2, 1}, {1.0, 2.0}), f64({1.0, 2.0}), tol)); // shape
  EXPECT_FALSE(all_within_tolerance(make(DType::F32, {2}, std::vector<float>{1.0F, 2.0F}),
                                    f64({1.0, 2.0}), tol)); // dtype
  Tensor short_of_bytes = f64({1.0, 2.0});
  short_of_bytes.data.resize(8);
  EXPECT_FALSE(all_within_tolerance(short_of_bytes, f64({1.0, 2.0}), tol));
  // Integers are exact whatever the tolerance passed, as in compare_tensors.
  const auto ints = [](std::int64_t v) { return make(DType::I64, {1}, std::vector{v}); };
  EXPECT_FALSE(all_within_tolerance(ints(101), ints(100), Tolerance{5, 0}));
  EXPECT_TRUE(all_within_tolerance(ints(100), ints(100), Tolerance{}));
}

} // namespace
// The chunked decode gives what decoding each element on its own gave, to the bit, for every
// dtype, with NaN, infinities, subnormals and zeros among the values, across chunk edges, and
// for every one of the 65536 half and bfloat16 bit patterns.
TEST(CompareTensors, ChunkedDecodeMatchesElementByElementToTheBit) {
  for (const DType dtype : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
                            DType::I16, DType::I8, DType::U8, DType::BOOL}) {
    for (const std::size_t numel : {std::size_t{1}, std::size_t{2048}, std::size_t{70001}}) {
      const auto [candidate, reference] =
          bench::random_tensor_pair(dtype, numel, numel + static_cast<std::size_t>(dtype), 0.3);
      const Tolerance tolerance = default_tolerance(dtype);
      const auto engine = compare_tensors(candidate, reference, tolerance, 8);
      const auto oracle = bench::compare_element_by_element(candidate, reference, tolerance, 8);
      SCOPED_TRACE(std::string(dtype_torch_name(dtype)) + " x " + std::to_string(numel));
      EXPECT_EQ(engine.mismatches, oracle.mismatches);
      EXPECT_EQ(engine.max_abs_err, oracle.max_abs_err);
      EXPECT_EQ(engine.mean_abs_err, oracle.mean_abs_err);
      EXPECT_EQ(engine.max_rel_err, oracle.max_rel_err);
      EXPECT_EQ(engine.mean_rel_err, oracle.mean_rel_err);
      ASSERT_EQ(engine.first_mismatches.size(), oracle.first_mismatches.size());
      for (std::size_t m = 0; m < oracle.first_mismatches.size(); ++m) {
        EXPECT_EQ(engine.first_mismatches[m].index.front(),
                  static_cast<std::int64_t>(oracle.first_mismatches[m]));
      }
    }
  }
  for (const DType dtype : {DType::F16, DType::BF16}) {
    std::vector<std::uint16_t> every(65536);
    for (std::size_t bits = 0; bits < every.size(); ++bits) {
      every[bits] = static_cast<std::uint16_t>(bits);
    }
    const Tensor all = make(dtype, {65536}, every);
    std::vector<double> decoded(every.size());
    all.decode(0, every.size(), decoded.data());
    for (std::size_t bits = 0; bits < every.size(); ++bits) {
      const double expected = bench::element_value(all, bits);
      ASSERT_TRUE(std::isnan(expected) ? std::isnan(decoded[bits])
                                       : std::bit_cast<std::uint64_t>(decoded[bits]) ==
                                             std::bit_cast<std::uint64_t>(expected))
          << dtype_torch_name(dtype) << " bits " << bits;
    }
  }
}

TEST(CompareTensors, DecodePastTheEndThrows) {
  const Tensor t = f64({1.0, 2.0});
  std::vector<double> out(3);
  EXPECT_THROW(t.decode(1, 2, out.data()), std::out_of_range);
  EXPECT_THROW(t.decode(3, 0, out.data()), std::out_of_range);
  EXPECT_NO_THROW(t.decode(2, 0, out.data()));
}

} // namespace kbench::compare
