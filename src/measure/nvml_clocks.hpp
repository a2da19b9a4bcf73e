#pragma once
// GPU clocks, throttle reasons, power and energy from NVML, loaded with dlopen at run time
// (nothing links libnvidia-ml), so samples taken while the SM clock sagged can be dropped
// (docs/architecture.md, "The measurement engine": below 75 % of its default) and the reason said.
//
// NVML numbers GPUs its own way and ignores CUDA_VISIBLE_DEVICES, so the device is found by its
// PCI bus id, the one CUDA reports for the device in use ("0000:19:00.0").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench::measure {

struct ClockReading {
  std::uint32_t sm_mhz = 0;
  std::uint32_t mem_mhz = 0;
  std::uint64_t throttle_reasons = 0;             // nvmlClocksEventReason* bits
  std::vector<std::string> throttle_reason_names; // decode_throttle_reasons(throttle_reasons)
  std::optional<std::uint32_t> power_mw;          // empty when NVML does not report it
  std::string error; // non-empty when the clocks could not be read (then the rest is 0)
};

struct ClockLimits {
  // Each empty when the device does not report it.
  std::optional<std::uint32_t> default_sm_mhz; // default applications clock
  std::optional<std::uint32_t> max_sm_mhz;
  std::optional<std::uint32_t> max_mem_mhz;
};

class NvmlClocks {
public:
  // "" when the device at this PCI bus id is ready, else a reason starting with
  // "unsupported: ". May be called again (for another device); NVML is initialised once.
  std::string load(const std::string& pci_bus_id);
  bool loaded() const { return m_device != nullptr; }
  ClockReading read() const;
  ClockLimits limits() const;
  // Energy since the driver was loaded, in millijoules; empty when unsupported (pre-Volta, some
  // virtualised GPUs) or not loaded.
  std::optional<std::uint64_t> energy_mj() const;

private:
  void* m_device = nullptr; // nvmlDevice_t
};

// Names of the set bits ("gpu_idle", "sw_power_cap", "hw_thermal_slowdown", ...); unknown bits
// come out as "unknown_0x...".
std::vector<std::string> decode_throttle_reasons(std::uint64_t mask);

} // namespace kbench::measure
