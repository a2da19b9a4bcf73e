#include "compare/compare_outputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kbench::compare {

Tolerance tolerance_for(DType reference_dtype, const ToleranceOverride& override_) {
  Tolerance tolerance = default_tolerance(reference_dtype);
  if (dtype_is_floating(reference_dtype)) {
    tolerance.atol = override_.atol.value_or(tolerance.atol);
    tolerance.rtol = override_.rtol.value_or(tolerance.rtol);
  }
  return tolerance;
}

Tolerance loosest_tolerance(const ToleranceOverride& override_) {
  Tolerance loosest{0, 0};
  for (const DType dtype : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    const Tolerance t = tolerance_for(dtype, override_);
    loosest.atol = std::max(loosest.atol, t.atol);
    loosest.rtol = std::max(loosest.rtol, t.rtol);
  }
  return loosest;
}

std::string describe_failure(const std::string& name, const TensorComparison& c) {
  if (c.mismatches == 0 || c.first_mismatches.empty()) {
    return fmt::format("{}: {}", name, c.failure);
  }
  std::string text = fmt::format("{}: {} of {} elements differ beyond atol={:g} rtol={:g}", name,
                                 c.mismatches, c.numel, c.tolerance.atol, c.tolerance.rtol);
  if (!c.first_mismatches.empty()) {
    const auto& m = c.first_mismatches.front();
    text += fmt::format(" (first at [{}]: candidate {:g}, reference {:g}; max abs err {:.3g})",
                        fmt::join(m.index, ", "), m.candidate, m.reference, c.max_abs_err);
  }
  return text;
}

OutputsComparison compare_output_files(const std::filesystem::path& candidate_path,
                                       const std::filesystem::path& reference_path,
                                       const ToleranceOverride& override_) {
  const TensorFile reference = read_safetensors(reference_path);
  OutputsComparison result;
  TensorFile candidate;
  try {
    candidate = read_safetensors(candidate_path);
  } catch (const TensorFileError& error) {
    result.failure = std::string("the candidate's outputs could not be read: ") + error.what();
    return result;
  }
  if (candidate.tensors.size() != reference.tensors.size()) {
    result.failure = fmt::format("forward returned {} output tensor(s); the reference returns {}",
                                 candidate.tensors.size(), reference.tensors.size());
    return result;
  }
  result.passed = true;
  for (const auto& [name, expected] : reference.tensors) {
    const auto found = candidate.tensors.find(name);
    TensorComparison comparison;
    if (found == candidate.tensors.end()) {
      comparison.failure = "missing from the candidate's outputs";
    } else {
      comparison =
          compare_tensors(found->second, expected, tolerance_for(expected.dtype, override_));
    }
    if (!comparison.passed && result.passed) {
      result.passed = false;
      result.failure = describe_failure(name, comparison);
    }
    result.outputs.emplace_back(name, std::move(comparison));
  }
  return result;
}

} // namespace kbench::compare
