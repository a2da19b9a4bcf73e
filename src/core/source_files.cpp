#include "core/source_files.hpp"

#include "core/problem_metadata.hpp"
#include "core/sha256.hpp"

#include <fstream>
#include <sstream>

namespace kbench {
namespace {

constexpr std::uintmax_t kMaxSourceBytes = 4u << 20;

// Strict UTF-8 validation: overlong forms, surrogates and bytes past U+10FFFF are rejected.
std::optional<std::size_t> first_invalid_utf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) {
      return i;
    }
    for (std::size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) {
        return i;
      }
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::nullopt;
}

} // namespace

std::optional<SourceFile> read_source_file(const std::filesystem::path& path, const char* role,
                                           std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (!fs::exists(absolute, ec)) {
    error = std::string(role) + " file not found: " + path.string() + " (check the path)";
    return std::nullopt;
  }
  if (!fs::is_regular_file(absolute, ec)) {
    error = std::string(role) + " path " + path.string() + " is not a regular file";
    return std::nullopt;
  }
  // A candidate may also be one file in kbench's torch-free kernel format
  // (docs/native-kernels.md): .cu for a GPU, .cpp for the CPU.
  const bool candidate = std::string(role) == "candidate";
  const auto extension = absolute.extension();
  if (extension != ".py" && !(candidate && (extension == ".cu" || extension == ".cpp"))) {
    error = std::string(role) + " file " + path.string() +
            (candidate ? " is neither a Python file nor a .cu/.cpp file in kbench's torch-free "
                         "kernel format: expected a .py file in KernelBench format"
                       : " is not a Python file: expected a .py file in KernelBench format");
    return std::nullopt;
  }
  if (fs::file_size(absolute, ec) > kMaxSourceBytes) {
    error = std::string(role) + " file " + path.string() + " is larger than 4 MiB";
    return std::nullopt;
  }
  std::ifstream in(absolute, std::ios::binary);
  if (!in) {
    error = "cannot read the " + std::string(role) + " file " + path.string();
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  SourceFile file{fs::weakly_canonical(absolute), buffer.str(), {}};
  if (const auto bad = first_invalid_utf8(file.text)) {
    error = std::string(role) + " file " + path.string() + ": byte " + std::to_string(*bad) +
            " is not UTF-8 text; a " + role + " must be source text";
    return std::nullopt;
  }
  file.sha256 = sha256_hex(file.text);
  return file;
}

std::optional<EvaluationSources> load_evaluation_sources(const EvalOptions& options,
                                                         std::string& error) {
  auto problem = read_source_file(options.problem, "problem", error);
  if (!problem) {
    return std::nullopt;
  }
  EvaluationSources sources{std::move(*problem), {}, options.world_size};
  if (sources.world_size == 0) {
    const auto declared = declared_world_size(sources.problem.text, error);
    if (!error.empty()) {
      error = sources.problem.path.string() + ": " + error;
      return std::nullopt;
    }
    sources.world_size = declared.value_or(1);
  }
  auto candidate = read_source_file(options.candidate, "candidate", error);
  if (!candidate) {
    return std::nullopt;
  }
  sources.candidate = std::move(*candidate);
  return sources;
}

} // namespace kbench
