// kbench specs: the peak figures kbench uses for a GPU (docs/counters.md, "GPU peak table"):
// the table row that matches this machine's device, or the figures derived from its attributes,
// each with its unit and source. Exit 0; 2 without a GPU (unless --row or --all); 64 for an
// unknown row or GPU index.
#include "cli/commands.hpp"
#include "counters/gpu_specs.hpp"
#include "report/specs_summary.hpp"
#include "sched/device_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

namespace kbench::cli {
namespace {

struct SpecsOptions {
  int gpu = 0;
  std::string row;
  bool all = false;
  bool json = false;
};

std::string device_names_of(const std::string& row) {
  for (const auto& entry : counters::peak_table()["gpus"]) {
    if (entry["row"] == row) {
      std::string names;
      for (const auto& name : entry["names"]) {
        names += (names.empty() ? "" : ", ") + name.get<std::string>();
      }
      return names;
    }
  }
  return "";
}

std::string known_rows() {
  std::string rows;
  for (const auto& row : counters::peak_table_rows()) {
    rows += (rows.empty() ? "" : ", ") + fmt::format("\"{}\"", row);
  }
  return rows;
}

int print_all(const SpecsOptions& o) {
  nlohmann::json rows = nlohmann::json::array();
  std::string text;
  for (const auto& name : counters::peak_table_rows()) {
    const auto specs = *counters::specs_for_row(name);
    rows.push_back(counters::to_json(specs));
    text += (text.empty() ? "" : "\n") + report::format_specs(specs) +
            fmt::format("  device names: {}\n", device_names_of(name));
  }
  std::cout << (o.json ? rows.dump(2) + "\n" : text);
  return 0;
}

int print_row(const SpecsOptions& o) {
  const auto specs = counters::specs_for_row(o.row);
  if (!specs) {
    std::cerr << fmt::format("kbench specs: no table row \"{}\"; known rows: {}\n", o.row,
                             known_rows());
    return 64;
  }
  std::cout << (o.json ? counters::to_json(*specs).dump(2) + "\n"
                       : report::format_specs(*specs) +
                             fmt::format("  device names: {}\n", device_names_of(specs->row)));
  return 0;
}

int print_device(const SpecsOptions& o) {
  const auto& probe = sched::probe_devices();
  if (probe.gpus.empty()) {
    std::cerr << fmt::format("kbench specs: no GPU: {}\n(--row NAME or --all prints the table "
                             "without one)\n",
                             probe.unavailable_reason);
    return 2;
  }
  if (o.gpu < 0 || o.gpu >= static_cast<int>(probe.gpus.size())) {
    std::cerr << fmt::format("kbench specs: no GPU {}: this machine has {} (0 to {})\n", o.gpu,
                             probe.gpus.size(), probe.gpus.size() - 1);
    return 64;
  }
  const auto& gpu = probe.gpus[o.gpu];
  const auto specs = counters::resolve_specs(gpu);
  if (o.json) {
    std::cout << counters::to_json(specs).dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("GPU {}: {} (compute capability {}.{}, driver {})\n", gpu.index,
                           gpu.name, gpu.cc_major, gpu.cc_minor, probe.driver_version)
            << report::format_specs(specs);
  if (specs.from_table) {
    std::cout
        << "  the device's SM count, L2 size, memory clock and bus width agree with the row\n";
  }
  return 0;
}

} // namespace

Command register_specs_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "specs",
      "print the GPU peak figures kbench uses (dense FLOP/s, DRAM bandwidth), with sources");
  auto o = std::make_shared<SpecsOptions>();
  auto* gpu =
      command->add_option("--gpu", o->gpu, "index of the GPU to describe")->capture_default_str();
  auto* row = command->add_option("--row", o->row, "print this table row (\"H100 SXM\")");
  auto* all = command->add_flag("--all", o->all, "print every table row");
  command->add_flag("--json", o->json, "print JSON instead of the table");
  row->excludes(all);
  gpu->excludes(row)->excludes(all);

  const auto run = [o]() -> int {
    try {
      if (o->all) {
        return print_all(*o);
      }
      if (!o->row.empty()) {
        return print_row(*o);
      }
      return print_device(*o);
    } catch (const std::exception& error) {
      std::cerr << "kbench specs: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
