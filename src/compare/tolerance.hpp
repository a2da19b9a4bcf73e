#pragma once
// Elementwise tolerance check: |c - r| <= atol + rtol * |r|, NaN/inf only match themselves.
#include "compare/safetensors.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kbench::compare {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// KernelBench's defaults, by the reference dtype: fp32 and fp64 1e-4, fp16 and bf16 1e-2,
// integers and bool exact.
Tolerance default_tolerance(DType dtype);

struct Mismatch {
  std::vector<std::int64_t> index; // multi-dimensional index into the tensor
  double candidate = 0;
  double reference = 0;
};

struct TensorComparison {
  bool passed = false;
  std::string failure; // empty when passed; else e.g. "shape [4, 8] != reference shape [4, 9]"
  Tolerance tolerance;
  std::size_t numel = 0;
  std::size_t mismatches = 0;
  // Absolute error |c - r| and relative error |c - r| / |r| (elements with r == 0 are left out
  // of the relative figures; non-finite pairs are left out of all four and counted as mismatches
  // unless both sides hold the same non-finite value).
  double max_abs_err = 0, mean_abs_err = 0, max_rel_err = 0, mean_rel_err = 0;
  std::vector<Mismatch> first_mismatches; // at most `max_reported`, in index order
};

// Compares shape and dtype first (a difference fails without an elementwise pass), then values.
TensorComparison compare_tensors(const Tensor& candidate, const Tensor& reference,
                                 const Tolerance& tolerance, std::size_t max_reported = 5);

} // namespace kbench::compare
