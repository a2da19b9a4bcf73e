#include "compare/safetensors.hpp"

#include "compare/element_blocks.hpp"
#include "compare/tensor_file_open.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

namespace kbench::compare {

namespace fs = std::filesystem;

// Tensor data is stored little-endian and decoded with memcpy; a big-endian host would need
// byte swaps that nothing here does.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little-endian");

namespace {

// A header larger than this is not a tensor file we produced; refuse it before allocating.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";

struct DTypeInfo {
  DType dtype;
  const char* name;
  const char* torch_name;
  std::size_t size;
  bool floating;
};

// Indexed by the enum's value; the static_asserts below keep the two in step.
constexpr std::array<DTypeInfo, 10> kDTypes = {{
    {DType::F64, "F64", "float64", 8, true},
    {DType::F32, "F32", "float32", 4, true},
    {DType::F16, "F16", "float16", 2, true},
    {DType::BF16, "BF16", "bfloat16", 2, true},
    {DType::I64, "I64", "int64", 8, false},
    {DType::I32, "I32", "int32", 4, false},
    {DType::I16, "I16", "int16", 2, false},
    {DType::I8, "I8", "int8", 1, false},
    {DType::U8, "U8", "uint8", 1, false},
    {DType::BOOL, "BOOL", "bool", 1, false},
}};
static_assert(kDTypes[static_cast<std::size_t>(DType::F16)].dtype == DType::F16);
static_assert(kDTypes[static_cast<std::size_t>(DType::BOOL)].dtype == DType::BOOL);

const DTypeInfo& info(DType dtype) {
  return kDTypes.at(static_cast<std::size_t>(dtype));
}

template <typename T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Every value is exact in double.
double half_to_double(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24); // zero and subnormals: mantissa * 2^-14 * 2^-10
  } else if (exponent == 0x1F) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else {
    magnitude = std::ldexp(mantissa | 0x400, exponent - 25); // implicit leading 1, bias 15 + 10
  }
  return std::copysign(magnitude, (bits & 0x8000) ? -1.0 : 1.0);
}

// bfloat16 is the upper half of a float32.
double bfloat16_to_double(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

// Every half value, decoded once: binary16 is exact in float, and a table read is several times
// faster than decoding bit fields per element.
const std::array<float, 65536>& half_table() {
  static const auto table = [] {
    std::array<float, 65536> values{};
    for (std::uint32_t bits = 0; bits < values.size(); ++bits) {
      values[bits] = static_cast<float>(half_to_double(static_cast<std::uint16_t>(bits)));
    }
    return values;
  }();
  return table;
}

template <typename T, typename Convert>
void decode_run(const std::byte* p, std::size_t count, double* out, Convert convert) {
  for (std::size_t i = 0; i < count; ++i) {
    out[i] = convert(load<T>(p + i * sizeof(T)));
  }
}

// A stream rather than operator+ chains: GCC 12 at -O2 raises a false -Wrestrict on the latter.
std::string offsets_string(std::uint64_t begin, std::uint64_t end) {
  std::ostringstream out;
  out << '[' << begin << ", " << end << ']';
  return out.str();
}

[[noreturn]] void fail(const fs::path& path, const std::string& problem) {
  throw TensorFileError(path.string() + ": " + problem);
}

[[noreturn]] void fail_tensor(const fs::path& path, const std::string& name,
                              const std::string& problem) {
  fail(path, "tensor '" + name + "': " + problem);
}

// Product of non-negative factors, or false on uint64 overflow.
bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// A tensor's header entry, validated against the data buffer but not yet read.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t begin;
  std::uint64_t end;
};

DType parse_dtype(const fs::path& path, const std::string& name, const nlohmann::json& value) {
  if (!value.is_string()) {
    fail_tensor(path, name, "dtype is not a string");
  }
  try {
    return dtype_from_name(value.get<std::string>());
  } catch (const std::invalid_argument&) {
    fail_tensor(path, name, "unknown dtype " + value.dump());
  }
}

std::vector<std::int64_t> parse_shape(const fs::path& path, const std::string& name,
                                      const nlohmann::json& value) {
  if (!value.is_array()) {
    fail_tensor(path, name, "shape is not an array");
  }
  std::vector<std::int64_t> shape;
  for (const auto& dim : value) {
    // nlohmann stores non-negative integers as unsigned and negative ones as signed.
    if (dim.is_number_integer() && !dim.is_number_unsigned()) {
      fail_tensor(path, name, "negative dimension in shape " + value.dump());
    }
    if (!dim.is_number_unsigned() ||
        dim.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())) {
      fail_tensor(path, name, "shape " + value.dump() + " holds a non-integer or huge dimension");
    }
    shape.push_back(static_cast<std::int64_t>(dim.get<std::uint64_t>()));
  }
  return shape;
}

std::pair<std::uint64_t, std::uint64_t> parse_offsets(const fs::path& path, const std::string& name,
                                                      const nlohmann::json& value) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number_unsigned() ||
      !value[1].is_number_unsigned()) {
    fail_tensor(path, name, "data_offsets " + value.dump() + " is not two non-negative integers");
  }
  return {value[0].get<std::uint64_t>(), value[1].get<std::uint64_t>()};
}

// Byte size that `shape` of `dtype` needs, checked for overflow (a hostile shape such as
// [2^40, 2^40] must not wrap around to a small number that matches the offsets).
std::uint64_t needed_bytes(const fs::path& path, const std::string& name, DType dtype,
                           const std::vector<std::int64_t>& shape) {
  std::uint64_t bytes = dtype_size(dtype);
  for (std::int64_t dim : shape) {
    if (!checked_mul(bytes, static_cast<std::uint64_t>(dim), bytes)) {
      fail_tensor(path, name, "shape " + shape_string(shape) + " overflows the size computation");
    }
  }
  return bytes;
}

Entry parse_entry(const fs::path& path, const std::string& name, const nlohmann::json& value,
                  std::uint64_t buffer_size) {
  if (!value.is_object()) {
    fail_tensor(path, name, "entry is not a JSON object");
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets") {
      fail_tensor(path, name, "unexpected field '" + it.key() + "'");
    }
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(field)) {
      fail_tensor(path, name, std::string("missing field '") + field + "'");
    }
  }
  Entry entry{name, parse_dtype(path, name, value["dtype"]),
              parse_shape(path, name, value["shape"]), 0, 0};
  std::tie(entry.begin, entry.end) = parse_offsets(path, name, value["data_offsets"]);
  const std::string offsets = offsets_string(entry.begin, entry.end);
  if (entry.end < entry.begin) {
    fail_tensor(path, name, "data_offsets " + offsets + " end before they begin");
  }
  if (entry.end > buffer_size) {
    fail_tensor(path, name,
                "data_offsets " + offsets + " lie outside the data buffer of " +
                    std::to_string(buffer_size) + " bytes");
  }
  const std::uint64_t needed = needed_bytes(path, name, entry.dtype, entry.shape);
  if (entry.end - entry.begin != needed) {
    fail_tensor(path, name,
                "data_offsets " + offsets + " hold " + std::to_string(entry.end - entry.begin) +
                    " bytes but shape " + shape_string(entry.shape) + " of " +
                    dtype_name(entry.dtype) + " needs " + std::to_string(needed));
  }
  return entry;
}

std::map<std::string, std::string> parse_metadata(const fs::path& path,
                                                  const nlohmann::json& value) {
  if (!value.is_object()) {
    fail(path, "__metadata__ is not a JSON object");
  }
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      fail(path, "__metadata__ entry '" + key + "' is not a string");
    }
    metadata[key] = item.get<std::string>();
  }
  return metadata;
}

// Two tensors sharing bytes would let a candidate alias outputs; empty tensors share nothing.
void check_no_overlap(const fs::path& path, std::vector<const Entry*> entries) {
  std::erase_if(entries, [](const Entry* e) { return e->begin == e->end; });
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (std::size_t i = 1; i < entries.size(); ++i) {
    const Entry& prev = *entries[i - 1];
    const Entry& next = *entries[i];
    if (next.begin < prev.end) {
      fail(path, "tensors '" + prev.name + "' " + offsets_string(prev.begin, prev.end) + " and '" +
                     next.name + "' " + offsets_string(next.begin, next.end) + " overlap");
    }
  }
}

// A large read is split into blocks read by several threads (element_blocks.hpp, a block being
// 1 MiB here): a tensor of several GiB is read, and its fresh pages faulted in, on every thread.
void read_exactly(const OpenedTensorFile& in, const fs::path& path, void* out, std::uint64_t offset,
                  std::uint64_t size, const std::string& what) {
  auto* bytes = static_cast<char*>(out);
  const auto blocks = over_element_blocks<bool>(
      size,
      [&](std::size_t first, std::size_t count) {
        return in.read_at(bytes + first, offset + first, count);
      },
      [](bool read) { return !read; });
  if (!std::all_of(blocks.begin(), blocks.end(),
                   [](const std::optional<bool>& read) { return read.value_or(false); })) {
    fail(path, "file ended or failed while reading " + what);
  }
}

} // namespace

const char* dtype_name(DType dtype) {
  return info(dtype).name;
}
const char* dtype_torch_name(DType dtype) {
  return info(dtype).torch_name;
}
std::size_t dtype_size(DType dtype) {
  return info(dtype).size;
}
bool dtype_is_floating(DType dtype) {
  return info(dtype).floating;
}

DType dtype_from_name(const std::string& name) {
  for (const DTypeInfo& candidate : kDTypes) {
    if (name == candidate.name) {
      return candidate.dtype;
    }
  }
  throw std::invalid_argument("unknown dtype '" + name + "'");
}

std::size_t Tensor::numel() const {
  std::size_t count = 1;
  for (std::int64_t dim : shape) {
    count *= dim > 0 ? static_cast<std::size_t>(dim) : 0; // a negative dim is malformed: empty
  }
  return count;
}

double Tensor::value(std::size_t flat_index) const {
  double out = 0;
  decode(flat_index, 1, &out);
  return out;
}

void Tensor::decode(std::size_t first, std::size_t count, double* out) const {
  const std::size_t size = dtype_size(dtype);
  const std::size_t available = data.size() / size;
  if (first > available || count > available - first) {
    throw std::out_of_range("Tensor::decode: elements [" + std::to_string(first) + ", " +
                            std::to_string(first + count) + ") past the end of " +
                            std::to_string(data.size()) + " bytes");
  }
  const std::byte* p = data.data() + first * size;
  const auto as_double = [](auto v) { return static_cast<double>(v); };
  switch (dtype) {
  case DType::F64:
    return decode_run<double>(p, count, out, as_double);
  case DType::F32:
    return decode_run<float>(p, count, out, as_double);
  case DType::F16:
    return decode_run<std::uint16_t>(p, count, out, [&table = half_table()](std::uint16_t bits) {
      return static_cast<double>(table[bits]);
    });
  case DType::BF16:
    return decode_run<std::uint16_t>(p, count, out, bfloat16_to_double);
  case DType::I64:
    return decode_run<std::int64_t>(p, count, out, as_double);
  case DType::I32:
    return decode_run<std::int32_t>(p, count, out, as_double);
  case DType::I16:
    return decode_run<std::int16_t>(p, count, out, as_double);
  case DType::I8:
    return decode_run<std::int8_t>(p, count, out, as_double);
  case DType::U8:
    return decode_run<std::uint8_t>(p, count, out, as_double);
  case DType::BOOL:
    return decode_run<std::uint8_t>(p, count, out,
                                    [](std::uint8_t v) { return v != 0 ? 1.0 : 0.0; });
  }
  throw std::logic_error("Tensor::decode: invalid dtype");
}

TensorFile read_safetensors(const fs::path& path) {
  const OpenedTensorFile in = open_tensor_file(path);
  const std::uint64_t file_size = in.size;
  if (file_size < 8) {
    fail(path,
         "file is " + std::to_string(file_size) + " bytes, too short for the 8-byte header length");
  }
  std::array<std::uint8_t, 8> length_bytes{};
  read_exactly(in, path, length_bytes.data(), 0, 8, "the header length");
  std::uint64_t header_len = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    header_len |= std::uint64_t{length_bytes[i]} << (8 * i);
  }
  if (header_len > kMaxHeaderBytes) {
    fail(path, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_len > file_size - 8) {
    fail(path, "header length " + std::to_string(header_len) + " is larger than the file (" +
                   std::to_string(file_size - 8) + " bytes after the length field)");
  }

  std::string header_text(header_len, '\0');
  read_exactly(in, path, header_text.data(), 8, header_len, "the header");
  const nlohmann::json header = nlohmann::json::parse(header_text, nullptr, false);
  if (header.is_discarded()) {
    fail(path, "header is not valid JSON");
  }
  if (!header.is_object()) {
    fail(path, "header is not a JSON object");
  }

  const std::uint64_t data_start = 8 + header_len;
  const std::uint64_t buffer_size = file_size - data_start;
  TensorFile result;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      result.metadata = parse_metadata(path, value);
    } else {
      entries.push_back(parse_entry(path, key, value, buffer_size));
    }
  }
  std::vector<const Entry*> views;
  for (const Entry& entry : entries) {
    views.push_back(&entry);
  }
  check_no_overlap(path, views);

  // Sizes are bounded by the file size now, so these allocations cannot be inflated by a header.
  for (Entry& entry : entries) {
    Tensor tensor;
    tensor.dtype = entry.dtype;
    tensor.shape = std::move(entry.shape);
    tensor.data.resize(entry.end - entry.begin);
    read_exactly(in, path, tensor.data.data(), data_start + entry.begin, tensor.data.size(),
                 "tensor '" + entry.name + "'");
    result.tensors.emplace(entry.name, std::move(tensor));
  }
  return result;
}

void write_safetensors(const fs::path& path, const TensorFile& file) {
  // ordered_json keeps __metadata__ first and the tensors in name order, as the reference does.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!file.metadata.empty()) {
    header[std::string(kMetadataKey)] = file.metadata;
  }
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : file.tensors) {
    if (name == kMetadataKey) {
      fail(path, "a tensor may not be named '__metadata__'");
    }
    for (std::int64_t dim : tensor.shape) {
      if (dim < 0) {
        fail_tensor(path, name, "negative dimension in shape " + shape_string(tensor.shape));
      }
    }
    const std::uint64_t needed = needed_bytes(path, name, tensor.dtype, tensor.shape);
    if (tensor.data.size() != needed) {
      fail_tensor(path, name,
                  "holds " + std::to_string(tensor.data.size()) + " bytes but shape " +
                      shape_string(tensor.shape) + " of " + dtype_name(tensor.dtype) + " needs " +
                      std::to_string(needed));
    }
    header[name] = {{"dtype", dtype_name(tensor.dtype)},
                    {"shape", tensor.shape},
                    {"data_offsets", {offset, offset + needed}}};
    offset += needed;
  }

  std::string header_text;
  try {
    header_text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("cannot encode header: ") + e.what()); // e.g. invalid UTF-8 names
  }
  header_text.append((8 - header_text.size() % 8) % 8, ' '); // keeps the data 8-byte aligned

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    fail(path, "cannot open file for writing");
  }
  std::array<char, 8> length_bytes{};
  for (std::size_t i = 0; i < 8; ++i) {
    length_bytes[i] = static_cast<char>((std::uint64_t{header_text.size()} >> (8 * i)) & 0xFF);
  }
  out.write(length_bytes.data(), length_bytes.size());
  out.write(header_text.data(), static_cast<std::streamsize>(header_text.size()));
  for (const auto& [name, tensor] : file.tensors) {
    out.write(reinterpret_cast<const char*>(tensor.data.data()),
              static_cast<std::streamsize>(tensor.data.size()));
  }
  out.close();
  if (!out) {
    fail(path, "write failed");
  }
}

std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out << (i ? ", " : "") << shape[i];
  }
  out << ']';
  return out.str();
}

} // namespace kbench::compare
