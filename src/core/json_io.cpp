#include "core/json_io.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

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

void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           std::filesystem::perms perms) {
  // A name of its own per write: threads or processes writing the same path at once each
  // rename a whole file over it, and a reader sees one of them, never a mix.
  static std::atomic<unsigned long> writes{0};
  const std::filesystem::path temporary =
      path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) {
      throw std::runtime_error(path.string() + ": cannot write the file");
    }
    out << text;
    if (!out) {
      throw std::runtime_error(path.string() + ": write failed");
    }
  }
  std::filesystem::permissions(temporary, perms);
  std::filesystem::rename(temporary, path);
}

void write_json_file(const std::filesystem::path& path, const nlohmann::json& document) {
  write_file_atomically(path, document.dump(2) + "\n",
                        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                            std::filesystem::perms::group_read |
                            std::filesystem::perms::others_read);
}

std::vector<double> number_array(const nlohmann::json& body, const char* key) {
  std::vector<double> out;
  for (const auto& value : body.value(key, nlohmann::json::array())) {
    out.push_back(value.is_number() ? value.get<double>() : -1.0);
  }
  return out;
}

namespace {

// Long values (a whole object given where a number belongs) are cut so the message stays a line.
constexpr std::size_t kExcerptChars = 60;

std::string excerpt(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > kExcerptChars) {
    text = text.substr(0, kExcerptChars) + "...";
  }
  return text;
}

} // namespace

void throw_field_error(const std::string& path, std::string_view expected,
                       const nlohmann::json& got) {
  throw JsonFieldError(path + ": expected " + std::string(expected) + ", got " + excerpt(got));
}

JsonObjectReader::JsonObjectReader(const nlohmann::json& object, std::string path,
                                   NullNumbers nulls)
    : m_object(object), m_path(std::move(path)), m_nulls(nulls) {
  if (!m_object.is_object()) {
    throw_field_error(m_path, "an object", m_object);
  }
}

const nlohmann::json* JsonObjectReader::find(std::string_view key) const {
  const auto it = m_object.find(std::string(key));
  if (it == m_object.end()) {
    return nullptr;
  }
  m_read.emplace(key);
  return &*it;
}

std::optional<JsonObjectReader> JsonObjectReader::object(std::string_view key) const {
  const nlohmann::json* value = find(key);
  if (value == nullptr || value->is_null()) {
    return std::nullopt;
  }
  return JsonObjectReader(*value, path_of(key), m_nulls);
}

std::vector<std::pair<const nlohmann::json*, std::string>>
JsonObjectReader::elements(std::string_view key) const {
  std::vector<std::pair<const nlohmann::json*, std::string>> out;
  const nlohmann::json* value = find(key);
  if (value == nullptr) {
    return out;
  }
  if (!value->is_array()) {
    throw_field_error(path_of(key), "an array", *value);
  }
  for (std::size_t i = 0; i < value->size(); ++i) {
    out.emplace_back(&(*value)[i], path_of(key) + "[" + std::to_string(i) + "]");
  }
  return out;
}

void JsonObjectReader::reject_unread(std::string_view expected) const {
  for (const auto& [key, value] : m_object.items()) {
    if (m_read.find(key) == m_read.end()) {
      throw JsonFieldError(path_of(key) + ": unknown field; expected " + std::string(expected));
    }
  }
}

namespace json_detail {

std::int64_t signed_integer(const nlohmann::json& value, const std::string& path, std::int64_t low,
                            std::int64_t high) {
  const std::string range =
      "an integer from " + std::to_string(low) + " to " + std::to_string(high);
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(high)) {
      throw_field_error(path, range, value);
    }
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  if (!value.is_number_integer()) {
    throw_field_error(path, "an integer", value);
  }
  const std::int64_t number = value.get<std::int64_t>();
  if (number < low || number > high) {
    throw_field_error(path, range, value);
  }
  return number;
}

std::uint64_t unsigned_integer(const nlohmann::json& value, const std::string& path,
                               std::uint64_t high) {
  if (!value.is_number_integer()) {
    throw_field_error(path, "a non-negative integer", value);
  }
  if (!value.is_number_unsigned() && value.get<std::int64_t>() < 0) {
    throw_field_error(path, "a non-negative integer", value);
  }
  const std::uint64_t number = value.get<std::uint64_t>();
  if (number > high) {
    throw_field_error(path, "a non-negative integer up to " + std::to_string(high), value);
  }
  return number;
}

} // namespace json_detail

} // namespace kbench
