#include "counters/counters_json.hpp"

#include "counters/kernel_counters.hpp"

#include <nlohmann/json.hpp>

namespace kbench::counters {

nlohmann::json to_json(const CounterField& field) {
  nlohmann::json out = {{"unit", field.unit}};
  if (field.value) {
    out["value"] = *field.value;
  } else if (!field.text.empty()) {
    out["value"] = field.text;
  } else {
    out["value"] = nullptr;
    out["reason"] = field.reason;
  }
  if (!field.detail.empty()) {
    out["detail"] = field.detail;
  }
  return out;
}

nlohmann::json to_json(const KernelCounters& kernel) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& field : kernel.fields) {
    fields[field.id] = to_json(field);
  }
  nlohmann::json stalls = nlohmann::json::array();
  for (const auto& stall : kernel.stalls) {
    stalls.push_back({{"reason", stall.reason}, {"percent", stall.percent}});
  }
  nlohmann::json out = {
      {"name", kernel.name}, {"own", kernel.own}, {"fields", fields}, {"warp_stalls", stalls}};
  if (kernel.stalls.empty()) {
    out["warp_stalls_reason"] = kernel.stalls_reason;
  }
  return out;
}

nlohmann::json to_json(const CallCounters& call) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : call.kernels) {
    kernels.push_back(to_json(kernel));
  }
  return {{"kernels", kernels}, {"call", to_json(call.call)}};
}

} // namespace kbench::counters
