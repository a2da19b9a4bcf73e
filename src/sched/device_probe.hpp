#pragma once
// What GPUs this machine has, read through the CUDA driver API loaded at run time (dlopen), so
// that kbench builds and runs on machines without a GPU and says plainly what it found.
#include <optional>
#include <string>
#include <vector>

namespace kbench::sched {

struct GpuInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  long long l2_bytes = 0;
  long long memory_bytes = 0;
  int sm_clock_khz = 0;     // default (maximum) SM clock
  int memory_clock_khz = 0; // peak memory clock
  int memory_bus_bits = 0;
  std::string arch_list_entry() const; // "9.0", for TORCH_CUDA_ARCH_LIST
};

struct DeviceProbe {
  std::vector<GpuInfo> gpus;
  std::string driver_version;     // "13.0" (the driver API version), empty without a driver
  std::string unavailable_reason; // why no GPU is usable, when gpus is empty
};

// Probes once per process; cheap afterwards.
const DeviceProbe& probe_devices();

} // namespace kbench::sched
