#include "counters/gpu_specs.hpp"

#include "counters/embedded_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>

namespace kbench::counters {
namespace {

using nlohmann::json;

constexpr const char* kSchema = "kbench.gpu_peaks/1";
constexpr const char* kDerivedRow = "derived from the device";
// Documents give L2 sizes in MB and memory clocks in MHz, and drivers differ in the last digit
// (9000 against 9001 MHz for 18 Gbps GDDR6, 126 against 126.5 MiB of L2 on B200); the driver
// reports bytes and kHz. A 2 % band absorbs that and still tells products apart: the nearest
// neighbours differ by 20 % or more (50 against 60 MiB of L2, 1215 against 1593 MHz).
constexpr double kRelativeTolerance = 0.02;

// Every row has these; fp8 and fp64_tensor only where the GPU has them.
const std::vector<std::string> kRequiredPrecisions = {"fp64", "fp32", "tf32",
                                                      "fp16", "bf16", "int8"};
// The attributes kbench checks against the device, and the two descriptive ones.
const std::vector<std::string> kRowFigures = {"sm_count",        "l2_bytes",
                                              "boost_clock_mhz", "memory_clock_mhz",
                                              "memory_bus_bits", "dram_bandwidth_gbs"};

[[noreturn]] void malformed(const std::string& field, const std::string& problem) {
  throw std::runtime_error(fmt::format("gpu_peaks.json: {}: {}", field, problem));
}

bool is_positive_number(const json& value) {
  return value.is_number() && value.get<double>() > 0;
}

void check_string(const json& parent, const std::string& key, const std::string& path) {
  if (!parent.contains(key) || !parent[key].is_string() || parent[key].get<std::string>().empty()) {
    malformed(path + "." + key, "missing or not a non-empty string");
  }
}

// {"value": > 0, "source": "..."}, optionally "with_sparsity" (the datasheet's sparse figure,
// at least the dense one) and "accept" (other values the driver reports for the product).
void check_figure(const json& parent, const std::string& key, const std::string& path) {
  const std::string field = path + "." + key;
  if (!parent.contains(key) || !parent[key].is_object()) {
    malformed(field, "missing or not an object {\"value\": ..., \"source\": ...}");
  }
  const json& figure = parent[key];
  if (!figure.contains("value") || !is_positive_number(figure["value"])) {
    malformed(field + ".value", "missing or not a positive number");
  }
  check_string(figure, "source", field);
  if (figure.contains("with_sparsity") &&
      (!figure["with_sparsity"].is_number() ||
       figure["with_sparsity"].get<double>() < figure["value"].get<double>())) {
    malformed(field + ".with_sparsity", "not a number at least as large as the dense value");
  }
  if (figure.contains("accept") &&
      (!figure["accept"].is_array() ||
       !std::all_of(figure["accept"].begin(), figure["accept"].end(), is_positive_number))) {
    malformed(field + ".accept", "not an array of positive numbers");
  }
}

void check_compute_capability(const json& parent, const std::string& path) {
  static const std::regex pattern(R"(\d+\.\d+)");
  check_string(parent, "compute_capability", path);
  if (!std::regex_match(parent["compute_capability"].get<std::string>(), pattern)) {
    malformed(path + ".compute_capability", "not of the form MAJOR.MINOR");
  }
}

void check_row(const json& row, const std::string& path) {
  check_string(row, "row", path);
  if (!row.contains("names") || !row["names"].is_array() || row["names"].empty() ||
      !std::all_of(row["names"].begin(), row["names"].end(),
                   [](const json& n) { return n.is_string() && !n.get<std::string>().empty(); })) {
    malformed(path + ".names", "missing or not a non-empty array of device names");
  }
  check_compute_capability(row, path);
  for (const auto& key : kRowFigures) {
    check_figure(row, key, path);
  }
  for (const char* key : {"sm_count", "l2_bytes", "memory_bus_bits"}) {
    if (!row[key]["value"].is_number_integer()) {
      malformed(path + "." + key + ".value", "not a whole number");
    }
  }
  if (!row.contains("dense_tflops") || !row["dense_tflops"].is_object()) {
    malformed(path + ".dense_tflops", "missing or not an object");
  }
  for (const auto& precision : kRequiredPrecisions) {
    check_figure(row["dense_tflops"], precision, path + ".dense_tflops");
  }
  for (const auto& [precision, figure] : row["dense_tflops"].items()) {
    check_figure(row["dense_tflops"], precision, path + ".dense_tflops");
  }
}

void check_architecture(const json& arch, const std::string& path) {
  check_compute_capability(arch, path);
  check_string(arch, "name", path);
  if (!arch.contains("per_sm_per_clock") || !arch["per_sm_per_clock"].is_object() ||
      arch["per_sm_per_clock"].empty()) {
    malformed(path + ".per_sm_per_clock", "missing or not a non-empty object");
  }
  for (const auto& [precision, figure] : arch["per_sm_per_clock"].items()) {
    check_figure(arch["per_sm_per_clock"], precision, path + ".per_sm_per_clock");
  }
}

void check_table(const json& table) {
  if (!table.is_object()) {
    malformed("(top level)", "not a JSON object");
  }
  if (table.value("schema", "") != kSchema) {
    malformed("schema", fmt::format("missing or not \"{}\"", kSchema));
  }
  if (!table.contains("gpus") || !table["gpus"].is_array() || table["gpus"].empty()) {
    malformed("gpus", "missing or not a non-empty array");
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < table["gpus"].size(); ++i) {
    const json& row = table["gpus"][i];
    const std::string path =
        row.is_object() && row.contains("row") && row["row"].is_string()
            ? fmt::format("gpus[{}] (\"{}\")", i, row["row"].get<std::string>())
            : fmt::format("gpus[{}]", i);
    if (!row.is_object()) {
      malformed(path, "not an object");
    }
    check_row(row, path);
    if (!seen.insert(row["row"].get<std::string>()).second) {
      malformed(path + ".row", "the same row name appears twice");
    }
  }
  if (!table.contains("architectures") || !table["architectures"].is_array()) {
    malformed("architectures", "missing or not an array");
  }
  for (std::size_t i = 0; i < table["architectures"].size(); ++i) {
    const json& arch = table["architectures"][i];
    if (!arch.is_object()) {
      malformed(fmt::format("architectures[{}]", i), "not an object");
    }
    check_architecture(arch, fmt::format("architectures[{}]", i));
  }
}

char fold(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return fold(x) == fold(y); });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

// A name pattern matches the whole device name, ignoring case; '*' stands for any run of
// characters, for products whose driver names carry a suffix that varies (memory size, board).
bool name_matches(std::string_view pattern, std::string_view name) {
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;
  std::size_t resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && fold(pattern[p]) == fold(name[n])) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

const json* row_for_device_name(std::string_view device_name) {
  const std::string_view name = trimmed(device_name);
  for (const auto& row : peak_table()["gpus"]) {
    for (const auto& pattern : row["names"]) {
      if (name_matches(pattern.get<std::string>(), name)) {
        return &row;
      }
    }
  }
  return nullptr;
}

const json* architecture_for(int major, int minor) {
  const std::string cc = fmt::format("{}.{}", major, minor);
  for (const auto& arch : peak_table()["architectures"]) {
    if (arch["compute_capability"] == cc) {
      return &arch;
    }
  }
  return nullptr;
}

PeakFigure figure_of(const json& figure) {
  return {figure["value"].get<double>(), figure["source"].get<std::string>()};
}

GpuSpecs specs_from_row(const json& row) {
  GpuSpecs specs;
  specs.row = row["row"].get<std::string>();
  specs.from_table = true;
  specs.sm_count = row["sm_count"]["value"].get<int>();
  specs.l2_bytes = row["l2_bytes"]["value"].get<long long>();
  specs.boost_clock_mhz = row["boost_clock_mhz"]["value"].get<double>();
  specs.memory_clock_mhz = row["memory_clock_mhz"]["value"].get<double>();
  specs.memory_bus_bits = row["memory_bus_bits"]["value"].get<int>();
  specs.dram_bandwidth_gbs = figure_of(row["dram_bandwidth_gbs"]);
  for (const auto& [precision, figure] : row["dense_tflops"].items()) {
    specs.dense_tflops[precision] = figure_of(figure);
  }
  return specs;
}

// Whether the device's value is the row's (or one of its "accept" values), within `tolerance`
// relative to the table's value.
bool agrees(const json& figure, double reported, double tolerance) {
  auto close = [&](const json& expected) {
    const double e = expected.get<double>();
    return std::abs(reported - e) <= tolerance * e;
  };
  if (close(figure["value"])) {
    return true;
  }
  const json accept = figure.value("accept", json::array());
  return std::any_of(accept.begin(), accept.end(), close);
}

std::string table_value(const json& figure) {
  std::string text = fmt::format("{}", figure["value"].get<double>());
  for (const auto& other : figure.value("accept", json::array())) {
    text += fmt::format(" or {}", other.get<double>());
  }
  return text;
}

std::vector<std::string> mismatches(const json& row, const sched::GpuInfo& device) {
  std::vector<std::string> out;
  auto check = [&](const char* key, double reported, double tolerance, const std::string& what) {
    if (!agrees(row[key], reported, tolerance)) {
      out.push_back(fmt::format("{} (table: {})", what, table_value(row[key])));
    }
  };
  check("sm_count", device.sm_count, 0, fmt::format("{} SMs", device.sm_count));
  check("l2_bytes", static_cast<double>(device.l2_bytes), kRelativeTolerance,
        fmt::format("L2 of {} bytes", device.l2_bytes));
  check("memory_clock_mhz", device.memory_clock_khz / 1000.0, kRelativeTolerance,
        fmt::format("a memory clock of {:g} MHz", device.memory_clock_khz / 1000.0));
  check("memory_bus_bits", device.memory_bus_bits, 0,
        fmt::format("a {}-bit memory bus", device.memory_bus_bits));
  return out;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += (i ? separator : "") + parts[i];
  }
  return out;
}

// Double data rate: the driver reports the memory clock at half the transfer rate, for HBM and
// GDDR alike (an H100 SXM: 2619 MHz x 5120 bit x 2 / 8 = 3352 GB/s, the datasheet's 3.35 TB/s).
PeakFigure derived_bandwidth(const sched::GpuInfo& device) {
  if (device.memory_clock_khz <= 0 || device.memory_bus_bits <= 0) {
    return {0, "not derivable: the device reported no memory clock or bus width"};
  }
  const double mhz = device.memory_clock_khz / 1000.0;
  return {mhz * 1e6 * device.memory_bus_bits * 2 / 8 / 1e9,
          fmt::format("derived: {:g} MHz memory clock x {}-bit bus x 2 (double data rate) / 8 "
                      "bits per byte",
                      mhz, device.memory_bus_bits)};
}

// Fills the FLOP/s figures from the architecture's per-SM rates and the device's SM clock; returns
// what could not be derived, for the note.
std::string derive_flops(const sched::GpuInfo& device, GpuSpecs& specs) {
  const json* arch = architecture_for(device.cc_major, device.cc_minor);
  if (!arch) {
    return fmt::format("compute capability {}.{} has no per-SM rates in the table, so there are "
                       "no FLOP/s figures",
                       device.cc_major, device.cc_minor);
  }
  if (device.sm_count <= 0 || device.sm_clock_khz <= 0) {
    return "the device reported no SM count or SM clock, so there are no FLOP/s figures";
  }
  const double mhz = device.sm_clock_khz / 1000.0;
  const std::string arch_name = (*arch)["name"].get<std::string>();
  for (const auto& [precision, rate] : (*arch)["per_sm_per_clock"].items()) {
    const double per_clock = rate["value"].get<double>();
    specs.dense_tflops[precision] = {
        device.sm_count * per_clock * mhz * 1e6 / 1e12,
        fmt::format("derived: {} SMs x {:g} {}/clk/SM ({}, cc {}.{}) x {:g} MHz SM clock",
                    device.sm_count, per_clock, precision == "int8" ? "OP" : "FLOP", arch_name,
                    device.cc_major, device.cc_minor, mhz)};
  }
  return "";
}

GpuSpecs derive(const sched::GpuInfo& device, const std::string& reason) {
  GpuSpecs specs;
  specs.row = kDerivedRow;
  specs.from_table = false;
  specs.sm_count = device.sm_count;
  specs.l2_bytes = device.l2_bytes;
  specs.boost_clock_mhz = device.sm_clock_khz / 1000.0;
  specs.memory_clock_mhz = device.memory_clock_khz / 1000.0;
  specs.memory_bus_bits = device.memory_bus_bits;
  specs.dram_bandwidth_gbs = derived_bandwidth(device);
  const std::string missing = derive_flops(device, specs);
  specs.note = reason + ": figures derived from the device attributes";
  if (!missing.empty()) {
    specs.note += "; " + missing;
  }
  return specs;
}

} // namespace

nlohmann::json parse_peak_table(std::string_view text) {
  json table;
  try {
    table = json::parse(text);
  } catch (const json::parse_error& error) {
    throw std::runtime_error(fmt::format("gpu_peaks.json: not valid JSON: {}", error.what()));
  }
  check_table(table);
  return table;
}

const nlohmann::json& peak_table() {
  static const json table = parse_peak_table(embedded::kGpuPeaksJson);
  return table;
}

std::vector<std::string> peak_table_rows() {
  std::vector<std::string> rows;
  for (const auto& row : peak_table()["gpus"]) {
    rows.push_back(row["row"].get<std::string>());
  }
  return rows;
}

GpuSpecs resolve_specs(const sched::GpuInfo& device) {
  const json* row = row_for_device_name(device.name);
  if (!row) {
    return derive(device, fmt::format("\"{}\" is not in the GPU peak table", device.name));
  }
  const auto differences = mismatches(*row, device);
  if (!differences.empty()) {
    return derive(device, fmt::format("the device has the name of table row \"{}\" but reports {}",
                                      (*row)["row"].get<std::string>(), join(differences, ", ")));
  }
  return specs_from_row(*row);
}

std::optional<GpuSpecs> specs_for_row(const std::string& row) {
  for (const auto& candidate : peak_table()["gpus"]) {
    if (same_text(candidate["row"].get<std::string>(), trimmed(row))) {
      return specs_from_row(candidate);
    }
  }
  return std::nullopt;
}

nlohmann::json to_json(const GpuSpecs& specs) {
  auto figure = [](const PeakFigure& f) { return json{{"value", f.value}, {"source", f.source}}; };
  json dense = json::object();
  for (const auto& [precision, f] : specs.dense_tflops) {
    dense[precision] = figure(f);
  }
  return json{{"row", specs.row},
              {"from_table", specs.from_table},
              {"note", specs.note},
              {"sm_count", specs.sm_count},
              {"l2_bytes", specs.l2_bytes},
              {"boost_clock_mhz", specs.boost_clock_mhz},
              {"memory_clock_mhz", specs.memory_clock_mhz},
              {"memory_bus_bits", specs.memory_bus_bits},
              {"dram_bandwidth_gbs", figure(specs.dram_bandwidth_gbs)},
              {"dense_tflops", dense},
              {"units",
               {{"dram_bandwidth_gbs", "GB/s (1e9 bytes/s)"},
                {"dense_tflops", "TFLOP/s without 2:4 sparsity (TOP/s for int8)"}}}};
}

} // namespace kbench::counters
