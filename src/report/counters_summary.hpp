#pragma once
// The human summary's lines for `--profile`: the seed run page's fields (SOL, roofline,
// occupancy, caches, stalls, energy) for each side's call, each with its unit or its reason.
#include "core/result.hpp"

#include <string>

namespace kbench::report {

// Lines in the summary's "label      value" layout; empty when there are no counters.
std::string format_counters(const CountersInfo& counters);

} // namespace kbench::report
