#include "compare/tolerance.hpp"

#include "compare/element_blocks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

namespace kbench::compare {

namespace {

// Row-major multi-dimensional index of a flat position. Only called for reported mismatches.
std::vector<std::int64_t> unravel(std::size_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    const auto extent = static_cast<std::size_t>(shape[d]);
    index[d] = static_cast<std::int64_t>(flat % extent);
    flat /= extent;
  }
  return index;
}

// Empty when the tensor's bytes match its shape; a hand-built Tensor could disagree, and value()
// would then throw part-way through the comparison.
std::string size_problem(const Tensor& tensor, const char* role) {
  const std::size_t needed = tensor.numel() * dtype_size(tensor.dtype);
  if (tensor.data.size() == needed) {
    return {};
  }
  return std::string(role) + " holds " + std::to_string(tensor.data.size()) + " bytes but shape " +
         shape_string(tensor.shape) + " of " + dtype_torch_name(tensor.dtype) + " needs " +
         std::to_string(needed);
}

std::string mismatch_summary(const TensorComparison& result) {
  std::ostringstream out;
  out << result.mismatches << " of " << result.numel << " elements differ beyond atol "
      << result.tolerance.atol << " + rtol " << result.tolerance.rtol
      << " * |reference| (max abs err " << result.max_abs_err << ", max rel err "
      << result.max_rel_err << ")";
  return out.str();
}

} // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::F32:
    return {1e-4, 1e-4};
  case DType::F16:
  case DType::BF16:
    return {1e-2, 1e-2};
  default:
    return {0, 0}; // integers and bool: exact
  }
}

namespace {

// Integer outputs are exact whatever the caller passed: a tolerance there would hide off-by-one
// indices or counts.
Tolerance effective_tolerance(const Tensor& reference, const Tolerance& tolerance) {
  return dtype_is_floating(reference.dtype) ? tolerance : Tolerance{};
}

} // namespace

bool all_within_tolerance(const Tensor& candidate, const Tensor& reference,
                          const Tolerance& tolerance) {
  if (candidate.dtype != reference.dtype || candidate.shape != reference.shape ||
      !size_problem(candidate, "candidate").empty() ||
      !size_problem(reference, "reference").empty()) {
    return false;
  }
  const Tolerance tol = effective_tolerance(reference, tolerance);
  // A block of elements per thread (element_blocks.hpp); the first element out of tolerance
  // ends its block and the blocks not yet started.
  const auto blocks = over_element_blocks<bool>(
      reference.numel(),
      [&](std::size_t begin, std::size_t size) {
        constexpr std::size_t kChunk = 2048;
        std::array<double, kChunk> candidate_chunk{}, reference_chunk{};
        for (std::size_t first = begin; first < begin + size; first += kChunk) {
          const std::size_t count = std::min(kChunk, begin + size - first);
          candidate.decode(first, count, candidate_chunk.data());
          reference.decode(first, count, reference_chunk.data());
          for (std::size_t j = 0; j < count; ++j) {
            if (!within_tolerance(candidate_chunk[j], reference_chunk[j], tol.atol, tol.rtol)) {
              return false;
            }
          }
        }
        return true;
      },
      [](bool within) { return !within; });
  return std::all_of(blocks.begin(), blocks.end(),
                     [](const std::optional<bool>& within) { return within.value_or(false); });
}

TensorComparison compare_tensors(const Tensor& candidate, const Tensor& reference,
                                 const Tolerance& tolerance, std::size_t max_reported) {
  TensorComparison result;
  result.tolerance = effective_tolerance(reference, tolerance);
  if (candidate.dtype != reference.dtype) {
    result.failure = std::string("dtype ") + dtype_torch_name(candidate.dtype) +
                     " != reference dtype " + dtype_torch_name(reference.dtype);
    return result;
  }
  if (candidate.shape != reference.shape) {
    result.failure = "shape " + shape_string(candidate.shape) + " != reference shape " +
                     shape_string(reference.shape);
    return result;
  }
  for (const auto& [tensor, role] :
       {std::pair{&candidate, "candidate"}, {&reference, "reference"}}) {
    if (std::string problem = size_problem(*tensor, role); !problem.empty()) {
      result.failure = problem;
      return result;
    }
  }

  const double atol = result.tolerance.atol;
  const double rtol = result.tolerance.rtol;
  result.numel = reference.numel();
  // The running figures are locals and the loop over a chunk calls nothing: across a call the
  // compiler keeps them in memory (every vector register is caller-saved), and each addition
  // would wait on a store. Mismatches are reported by a second pass over the chunks that have
  // them, which finds the same elements in the same order.
  double abs_sum = 0, rel_sum = 0, max_abs = 0, max_rel = 0;
  std::size_t abs_count = 0, rel_count = 0, mismatches = 0;
  // Decoded a chunk at a time (both chunks stay in L1/L2), compared in element order, so the
  // figures are those of an element-by-element loop, to the bit.
  constexpr std::size_t kChunk = 2048;
  std::array<double, kChunk> candidate_chunk{}, reference_chunk{};
  for (std::size_t first = 0; first < result.numel; first += kChunk) {
    const std::size_t count = std::min(kChunk, result.numel - first);
    candidate.decode(first, count, candidate_chunk.data());
    reference.decode(first, count, reference_chunk.data());
    std::size_t chunk_mismatches = 0;
    for (std::size_t j = 0; j < count; ++j) {
      const double c = candidate_chunk[j];
      const double r = reference_chunk[j];
      if (std::isfinite(c) && std::isfinite(r)) {
        const double abs_err = std::fabs(c - r);
        abs_sum += abs_err;
        ++abs_count;
        max_abs = std::max(max_abs, abs_err);
        if (r != 0) {
          const double rel_err = abs_err / std::fabs(r);
          rel_sum += rel_err;
          ++rel_count;
          max_rel = std::max(max_rel, rel_err);
        }
      }
      chunk_mismatches += within_tolerance(c, r, atol, rtol) ? 0 : 1;
    }
    mismatches += chunk_mismatches;
    for (std::size_t j = 0;
         chunk_mismatches > 0 && j < count && result.first_mismatches.size() < max_reported; ++j) {
      const double c = candidate_chunk[j];
      const double r = reference_chunk[j];
      if (!within_tolerance(c, r, atol, rtol)) {
        result.first_mismatches.push_back({unravel(first + j, reference.shape), c, r});
      }
    }
  }
  result.mismatches = mismatches;
  result.max_abs_err = max_abs;
  result.max_rel_err = max_rel;
  result.mean_abs_err = abs_count ? abs_sum / static_cast<double>(abs_count) : 0;
  result.mean_rel_err = rel_count ? rel_sum / static_cast<double>(rel_count) : 0;
  result.passed = result.mismatches == 0;
  if (!result.passed) {
    result.failure = mismatch_summary(result);
  }
  return result;
}

} // namespace kbench::compare
