#pragma once
// Elementwise tolerance check: |c - r| <= atol + rtol * |r|, NaN/inf only match themselves.
#include "compare/safetensors.hpp"
#include "core/tensor_comparison.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace kbench::compare {

// The rule for one element, candidate value c against reference value r: within tolerance, or
// the same non-finite value on both sides (NaN with NaN, +inf with +inf, -inf with -inf).
// Inline so that compare_tensors' loop still calls nothing; every other judgement of "would
// this value pass" (trivial answers, problem findings) uses it too, so they cannot drift apart.
inline bool within_tolerance(double c, double r, double atol, double rtol) {
  if (std::isfinite(c) && std::isfinite(r)) {
    return std::fabs(c - r) <= atol + rtol * std::fabs(r);
  }
  return (std::isnan(c) && std::isnan(r)) || (!std::isnan(c) && c == r);
}

// KernelBench's defaults, by the reference dtype: fp32 and fp64 1e-4, fp16 and bf16 1e-2,
// integers and bool exact.
Tolerance default_tolerance(DType dtype);

// Compares shape and dtype first (a difference fails without an elementwise pass), then values.
TensorComparison compare_tensors(const Tensor& candidate, const Tensor& reference,
                                 const Tolerance& tolerance, std::size_t max_reported = 5);

// compare_tensors(...).passed, without the figures: it stops at the first element that fails.
// For the judgements that need only the verdict (is an output an input passed through, is a
// trial's output another's): they read GiBs of outputs per trial, and the answer is nearly
// always settled by the first elements.
bool all_within_tolerance(const Tensor& candidate, const Tensor& reference,
                          const Tolerance& tolerance);

} // namespace kbench::compare
