#include "measure/nvml_clocks.hpp"

#include "sched/dynamic_library.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <mutex>
#include <string_view>
#include <utility>

namespace kbench::measure {
namespace {

// The few NVML declarations we need, by hand: nvml.h is not installed everywhere, and these
// values are part of NVML's stable ABI.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
constexpr int kClockMem = 2; // NVML_CLOCK_MEM

struct NvmlApi {
  nvmlReturn_t (*init)() = nullptr; // nvmlInit_v2
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  // Optional: not every device or driver answers them.
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*default_applications_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*throttle_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
};

using sched::resolve;

struct NvmlLibrary {
  NvmlApi api;
  std::string error; // "" when loaded and initialised

  std::string text(nvmlReturn_t rc) const {
    const char* message = api.error_string ? api.error_string(rc) : nullptr;
    return fmt::format("{} (NVML error {})", message ? message : "unknown error", rc);
  }
};

NvmlLibrary open_nvml() {
  NvmlLibrary nvml;
  const sched::OpenedLibrary opened =
      sched::open_first_library({"libnvidia-ml.so.1", "libnvidia-ml.so"});
  void* library = opened.handle;
  if (!library) {
    nvml.error = fmt::format("unsupported: NVML could not be loaded; tried {}. It comes with the "
                             "NVIDIA driver: run on a machine with a GPU and its driver",
                             fmt::join(opened.failures, ", "));
    return nvml;
  }
  NvmlApi& api = nvml.api;
  if (!resolve(library, "nvmlInit_v2", api.init) ||
      !resolve(library, "nvmlErrorString", api.error_string) ||
      !resolve(library, "nvmlDeviceGetHandleByPciBusId_v2", api.handle_by_pci_bus_id) ||
      !resolve(library, "nvmlDeviceGetClockInfo", api.clock_info)) {
    nvml.error = "unsupported: libnvidia-ml lacks nvmlInit_v2, nvmlErrorString, "
                 "nvmlDeviceGetHandleByPciBusId_v2 or nvmlDeviceGetClockInfo; update the NVIDIA "
                 "driver";
    return nvml;
  }
  resolve(library, "nvmlDeviceGetMaxClockInfo", api.max_clock_info);
  resolve(library, "nvmlDeviceGetDefaultApplicationsClock", api.default_applications_clock);
  // Renamed in newer drivers; the old name stays as an alias on most, not all.
  if (!resolve(library, "nvmlDeviceGetCurrentClocksEventReasons", api.throttle_reasons)) {
    resolve(library, "nvmlDeviceGetCurrentClocksThrottleReasons", api.throttle_reasons);
  }
  resolve(library, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
  resolve(library, "nvmlDeviceGetPowerUsage", api.power_usage);
  if (const nvmlReturn_t rc = api.init(); rc != kNvmlSuccess) {
    nvml.error = fmt::format("unsupported: nvmlInit_v2 failed: {}; check that the NVIDIA driver "
                             "is loaded (nvidia-smi)",
                             nvml.text(rc));
  }
  // The library stays loaded and initialised for the life of the process.
  return nvml;
}

const NvmlLibrary& nvml_library() {
  static const NvmlLibrary nvml = open_nvml();
  return nvml;
}

std::optional<std::uint32_t> query_clock(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned int*),
                                         void* device, int which) {
  unsigned int mhz = 0;
  if (fn && device && fn(device, which, &mhz) == kNvmlSuccess) {
    return mhz;
  }
  return std::nullopt;
}

} // namespace

std::vector<std::string> decode_throttle_reasons(std::uint64_t mask) {
  static constexpr std::array<std::pair<std::uint64_t, std::string_view>, 9> known = {{
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
  }};
  std::vector<std::string> names;
  std::uint64_t rest = mask;
  for (const auto& [bit, name] : known) {
    if (mask & bit) {
      names.emplace_back(name);
      rest &= ~bit;
    }
  }
  for (std::uint64_t bit = 1; rest != 0; bit <<= 1) {
    if (rest & bit) {
      names.push_back(fmt::format("unknown_{:#x}", bit));
      rest &= ~bit;
    }
  }
  return names;
}

std::string NvmlClocks::load(const std::string& pci_bus_id) {
  const NvmlLibrary& nvml = nvml_library();
  if (!nvml.error.empty()) {
    return nvml.error;
  }
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t rc = nvml.api.handle_by_pci_bus_id(pci_bus_id.c_str(), &device);
      rc != kNvmlSuccess) {
    return fmt::format("unsupported: NVML has no GPU at PCI bus id '{}': {}; pass the bus id CUDA "
                       "reports for the device in use, like \"0000:19:00.0\"",
                       pci_bus_id, nvml.text(rc));
  }
  m_device = device;
  return {};
}

ClockReading NvmlClocks::read() const {
  ClockReading reading;
  if (!m_device) {
    reading.error = "NVML is not loaded: call nvml_load(pci_bus_id) first and check its answer";
    return reading;
  }
  const NvmlApi& api = nvml_library().api;
  const auto sm = query_clock(api.clock_info, m_device, kClockSm);
  const auto mem = query_clock(api.clock_info, m_device, kClockMem);
  if (!sm || !mem) {
    reading.error = "nvmlDeviceGetClockInfo failed for the SM or memory clock";
    return reading;
  }
  reading.sm_mhz = *sm;
  reading.mem_mhz = *mem;
  if (unsigned long long reasons = 0;
      api.throttle_reasons && api.throttle_reasons(m_device, &reasons) == kNvmlSuccess) {
    reading.throttle_reasons = reasons;
    reading.throttle_reason_names = decode_throttle_reasons(reasons);
  }
  if (unsigned int milliwatts = 0;
      api.power_usage && api.power_usage(m_device, &milliwatts) == kNvmlSuccess) {
    reading.power_mw = milliwatts;
  }
  return reading;
}

ClockLimits NvmlClocks::limits() const {
  ClockLimits limits;
  if (!m_device) {
    return limits;
  }
  const NvmlApi& api = nvml_library().api;
  limits.default_sm_mhz = query_clock(api.default_applications_clock, m_device, kClockSm);
  limits.max_sm_mhz = query_clock(api.max_clock_info, m_device, kClockSm);
  limits.max_mem_mhz = query_clock(api.max_clock_info, m_device, kClockMem);
  return limits;
}

std::optional<std::uint64_t> NvmlClocks::energy_mj() const {
  if (!m_device) {
    return std::nullopt;
  }
  const NvmlApi& api = nvml_library().api;
  unsigned long long millijoules = 0;
  if (api.total_energy && api.total_energy(m_device, &millijoules) == kNvmlSuccess) {
    return millijoules;
  }
  return std::nullopt;
}

} // namespace kbench::measure
