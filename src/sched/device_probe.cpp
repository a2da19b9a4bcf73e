#include "sched/device_probe.hpp"

#include "sched/dynamic_library.hpp"

#include <fmt/format.h>

#include <cstddef>

namespace kbench::sched {
namespace {

// The few driver API entry points we need, declared by hand: no CUDA headers at build time.
using CUresult = int;
using CUdevice = int;
using cuInit_t = CUresult (*)(unsigned int);
using cuDriverGetVersion_t = CUresult (*)(int*);
using cuDeviceGetCount_t = CUresult (*)(int*);
using cuDeviceGet_t = CUresult (*)(CUdevice*, int);
using cuDeviceGetName_t = CUresult (*)(char*, int, CUdevice);
using cuDeviceGetAttribute_t = CUresult (*)(int*, int, CUdevice);
using cuDeviceTotalMem_t = CUresult (*)(std::size_t*, CUdevice);
using cuGetErrorString_t = CUresult (*)(CUresult, const char**);

// CUdevice_attribute values from cuda.h (stable across CUDA versions).
constexpr int kAttrClockRate = 13;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMemoryClockRate = 36;
constexpr int kAttrGlobalMemoryBusWidth = 37;
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

DeviceProbe run_probe() {
  DeviceProbe probe;
  void* library = open_first_library({"libcuda.so.1"}).handle;
  if (!library) {
    probe.unavailable_reason = "no NVIDIA driver: libcuda.so.1 could not be loaded";
    return probe;
  }
  cuInit_t cu_init = nullptr;
  cuDriverGetVersion_t cu_version = nullptr;
  cuDeviceGetCount_t cu_count = nullptr;
  cuDeviceGet_t cu_get = nullptr;
  cuDeviceGetName_t cu_name = nullptr;
  cuDeviceGetAttribute_t cu_attr = nullptr;
  cuDeviceTotalMem_t cu_mem = nullptr;
  cuGetErrorString_t cu_error = nullptr;
  // Optional: the version (a fact in the report) and the error text.
  resolve(library, "cuDriverGetVersion", cu_version);
  resolve(library, "cuGetErrorString", cu_error);
  if (!resolve(library, "cuInit", cu_init) || !resolve(library, "cuDeviceGetCount", cu_count) ||
      !resolve(library, "cuDeviceGet", cu_get) || !resolve(library, "cuDeviceGetName", cu_name) ||
      !resolve(library, "cuDeviceGetAttribute", cu_attr) ||
      !resolve(library, "cuDeviceTotalMem_v2", cu_mem)) {
    probe.unavailable_reason = "libcuda.so.1 lacks the driver API entry points kbench needs";
    return probe;
  }
  if (const CUresult rc = cu_init(0); rc != 0) {
    const char* text = nullptr;
    if (cu_error) {
      cu_error(rc, &text);
    }
    probe.unavailable_reason =
        fmt::format("the CUDA driver did not initialise: {} (error {})", text ? text : "?", rc);
    return probe;
  }
  if (int version = 0; cu_version && cu_version(&version) == 0) {
    probe.driver_version = fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
  }
  int count = 0;
  if (cu_count(&count) != 0 || count == 0) {
    probe.unavailable_reason = "the CUDA driver sees no GPU (check CUDA_VISIBLE_DEVICES)";
    return probe;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    if (cu_get(&device, i) != 0) {
      continue;
    }
    GpuInfo gpu;
    gpu.index = i;
    char name[256] = {};
    cu_name(name, sizeof name, device);
    gpu.name = name;
    auto attr = [&](int which) {
      int value = 0;
      cu_attr(&value, which, device);
      return value;
    };
    gpu.cc_major = attr(kAttrComputeCapabilityMajor);
    gpu.cc_minor = attr(kAttrComputeCapabilityMinor);
    gpu.sm_count = attr(kAttrMultiprocessorCount);
    gpu.l2_bytes = attr(kAttrL2CacheSize);
    gpu.sm_clock_khz = attr(kAttrClockRate);
    gpu.memory_clock_khz = attr(kAttrMemoryClockRate);
    gpu.memory_bus_bits = attr(kAttrGlobalMemoryBusWidth);
    std::size_t bytes = 0;
    cu_mem(&bytes, device);
    gpu.memory_bytes = static_cast<long long>(bytes);
    probe.gpus.push_back(gpu);
  }
  // The library stays loaded: later stages (CUPTI timing) use the same driver.
  return probe;
}

} // namespace

std::string GpuInfo::arch_list_entry() const {
  return fmt::format("{}.{}", cc_major, cc_minor);
}

const DeviceProbe& probe_devices() {
  static const DeviceProbe probe = run_probe();
  return probe;
}

} // namespace kbench::sched
