#pragma once
// Comparing everything one forward call returned: the candidate's output file against the
// reference's, output by output, with tolerances that follow each output's dtype.
#include "compare/tolerance.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbench::compare {

struct ToleranceOverride {
  std::optional<double> atol; // applied to floating-point outputs only; integers stay exact
  std::optional<double> rtol;
};

struct OutputsComparison {
  bool passed = false;
  std::string failure; // for people: which output, how many elements, the worst example
  std::vector<std::pair<std::string, TensorComparison>> outputs;
};

Tolerance tolerance_for(DType reference_dtype, const ToleranceOverride& override_);
// The loosest atol and rtol any output may be judged with under `override_` (integers are
// exact, so a floating dtype's): a pair of values farther apart than this fails for every
// dtype, which lets a worker tell such pairs without writing them out.
Tolerance loosest_tolerance(const ToleranceOverride& override_);

// The reference file is trusted: an unreadable one throws TensorFileError. The candidate file
// is not: anything wrong with it is a failed comparison with a message.
OutputsComparison compare_output_files(const std::filesystem::path& candidate,
                                       const std::filesystem::path& reference,
                                       const ToleranceOverride& override_);

// "37 of 1024 elements differ beyond atol=1e-04 rtol=1e-04 (max abs err 1.0e-02 at [3, 17]:
// candidate 0.51, reference 0.50)"
std::string describe_failure(const std::string& name, const TensorComparison& comparison);

} // namespace kbench::compare
