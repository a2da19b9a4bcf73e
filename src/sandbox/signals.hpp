#pragma once
// Names and descriptions of the signals a worker can die of, for messages a person can act on.
#include <string>

namespace kbench::sandbox {

std::string signal_name(int signal);        // "SIGSEGV"
std::string signal_description(int signal); // "segmentation fault (invalid memory access)"

} // namespace kbench::sandbox
