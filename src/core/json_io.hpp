#pragma once
// Reading and writing JSON documents with errors that name the file.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <vector>

namespace kbench {

// Throws std::runtime_error "<path>: <what>" (with the line for parse errors).
nlohmann::json read_json_file(const std::filesystem::path& path);
// Writes atomically (temporary file + rename) so a reader never sees half a document.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& document);

// The elements of an array field of a worker's (untrusted) answer, in order. An element that is
// not a number reads as -1, which callers drop as an invalid sample, so positions still line up.
std::vector<double> number_array(const nlohmann::json& body, const char* key);

} // namespace kbench
