#pragma once
// Reading the problem and candidate files before any worker sees them, so that a wrong path
// or a file that is not Python source gets a message naming the file and what to do.
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
// not named *.py, or not UTF-8 text.
std::optional<SourceFile> read_source_file(const std::filesystem::path& path, const char* role,
                                           std::string& error);

} // namespace kbench
