#include "counters/call_counters.hpp"

#include "counters/kernel_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

namespace kbench::counters {
namespace {

// Each kernel's weight in the call's means, and how the longest kernel is found.
constexpr const char* kDuration = "gpu__time_duration.sum";

} // namespace

Combine combine_rule(const std::string& metric) {
  if (metric.starts_with("launch__")) {
    return Combine::longest;
  }
  if (metric.ends_with(".peak_sustained")) {
    return Combine::max;
  }
  if (metric.ends_with(".sum")) {
    return Combine::sum; // counts (bytes, instructions, ops) and the duration
  }
  return Combine::weighted_mean; // percentages, ratios, rates, clocks
}

NcuKernel combine(const std::vector<NcuKernel>& kernels) {
  NcuKernel call;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const double* d = kernels[i].find(kDuration);
    const double* best = kernels[longest].find(kDuration);
    if (d && (!best || *d > *best)) {
      longest = i;
    }
  }
  std::map<std::string, double> weight_seen;
  for (const auto& kernel : kernels) {
    const double* d = kernel.find(kDuration);
    const double weight = d ? *d : 0;
    for (const auto& [name, value] : kernel.values) {
      call.units[name] = kernel.units.at(name);
      double& into = call.values[name];
      switch (combine_rule(name)) {
      case Combine::sum:
        into += value;
        break;
      case Combine::max:
        into = std::max(into, value);
        break;
      case Combine::longest:
        break;
      case Combine::weighted_mean:
        into += value * weight;
        weight_seen[name] += weight;
        break;
      }
    }
  }
  for (auto& [name, value] : call.values) {
    if (combine_rule(name) == Combine::weighted_mean) {
      value = weight_seen[name] > 0 ? value / weight_seen[name] : 0;
    }
  }
  if (!kernels.empty()) {
    for (const auto& [name, value] : kernels[longest].values) {
      if (combine_rule(name) == Combine::longest) {
        call.values[name] = value;
      }
    }
    call.name = fmt::format("all {} kernels (time-weighted; launch shape of the longest, {})",
                            kernels.size(), kernels[longest].name);
  }
  return call;
}

bool is_own(const std::string& kernel, const std::vector<std::string>& own_names) {
  return std::any_of(own_names.begin(), own_names.end(), [&](const std::string& own) {
    const std::regex word("(^|[^A-Za-z0-9_])" + own + "([^A-Za-z0-9_]|$)");
    return std::regex_search(kernel, word);
  });
}

CallCounters derive_call(const NcuReport& report, const std::string& set, const GpuSpecs& specs,
                         const std::vector<std::string>& own_kernel_names) {
  CallCounters out;
  for (const auto& kernel : report.kernels) {
    out.kernels.push_back(derive_kernel(kernel, set, specs));
    out.kernels.back().own = is_own(kernel.name, own_kernel_names);
  }
  out.call = derive_kernel(combine(report.kernels), set, specs);
  return out;
}

} // namespace kbench::counters
