#pragma once
// The store's key of an evaluation before it runs: what `kbench eval` and `kbench suite` file a
// result under, and what the evaluation service matches a request against (store/store.hpp).
#include "core/options.hpp"

#include <optional>
#include <string>

namespace kbench {

// sched::content_key of the run's EvalKey, the name of the device it would run on here and the
// torch version of its environment; nullopt when the problem or the candidate cannot be read
// (the evaluation will say why).
std::optional<std::string> store_key(const EvalOptions& run);

} // namespace kbench
