#pragma once
// A GPU's peak figures as `kbench specs` prints them, one per line with its unit and source;
// the agent's get_gpu_specs tool shows the same text.
#include "counters/gpu_specs.hpp"

#include <string>

namespace kbench::report {

std::string format_specs(const counters::GpuSpecs& specs);

} // namespace kbench::report
