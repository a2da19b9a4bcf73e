#pragma once
// Reading and writing JSON documents with errors that name the file.
#include <nlohmann/json.hpp>

#include <filesystem>

namespace kbench {

// Throws std::runtime_error "<path>: <what>" (with the line for parse errors).
nlohmann::json read_json_file(const std::filesystem::path& path);
// Writes atomically (temporary file + rename) so a reader never sees half a document.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& document);

} // namespace kbench
