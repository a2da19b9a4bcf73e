#pragma once
// The evaluation engine: one problem x one candidate on one device (docs/architecture.md, "The
// pipeline of one evaluation"). The command line, the suite runner and the agent all call
// `evaluate`.
#include "core/options.hpp"
#include "core/result.hpp"
#include "pipeline/gpu_sharing.hpp"

#include <functional>
#include <string_view>

namespace kbench {

// Called with a short description of each stage as it starts ("compiling", "timing").
using ProgressCallback = std::function<void(std::string_view stage)>;

// Never throws for problems with the inputs or the candidate: every failure is a status and a
// message in the result.
EvalResult evaluate(const EvalOptions& options, const ProgressCallback& progress = {},
                    const GpuSharing& sharing = {});

} // namespace kbench
