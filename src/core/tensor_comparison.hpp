#pragma once
// What comparing one output tensor with its reference found. The data lives in core, below
// compare/ which computes it, so that the result schema (core/result.hpp) can hold it without
// core depending on the comparator.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kbench {

// Elementwise rule: |c - r| <= atol + rtol * |r|.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

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

} // namespace kbench
