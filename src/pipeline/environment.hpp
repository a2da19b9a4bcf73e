#pragma once
// The torch environment the workers embed: which interpreter, and which torch it holds. A
// stored result's key names the torch version (store/, the evaluation service), so a request
// can be matched against earlier results before any worker starts.
#include <filesystem>
#include <string>

namespace kbench {

// `python`, or the interpreter kbench was built against when it is empty.
std::filesystem::path interpreter_of(const std::filesystem::path& python);

// torch.__version__ of that interpreter's environment ("2.11.0+cu130"), read from
// torch/version.py without importing torch (about 50 ms), once per interpreter and process.
// Empty when it cannot be read (no torch there: the evaluation will say so).
std::string torch_version_of(const std::filesystem::path& python);

} // namespace kbench
