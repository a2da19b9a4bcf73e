#pragma once
// How the kernels of a profiled call become the call: the combining rule of each metric, the
// combined record that `derive_call` (kernel_counters.hpp) then derives like any kernel, and
// which kernels are the candidate's own. Pure functions of the parsed report, kept apart from
// the derivation so that tests can pin each rule without a recorded fixture.
#include "counters/ncu_report.hpp"

#include <string>
#include <vector>

namespace kbench::counters {

// How the call's value of a metric combines its kernels' values.
enum class Combine { sum, max, longest, weighted_mean };

// By the metric's name: launch__* take the longest kernel's (a launch shape does not add up),
// *.peak_sustained the largest, *.sum add (counts and the duration), the rest (percentages,
// ratios, rates, clocks) are means weighted by each kernel's duration.
Combine combine_rule(const std::string& metric);

// One record for all `kernels`, each metric combined by its rule; named after the count and the
// longest kernel. A kernel without a duration weighs nothing in the means.
NcuKernel combine(const std::vector<NcuKernel>& kernels);

// Whether `kernel` (a name as ncu prints it) contains one of `own_names` as a whole identifier:
// "relu_kernel" is in "void relu_kernel<float>(float*)" but not in "relu_kernel2".
bool is_own(const std::string& kernel, const std::vector<std::string>& own_names);

} // namespace kbench::counters
