#pragma once
// Reading and writing JSON documents with errors that name the file, and reading a document's
// fields into typed values with errors that name the field.
//
// The field reader is shared by every `*_from_json` in core (options, results): each of them
// reads documents a person or another program wrote, so a wrong type must come back as a sentence
// ("options.trials: expected an integer, got \"five\""), never as nlohmann's exception text.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kbench {

// Throws std::runtime_error "<path>: <what>" (with the line for parse errors).
nlohmann::json read_json_file(const std::filesystem::path& path);
// Writes atomically (temporary file + rename) so a reader never sees half a document.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& document);
// The same for any text, with the file's permissions; throws std::runtime_error naming the path.
void write_file_atomically(const std::filesystem::path& path, std::string_view text,
                           std::filesystem::perms perms);

// The elements of an array field of a worker's (untrusted) answer, in order. An element that is
// not a number reads as -1, which callers drop as an invalid sample, so positions still line up.
std::vector<double> number_array(const nlohmann::json& body, const char* key);

// What a `*_from_json` gives back: the value, or an error that names the field. Bad input is an
// expected outcome for a service request, so it is data here, not an exception.
template <typename T>
struct Decoded {
  std::optional<T> value;
  std::string error; // "<field path>: expected ..., got ..."; empty when value is set
};

// Thrown inside the readers below and turned into a Decoded::error at the public boundary; it
// never leaves a `*_from_json`.
struct JsonFieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "<path>: expected <expected>, got <the value, shortened>".
[[noreturn]] void throw_field_error(const std::string& path, std::string_view expected,
                                    const nlohmann::json& got);

// How a reader takes `null` where a number belongs. kbench's own documents write non-finite
// numbers as null, so reading them back takes null as NaN; a request must say what it means.
enum class NullNumbers { error, nan };

// One JSON object whose fields are read by key. Absent keys leave the target as it was (the
// caller starts from defaults); a present key of the wrong type throws JsonFieldError naming
// "<path>.<key>". Remembers which keys were read, so that `reject_unread` can refuse a field the
// reader does not know.
class JsonObjectReader {
public:
  JsonObjectReader(const nlohmann::json& object, std::string path,
                   NullNumbers nulls = NullNumbers::error);

  const std::string& path() const { return m_path; }
  // "<path>.<key>", or just the key at a document's top level (path "").
  std::string path_of(std::string_view key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
  }
  // The field, or nullptr when absent; marks it read.
  const nlohmann::json* find(std::string_view key) const;
  // The field as a nested object reader; absent or null gives nullopt.
  std::optional<JsonObjectReader> object(std::string_view key) const;
  // Each element of an array field, as "<path>.<key>[i]"; absent gives none.
  std::vector<std::pair<const nlohmann::json*, std::string>> elements(std::string_view key) const;

  template <typename T>
  void read(std::string_view key, T& out) const {
    if (const nlohmann::json* value = find(key)) {
      out = convert<T>(*value, path_of(key));
    }
  }

  // Throws for the first key (in key order) that no read, find, object or elements call asked
  // for, with `expected` saying what would have been accepted.
  void reject_unread(std::string_view expected) const;

  template <typename T>
  T convert(const nlohmann::json& value, const std::string& path) const;

private:
  const nlohmann::json& m_object;
  std::string m_path;
  NullNumbers m_nulls;
  mutable std::set<std::string, std::less<>> m_read;
};

namespace json_detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_set : std::false_type {};
template <typename T>
struct is_set<std::set<T>> : std::true_type {};
template <typename T>
struct is_string_map : std::false_type {};
template <typename T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

std::int64_t signed_integer(const nlohmann::json& value, const std::string& path, std::int64_t low,
                            std::int64_t high);
std::uint64_t unsigned_integer(const nlohmann::json& value, const std::string& path,
                               std::uint64_t high);
} // namespace json_detail

template <typename T>
T JsonObjectReader::convert(const nlohmann::json& value, const std::string& path) const {
  using namespace json_detail;
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    return value;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) {
      throw_field_error(path, "true or false", value);
    }
    return value.get<bool>();
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(
        signed_integer(value, path, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(unsigned_integer(value, path, std::numeric_limits<T>::max()));
  } else if constexpr (std::is_same_v<T, double>) {
    if (value.is_null() && m_nulls == NullNumbers::nan) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (!value.is_number()) {
      throw_field_error(path, "a number", value);
    }
    return value.get<double>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) {
      throw_field_error(path, "a string", value);
    }
    return value.get<std::string>();
  } else if constexpr (std::is_same_v<T, std::filesystem::path>) {
    if (!value.is_string()) {
      throw_field_error(path, "a path (a string)", value);
    }
    return std::filesystem::path(value.get<std::string>());
  } else if constexpr (is_optional<T>::value) {
    if (value.is_null()) {
      return std::nullopt;
    }
    return convert<typename T::value_type>(value, path);
  } else if constexpr (is_vector<T>::value || is_set<T>::value) {
    if (!value.is_array()) {
      throw_field_error(path, "an array", value);
    }
    T out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      out.insert(out.end(),
                 convert<typename T::value_type>(value[i], path + "[" + std::to_string(i) + "]"));
    }
    return out;
  } else if constexpr (is_string_map<T>::value) {
    if (!value.is_object()) {
      throw_field_error(path, "an object", value);
    }
    T out;
    for (const auto& [key, element] : value.items()) {
      out.emplace(key, convert<typename T::mapped_type>(element, path + "." + key));
    }
    return out;
  } else {
    static_assert(!sizeof(T), "JsonObjectReader cannot read this type");
  }
}

} // namespace kbench
