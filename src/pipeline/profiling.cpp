#include "pipeline/profiling.hpp"

#include "core/options.hpp"
#include "core/stopwatch.hpp"
#include "counters/gpu_specs.hpp"
#include "counters/kernel_counters.hpp"
#include "counters/ncu_metrics.hpp"
#include "counters/ncu_report.hpp"
#include "counters/roofline_svg.hpp"
#include "pipeline/worker_requests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <sstream>

namespace kbench {
namespace fs = std::filesystem;

namespace {

const char* side_name(WorkerRole role) {
  return role == WorkerRole::candidate ? "candidate" : "reference";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct SideRun {
  CountersSide out;
  std::optional<counters::CallCounters> call;
};

// ncu's error lines (a profiling permission, an unsupported GPU), for the reason.
std::string ncu_errors(const counters::NcuReport& report) {
  std::string errors;
  for (const auto& message : report.messages) {
    if (message.starts_with("==ERROR==") || message.starts_with("==WARNING==")) {
      errors += (errors.empty() ? "" : " ") + message;
    }
  }
  return errors;
}

SideRun profile_side(sandbox::WorkerClient& worker, WorkerRole role, const nlohmann::json& trial,
                     const fs::path& log, const ProfileSetup& setup,
                     const counters::GpuSpecs& specs) {
  SideRun run;
  const auto start = Clock::now();
  const auto& settings = setup.settings;
  const std::string candidate_path = role == WorkerRole::candidate ? setup.candidate_path : "";
  const PhaseOutcome prepared = run_phase(worker, trial, settings.run_timeout, role,
                                          "running one trial under Nsight Compute", candidate_path);
  PhaseOutcome profiled;
  if (prepared.ok) {
    profiled = run_phase(worker, requests::profile(), settings.run_timeout, role,
                         "profiling one call under Nsight Compute", candidate_path);
  }
  // ncu writes its report when the profiled process has exited.
  worker.shutdown(std::chrono::seconds(60));
  run.out.wall_s = seconds_since(start);
  const PhaseOutcome& failed = !prepared.ok ? prepared : profiled;
  if (!failed.ok) {
    run.out.reason =
        fmt::format("the {} did not run under Nsight Compute: {}", side_name(role), failed.message);
    return run;
  }
  if (!fs::exists(log)) {
    run.out.reason = fmt::format("Nsight Compute wrote no report ({} missing); its output: {}",
                                 log.string(), worker.stdout_capture().tail(600));
    return run;
  }
  try {
    const auto report = counters::parse_ncu_csv(read_file(log));
    if (report.kernels.empty()) {
      const std::string errors = ncu_errors(report);
      run.out.reason = errors.empty() ? "the call launched no GPU kernel, so there is nothing "
                                        "to count"
                                      : "Nsight Compute profiled no kernel: " + errors;
      return run;
    }
    run.call =
        counters::derive_call(report, settings.profile, specs,
                              profiled.body.value("own_kernels", std::vector<std::string>{}));
    run.out.call = counters::to_json(*run.call);
    run.out.kernels = report.kernels.size();
    run.out.collected = true;
  } catch (const std::exception& error) {
    run.out.reason = fmt::format("{}: {}", log.string(), error.what());
  }
  return run;
}

// Roofline floor (the larger of the memory and compute floors) over the measured time.
void physical_limit(CountersInfo& info, const SideRun& candidate, const SideRun& reference,
                    const ProfileSetup& setup, const counters::GpuSpecs& specs) {
  if (!setup.candidate_median_us || *setup.candidate_median_us <= 0) {
    info.physical_limit_detail = "no measured device time to compare the floor with";
    return;
  }
  const double bandwidth = specs.dram_bandwidth_gbs.value * 1e9;
  if (bandwidth <= 0 || setup.min_bytes <= 0) {
    info.physical_limit_detail = "no peak bandwidth or no input/output bytes to form the floor";
    return;
  }
  const double memory_floor_us = static_cast<double>(setup.min_bytes) / bandwidth * 1e6;
  double compute_floor_us = 0;
  std::string compute_text = "no compute floor (no FLOP counted)";
  if (candidate.call) {
    const auto& call = candidate.call->call;
    const double flop = reference.call ? std::min(call.flop, reference.call->call.flop) : call.flop;
    const auto peak = specs.dense_tflops.find(call.peak_key);
    if (flop > 0 && peak != specs.dense_tflops.end() && peak->second.value > 0) {
      compute_floor_us = flop / (peak->second.value * 1e12) * 1e6;
      compute_text =
          fmt::format("compute floor {:.2f} us ({:.3g} FLOP at {} TFLOP/s {})", compute_floor_us,
                      flop, peak->second.value, call.field("precision")->text);
    }
  }
  const double floor_us = std::max(memory_floor_us, compute_floor_us);
  info.physical_limit_fraction = floor_us / *setup.candidate_median_us;
  info.physical_limit_detail = fmt::format(
      "floor {:.2f} us / measured {:.2f} us; memory floor {:.2f} us ({} B of inputs and outputs "
      "at {} GB/s), {}",
      floor_us, *setup.candidate_median_us, memory_floor_us, setup.min_bytes,
      specs.dram_bandwidth_gbs.value, compute_text);
}

void write_roofline(CountersInfo& info, const std::vector<const SideRun*>& sides,
                    const ProfileSetup& setup, const counters::GpuSpecs& specs) {
  std::vector<counters::RooflineRoof> roofs;
  for (const auto& [precision, peak] : specs.dense_tflops) {
    if (precision == "int8") {
      continue; // operations, not floating-point ones
    }
    std::string label = precision.substr(0, precision.find('_'));
    std::transform(label.begin(), label.end(), label.begin(), ::toupper);
    const bool tensor = precision != "fp32" && precision != "fp64";
    roofs.push_back({tensor ? label + " tensor" : label, peak.value * 1e12});
  }
  std::vector<counters::RooflinePoint> points;
  for (std::size_t s = 0; s < sides.size(); ++s) {
    if (!sides[s]->call) {
      continue;
    }
    for (const auto& kernel : sides[s]->call->kernels) {
      const double seconds = kernel.value("duration").value_or(0) * 1e-6;
      const double flop = kernel.flop;
      points.push_back({kernel.name, s == 0 ? "candidate" : "reference",
                        kernel.value("arithmetic_intensity").value_or(0),
                        seconds > 0 ? flop / seconds : 0});
    }
  }
  const std::string svg =
      counters::roofline_svg(fmt::format("Roofline: {} ({})", specs.row, setup.candidate_path),
                             specs.dram_bandwidth_gbs.value * 1e9, roofs, points);
  std::ofstream out(setup.settings.roofline);
  out << svg;
  if (out) {
    info.roofline_svg = setup.settings.roofline.string();
  } else {
    info.physical_limit_detail += fmt::format("; the roofline chart could not be written to {}",
                                              setup.settings.roofline.string());
  }
}

} // namespace

ProfileSettings profile_settings(const EvalOptions& options) {
  ProfileSettings settings;
  settings.profile = options.profile;
  settings.roofline = options.roofline;
  settings.run_timeout = options.run_timeout;
  return settings;
}

EnergySide measure_energy(sandbox::WorkerClient& worker, WorkerRole role,
                          const ProfileSettings& settings, const std::string& candidate_path) {
  EnergySide side;
  const PhaseOutcome outcome =
      run_phase(worker, requests::energy(1.0), settings.run_timeout, role,
                "measuring energy per call", role == WorkerRole::candidate ? candidate_path : "");
  if (!outcome.ok) {
    side.reason = outcome.message;
    return side;
  }
  side.calls = outcome.body.value("calls", 0L);
  side.seconds = outcome.body.value("seconds", 0.0);
  const double millijoules = outcome.body.value("energy_mj", -1.0);
  if (millijoules < 0 || side.calls <= 0 || side.seconds <= 0) {
    side.reason = outcome.body.value("reason", std::string("no energy reading"));
    return side;
  }
  side.joules_per_call = millijoules / 1000.0 / static_cast<double>(side.calls);
  side.watts = millijoules / 1000.0 / side.seconds;
  return side;
}

CountersInfo collect_counters(const ProfileSetup& setup) {
  CountersInfo info;
  info.profile = setup.settings.profile;
  std::string why_not;
  const auto ncu = counters::find_ncu(why_not);
  if (!ncu) {
    info.skipped_reason = why_not;
    info.candidate.reason = info.reference.reason = why_not;
    return info;
  }
  info.tool = ncu->string();
  const counters::GpuSpecs specs = counters::resolve_specs(setup.gpu);
  info.gpu = counters::to_json(specs);

  struct Side {
    WorkerRole role;
    fs::path directory, log;
    sandbox::WorkerClient* worker = nullptr;
  };
  std::vector<Side> sides;
  for (const WorkerRole role : {WorkerRole::candidate, WorkerRole::reference}) {
    Side side{role, setup.scratch / fmt::format("profile.{}", side_name(role)), {}};
    // Every directory the worker writes is made before it starts: a worker that runs as
    // another user is handed them at its spawn (sandbox/hand_over.hpp).
    for (const char* sub : {"outputs", "inputs"}) {
      fs::create_directories(side.directory / sub);
    }
    side.log = side.directory / "ncu.csv";
    side.worker =
        &setup.launch(fmt::format("profile.{}", side_name(role)), role,
                      counters::ncu_arguments(*ncu, info.profile, side.log), side.directory);
    sides.push_back(side);
  }
  // Both workers start (import torch, build nothing: the extension is cached) at once; ncu
  // serialises the profiling itself.
  std::vector<std::future<SideRun>> runs;
  for (const auto& side : sides) {
    runs.push_back(std::async(std::launch::async, [&setup, &specs, side] {
      return profile_side(*side.worker, side.role, setup.first_trial(side.role, side.directory),
                          side.log, setup, specs);
    }));
  }
  const SideRun candidate = runs[0].get();
  const SideRun reference = runs[1].get();
  info.candidate = candidate.out;
  info.reference = reference.out;
  if (candidate.call) {
    info.sol_score = candidate.call->call.value("sol_score");
  }
  physical_limit(info, candidate, reference, setup, specs);
  if (!setup.settings.roofline.empty()) {
    write_roofline(info, {&candidate, &reference}, setup, specs);
  }
  return info;
}

std::optional<CountersInfo> counters_not_collected(const std::string& profile, bool on_gpu,
                                                   int world_size) {
  CountersInfo skipped;
  skipped.profile = profile;
  if (!on_gpu) {
    skipped.skipped_reason = "hardware counters need a GPU; this evaluation ran on the CPU";
  } else if (world_size > 1) {
    skipped.skipped_reason = "collective problems are not profiled: one rank's counters do "
                             "not describe a call that spans ranks";
  } else {
    return std::nullopt;
  }
  skipped.candidate.reason = skipped.reference.reason = skipped.skipped_reason;
  skipped.candidate_energy.reason = skipped.reference_energy.reason = skipped.skipped_reason;
  return skipped;
}

void add_energy(CountersInfo& info, EnergySide candidate, EnergySide reference) {
  if (candidate.joules_per_call && reference.joules_per_call && *candidate.joules_per_call > 0) {
    info.energy_ratio = *reference.joules_per_call / *candidate.joules_per_call;
  }
  info.candidate_energy = std::move(candidate);
  info.reference_energy = std::move(reference);
}

CountersInfo profile_timed_candidate(sandbox::WorkerClient& reference,
                                     sandbox::WorkerClient& candidate, const ProfileSetup& setup,
                                     const std::function<void(const char*)>& stage) {
  stage("measuring energy per call");
  const auto start = std::chrono::steady_clock::now();
  EnergySide candidate_energy =
      measure_energy(candidate, WorkerRole::candidate, setup.settings, setup.candidate_path);
  EnergySide reference_energy =
      measure_energy(reference, WorkerRole::reference, setup.settings, "");
  stage("profiling with Nsight Compute");
  CountersInfo info = collect_counters(setup);
  add_energy(info, std::move(candidate_energy), std::move(reference_energy));
  info.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return info;
}

} // namespace kbench
