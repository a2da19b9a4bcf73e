#pragma once
// Elementwise tolerance check: |c - r| <= atol + rtol * |r|, NaN/inf only match themselves.
#include "compare/safetensors.hpp"
#include "core/tensor_comparison.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kbench::compare {

// KernelBench's defaults, by the reference dtype: fp32 and fp64 1e-4, fp16 and bf16 1e-2,
// integers and bool exact.
Tolerance default_tolerance(DType dtype);

// Compares shape and dtype first (a difference fails without an elementwise pass), then values.
TensorComparison compare_tensors(const Tensor& candidate, const Tensor& reference,
                                 const Tolerance& tolerance, std::size_t max_reported = 5);

} // namespace kbench::compare
