#include "report/counters_summary.hpp"

#include "report/summary_line.hpp"
#include "counters/si_format.hpp"

#include <fmt/format.h>

#include <cmath>

namespace kbench::report {
namespace {

// A field of counters::to_json: its value in its unit, or "n/a (reason)".
std::string field(const nlohmann::json& fields, const std::string& id) {
  if (!fields.contains(id)) {
    return "n/a (not reported)";
  }
  const auto& f = fields[id];
  const auto& value = f["value"];
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (!value.is_number()) {
    return "n/a (" + f.value("reason", std::string("unknown")) + ")";
  }
  const double v = value.get<double>();
  const std::string unit = f.value("unit", std::string());
  if (unit == "%") {
    return fmt::format("{:.1f} %", v);
  }
  if (unit == "us") {
    return fmt::format("{:.2f} µs", v);
  }
  if (unit == "GB/s") {
    return fmt::format("{:.0f} GB/s", v);
  }
  if (unit == "FLOP/s" || unit == "B") {
    return counters::format_si(v, unit);
  }
  // Counts (registers, threads, blocks, bytes per block) print whole.
  const std::string number = v == std::floor(v) && std::fabs(v) < 1e12 ? fmt::format("{:.0f}", v)
                                                                       : fmt::format("{:.3g}", v);
  return unit.empty() ? number : number + " " + unit;
}

void side_lines(std::string& out, const char* label, const CountersSide& side) {
  auto line = [&](const char* l, const std::string& v) { append_summary_line(out, l, v); };
  if (!side.collected) {
    line(label, "no counters: " + side.reason);
    return;
  }
  const auto& f = side.call["call"]["fields"];
  line(label, fmt::format("{} kernel{}, {} under ncu; bottleneck {}; SOL {}", side.kernels,
                          side.kernels == 1 ? "" : "s", field(f, "duration"),
                          field(f, "bottleneck"), field(f, "sol_score")));
  line("  sol", fmt::format("SM {}, memory {}, DRAM {} ({}), dominant pipe {} {}",
                            field(f, "sm_throughput"), field(f, "memory_throughput"),
                            field(f, "dram_throughput"), field(f, "dram_bandwidth"),
                            field(f, "dominant_pipe"), field(f, "dominant_pipe_utilization")));
  line("  roofline",
       fmt::format("{} at {} (ridge {}); FP32 {} ({}), FP16 {} ({}), tensor {} ({})",
                   field(f, "arithmetic_intensity"), field(f, "precision"), field(f, "ridge_point"),
                   field(f, "fp32_flops"), field(f, "fp32_utilization"), field(f, "fp16_flops"),
                   field(f, "fp16_utilization"), field(f, "tensor_flops"),
                   field(f, "tensor_utilization")));
  line("  occupancy",
       fmt::format("{} achieved of {} (limit: {}); {}, shared memory {} static + {} "
                   "dynamic, block {}, grid {}",
                   field(f, "achieved_occupancy"), field(f, "theoretical_occupancy"),
                   field(f, "occupancy_limiter"), field(f, "registers_per_thread"),
                   field(f, "shared_memory_static"), field(f, "shared_memory_dynamic"),
                   field(f, "block_size"), field(f, "grid_size")));
  line("  caches", fmt::format("L1 hit {}, L2 hit {}, sectors per request: loads {}, stores {}",
                               field(f, "l1_hit_rate"), field(f, "l2_hit_rate"),
                               field(f, "global_load_sectors_per_request"),
                               field(f, "global_store_sectors_per_request")));
  const auto& stalls = side.call["call"].value("warp_stalls", nlohmann::json::array());
  std::string text;
  for (const auto& s : stalls) {
    text += fmt::format("{}{} {:.1f} %", text.empty() ? "" : ", ", s.value("reason", ""),
                        s.value("percent", 0.0));
  }
  line("  stalls",
       text.empty() ? "n/a (" + side.call["call"].value("warp_stalls_reason", std::string()) + ")"
                    : text + " of stall cycles");
}

std::string energy_text(const EnergySide& e) {
  if (!e.joules_per_call) {
    return "n/a (" + e.reason + ")";
  }
  return fmt::format("{:.3g} mJ per call ({:.0f} W over {} calls)", *e.joules_per_call * 1e3,
                     e.watts.value_or(0), e.calls);
}

} // namespace

std::string format_counters(const CountersInfo& c) {
  std::string out;
  auto line = [&](const char* l, const std::string& v) { append_summary_line(out, l, v); };
  if (!c.skipped_reason.empty()) {
    line("counters", "not collected: " + c.skipped_reason);
    return out;
  }
  line("counters", fmt::format("Nsight Compute ({}), --profile {}, peaks of {}{}", c.tool,
                               c.profile, c.gpu.value("row", std::string("?")),
                               c.gpu.value("note", std::string()).empty()
                                   ? ""
                                   : " (" + c.gpu.value("note", std::string()) + ")"));
  if (c.sol_score) {
    line("SOL score", fmt::format("{:.3f} (PopcornBench: max of DRAM and dominant-pipe "
                                  "utilisation)",
                                  *c.sol_score));
  }
  line("phys limit", c.physical_limit_fraction
                         ? fmt::format("{:.3f} of the physical limit: {}",
                                       *c.physical_limit_fraction, c.physical_limit_detail)
                         : "n/a (" + c.physical_limit_detail + ")");
  side_lines(out, "candidate", c.candidate);
  side_lines(out, "reference", c.reference);
  std::string energy =
      energy_text(c.candidate_energy) + "; reference " + energy_text(c.reference_energy);
  if (c.energy_ratio) {
    energy += fmt::format("; {:.2f}x less energy", *c.energy_ratio);
  }
  line("energy", energy);
  if (!c.roofline_svg.empty()) {
    line("roofline", c.roofline_svg);
  }
  return out;
}

} // namespace kbench::report
