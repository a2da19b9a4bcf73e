#include "report/specs_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace kbench::report {
namespace {

// The precisions in the order a reader compares them; any others follow alphabetically.
const std::vector<std::string> kPrecisionOrder = {"fp64", "fp64_tensor", "fp32", "tf32",
                                                  "fp16", "bf16",        "fp8",  "int8"};

std::vector<std::string> precisions_in_order(const counters::GpuSpecs& specs) {
  std::vector<std::string> order;
  for (const auto& p : kPrecisionOrder) {
    if (specs.dense_tflops.count(p)) {
      order.push_back(p);
    }
  }
  for (const auto& [p, figure] : specs.dense_tflops) {
    if (std::find(kPrecisionOrder.begin(), kPrecisionOrder.end(), p) == kPrecisionOrder.end()) {
      order.push_back(p);
    }
  }
  return order;
}

std::string format_value(double value) {
  return value >= 10 ? fmt::format("{:.1f}", value) : fmt::format("{:.3g}", value);
}

std::string figure_line(const std::string& label, const counters::PeakFigure& figure,
                        const std::string& unit) {
  return fmt::format("  {:<18} {:>9} {:<7} {}\n", label, format_value(figure.value), unit,
                     figure.source);
}

} // namespace

std::string format_specs(const counters::GpuSpecs& specs) {
  std::string out = specs.from_table ? fmt::format("row: {} (from the peak table)\n", specs.row)
                                     : fmt::format("row: {}\n", specs.row);
  out += fmt::format("  {:<18} {}\n", "SMs", specs.sm_count);
  out += fmt::format("  {:<18} {:.1f} MiB ({} bytes)\n", "L2", specs.l2_bytes / 1048576.0,
                     specs.l2_bytes);
  out += fmt::format("  {:<18} {:g} MHz\n", "SM clock", specs.boost_clock_mhz);
  out += fmt::format("  {:<18} {:g} MHz, {}-bit bus\n", "memory clock", specs.memory_clock_mhz,
                     specs.memory_bus_bits);
  out += figure_line("DRAM bandwidth", specs.dram_bandwidth_gbs, "GB/s");
  out += "  dense peaks (no 2:4 sparsity):\n";
  for (const auto& precision : precisions_in_order(specs)) {
    out += figure_line("  " + precision, specs.dense_tflops.at(precision),
                       precision == "int8" ? "TOP/s" : "TFLOP/s");
  }
  if (specs.dense_tflops.empty()) {
    out += "    (none)\n";
  }
  if (!specs.note.empty()) {
    out += fmt::format("  note: {}\n", specs.note);
  }
  return out;
}

} // namespace kbench::report
