#include "core/json_io.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kbench {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(path.string() + ": cannot open the file");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    // Turn the byte offset into a line number a person can jump to.
    const std::size_t offset = std::min<std::size_t>(error.byte, text.size());
    const long line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n');
    throw std::runtime_error(path.string() + ":" + std::to_string(line) +
                             ": invalid JSON: " + error.what());
  }
}

void write_json_file(const std::filesystem::path& path, const nlohmann::json& document) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) {
      throw std::runtime_error(path.string() + ": cannot write the file");
    }
    out << document.dump(2) << "\n";
    if (!out) {
      throw std::runtime_error(path.string() + ": write failed");
    }
  }
  std::filesystem::rename(temporary, path);
}

std::vector<double> number_array(const nlohmann::json& body, const char* key) {
  std::vector<double> out;
  for (const auto& value : body.value(key, nlohmann::json::array())) {
    out.push_back(value.is_number() ? value.get<double>() : -1.0);
  }
  return out;
}

} // namespace kbench
