#pragma once
// `kbench disassemble`: the SASS of the kernels a candidate compiles itself, for people and for
// an agent's tools. The candidate is built as an evaluation builds it (the compile worker, GPU
// hidden, TORCH_CUDA_ARCH_LIST set), then cuobjdump reads the extension libraries the build
// left; only the functions named by the candidate's `__global__` definitions are kept.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

struct DisassembleOptions {
  std::filesystem::path candidate;
  std::string arch;                // "9.0"; empty: the first GPU's
  std::filesystem::path python;    // empty: the worker's default
  std::filesystem::path cache_dir; // empty: the default cache
  bool all_functions = false;      // every function of the libraries, not only the candidate's
  std::chrono::seconds compile_timeout{600};
};

struct SassFunction {
  std::string mangled, name; // name demangled (the mangled one when it does not demangle)
  std::string arch;          // "sm_90"
  std::string library;       // the .so it came from
  std::string sass;          // cuobjdump's listing of the function
};

struct Disassembly {
  bool ok = false;
  std::string error; // when !ok: what went wrong and what to do
  std::string arch;
  std::vector<std::string> own_kernels; // from the candidate's source
  std::vector<SassFunction> functions;
  std::string tool; // the cuobjdump used
};

Disassembly disassemble(const DisassembleOptions& options);

// cuobjdump -sass output split by function ("Function : <mangled>" to the dotted end line).
std::vector<SassFunction> parse_cuobjdump_sass(const std::string& text);
// KBENCH_CUOBJDUMP, `cuobjdump` on PATH, /usr/local/cuda/bin, then the one the nvidia-cuda-
// cuobjdump wheel puts next to the Python environment's packages.
std::optional<std::filesystem::path> find_cuobjdump(const std::filesystem::path& python,
                                                    std::string& why_not);

} // namespace kbench
