#pragma once
// The clean environment a worker starts with: a short allow-list of the orchestrator's
// variables (paths to the toolchain and the driver, locale), then kbench's own settings.
// Nothing else leaks in: not the caller's PYTHONPATH, not tokens or keys.
#include <map>
#include <string>
#include <vector>

namespace kbench::sandbox {

using EnvironmentMap = std::map<std::string, std::string>;

// Variables taken from the orchestrator's environment when set there.
const std::vector<std::string>& inherited_variables();

// Builds the environment: inherited variables, then `overrides` (which win), then the settings
// that every process kbench starts must have (NVLink multicast off, see KINDS.md).
EnvironmentMap worker_environment(const EnvironmentMap& overrides);

std::vector<std::string> to_envp(const EnvironmentMap& environment);

} // namespace kbench::sandbox
