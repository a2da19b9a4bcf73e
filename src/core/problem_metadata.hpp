#pragma once
// What a problem file declares for the harness in module-level constants, read from the source
// (kbench itself runs no Python). PopcornBench problems declare nothing; their defaults apply.
#include <optional>
#include <string>

namespace kbench {

// `KBENCH_WORLD_SIZE = N` at the start of a line: the ranks a collective problem runs on when
// neither --world-size nor the suite entry says. Empty when absent; `error` is set when the
// line is there but N is not an integer in [1, 64].
std::optional<int> declared_world_size(const std::string& problem_source, std::string& error);

} // namespace kbench
