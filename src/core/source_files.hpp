#pragma once
// Reading the problem and candidate files before any worker sees them, so that a wrong path
// or a file that is not Python source gets a message naming the file and what to do.
#include "core/options.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace kbench {

struct SourceFile {
  std::filesystem::path path; // absolute
  std::string text;
  std::string sha256;
};

// Empty optional and `error` set when the file is missing, not a regular file, too large,
// not named *.py (a candidate may also be .cu or .cpp: docs/native-kernels.md), or not UTF-8.
std::optional<SourceFile> read_source_file(const std::filesystem::path& path, const char* role,
                                           std::string& error);

struct EvaluationSources {
  SourceFile problem, candidate;
  int world_size = 1;
};

// The problem and candidate files `options` names, read and checked, and the ranks to run:
// --world-size, else the problem's KBENCH_WORLD_SIZE line, else 1. Empty, with `error` set
// (naming the file), when one cannot be used.
std::optional<EvaluationSources> load_evaluation_sources(const EvalOptions& options,
                                                         std::string& error);

} // namespace kbench
