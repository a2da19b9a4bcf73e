#pragma once
// The GPU peak table (gpu_peaks.json, compiled in): dense FLOP/s per precision, DRAM bandwidth,
// L2 size, SM count and clocks of the GPUs kbench knows, each figure with its source. At run
// time the row is checked against what the device reports (SM count, L2 size, memory clock and
// bus width); a mismatch or an unknown GPU falls back to figures derived from the device
// attributes, and says so.
#include "sched/device_probe.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kbench::counters {

// One figure of a row and where it came from ("NVIDIA H200 datasheet (2024)", "derived: SMs x
// 128 FP32 FMA/clk x 2 x boost clock", ...).
struct PeakFigure {
  double value = 0;
  std::string source;
};

struct GpuSpecs {
  std::string row;         // the table row used ("H200 SXM"), or "derived from the device"
  bool from_table = false; // false: figures derived from the device attributes
  std::string note;        // why the table was not used, or what did not match; empty when all did
  int sm_count = 0;
  long long l2_bytes = 0;
  double boost_clock_mhz = 0;  // the SM clock the FLOP/s figures assume
  double memory_clock_mhz = 0; // as the device reports it
  int memory_bus_bits = 0;
  PeakFigure dram_bandwidth_gbs; // GB/s (1e9 bytes/s)
  // Dense (no 2:4 sparsity) peak TFLOP/s by precision: fp64, fp32, tf32, fp16, bf16, fp8, int8
  // (TOPS for int8). A precision the GPU lacks is absent.
  std::map<std::string, PeakFigure> dense_tflops;
};

// The whole table, parsed once (throws std::runtime_error naming the field if the compiled-in
// file is malformed; a unit test keeps it well-formed).
const nlohmann::json& peak_table();
// Parses and checks a table text (the compiled-in one, or a test's); throws as above.
nlohmann::json parse_peak_table(std::string_view text);
// The names of the table's rows, in file order.
std::vector<std::string> peak_table_rows();
// The row for this device: matched by name, then checked against its attributes; otherwise
// derived figures, with `note` saying why.
GpuSpecs resolve_specs(const sched::GpuInfo& device);
// A table row by name (for `kbench specs --gpu NAME` and tests), without device checks.
std::optional<GpuSpecs> specs_for_row(const std::string& row);
nlohmann::json to_json(const GpuSpecs& specs);

} // namespace kbench::counters
