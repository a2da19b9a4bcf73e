#include "measure/cupti_library.hpp"

#include "measure/cupti_tracer.hpp"
#include "sched/device_probe.hpp"
#include "sched/dynamic_library.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <utility>

namespace kbench::measure {
namespace {

using sched::resolve;

// Where the dynamic loader found the library (useful when a soname resolved to torch's copy).
std::string loaded_path(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

struct OpenedCupti {
  void* handle = nullptr;
  std::string path;
  std::vector<std::string> failures; // "candidate (dlerror)" for each that did not load
};

OpenedCupti open_cupti() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KBENCH_CUPTI_LIBRARY"); env && *env) {
    candidates.emplace_back(env);
  }
  // The soname first: inside the worker torch has already loaded its libcupti.so.13, and a
  // second copy of CUPTI in one process would fight the first over the driver's hooks.
  for (const char* name :
       {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"}) {
    candidates.emplace_back(name);
  }
  sched::OpenedLibrary opened = sched::open_first_library(candidates);
  OpenedCupti library;
  library.handle = opened.handle;
  if (opened.handle) {
    library.path = loaded_path(opened.handle, opened.candidate);
  }
  library.failures = std::move(opened.failures);
  return library;
}

// How many bytes the library steps over after a record of this kind. CUPTI sizes a record by
// its kind alone, so a zeroed record with only `kind` set is enough: a second record is placed
// at each candidate offset until the library lands on it. 0 when it never does.
std::size_t library_record_stride(decltype(&cuptiActivityGetNextRecord) next_record,
                                  CUpti_ActivityKind kind) {
  alignas(8) std::uint8_t buffer[2048];
  for (std::size_t offset = kCuptiRecordAlignment; offset + sizeof kind <= sizeof buffer / 2;
       offset += kCuptiRecordAlignment) {
    std::memset(buffer, 0, sizeof buffer);
    std::memcpy(buffer, &kind, sizeof kind);
    std::memcpy(buffer + offset, &kind, sizeof kind);
    CUpti_Activity* record = nullptr;
    if (next_record(buffer, sizeof buffer, &record) != CUPTI_SUCCESS ||
        next_record(buffer, sizeof buffer, &record) != CUPTI_SUCCESS) {
      continue;
    }
    return static_cast<std::size_t>(reinterpret_cast<std::uint8_t*>(record) - buffer);
  }
  return 0;
}

// Compares the library's record sizes with the structs compiled in. A larger library record
// only appends fields (how CUPTI versions its records) and is read by its prefix: a note. A
// smaller one cannot be read: the error.
std::string check_layouts(decltype(&cuptiActivityGetNextRecord) next_record,
                          const std::string& path, std::vector<std::string>& notes) {
  const struct {
    CUpti_ActivityKind kind;
    std::size_t size;
    const char* type;
  } expected[] = {
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof(CUpti_ActivityKernel10),
       "CUpti_ActivityKernel10"},
      {CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6), "CUpti_ActivityMemcpy6"},
      {CUPTI_ACTIVITY_KIND_MEMSET, sizeof(CUpti_ActivityMemset4), "CUpti_ActivityMemset4"},
      {CUPTI_ACTIVITY_KIND_MEMORY2, sizeof(CUpti_ActivityMemory4), "CUpti_ActivityMemory4"},
  };
  for (const auto& e : expected) {
    const std::size_t stride = library_record_stride(next_record, e.kind);
    if (stride == 0) {
      notes.push_back(
          fmt::format("could not measure {}'s {} record size; trusting the headers", path, e.type));
    } else if (stride < e.size) {
      return fmt::format("unsupported: {} writes {}-byte records where kbench's headers define "
                         "{} as {} bytes; rebuild kbench against the CUPTI headers of that "
                         "library or set KBENCH_CUPTI_LIBRARY to a matching libcupti",
                         path, stride, e.type, e.size);
    } else if (stride > e.size) {
      notes.push_back(fmt::format("{} writes {}-byte records where kbench's {} has {} bytes: "
                                  "read by their common prefix",
                                  path, stride, e.type, e.size));
    }
  }
  return {};
}

// The entry points tracing cannot do without, resolved into `api`; "" or the first one missing.
const char* missing_required_entry_point(void* library, CuptiApi& api) {
  const std::pair<const char*, bool> required[] = {
      {"cuptiActivityRegisterCallbacks",
       resolve(library, "cuptiActivityRegisterCallbacks", api.register_callbacks)},
      {"cuptiActivityEnable", resolve(library, "cuptiActivityEnable", api.enable)},
      {"cuptiActivityDisable", resolve(library, "cuptiActivityDisable", api.disable)},
      {"cuptiActivityFlushAll", resolve(library, "cuptiActivityFlushAll", api.flush_all)},
      {"cuptiActivityGetNextRecord",
       resolve(library, "cuptiActivityGetNextRecord", api.next_record)},
      {"cuptiGetTimestamp", resolve(library, "cuptiGetTimestamp", api.timestamp)},
      {"cuptiGetStreamIdEx", resolve(library, "cuptiGetStreamIdEx", api.stream_id)},
      {"cuptiGetVersion", resolve(library, "cuptiGetVersion", api.version)},
  };
  for (const auto& [name, found] : required) {
    if (!found) {
      return name;
    }
  }
  return "";
}

// The checks that need a GPU and the entry points, in the order load_cupti documents; "" or
// the reason.
std::string check_loaded(LoadedCupti& cupti) {
  const CuptiApi& api = cupti.api;
  // Checked before any CUPTI call: CUPTI without a driver has nothing to attach to.
  if (const auto& probe = sched::probe_devices(); probe.gpus.empty()) {
    return fmt::format("unsupported: CUPTI tracing needs a GPU: {}", probe.unavailable_reason);
  }

  // Record layouts change between major versions; the structs compiled in here are CUDA 13's.
  std::uint32_t version = 0;
  if (const CUptiResult rc = api.version(&version); rc != CUPTI_SUCCESS) {
    return fmt::format("unsupported: cuptiGetVersion failed in {}: {}", cupti.path,
                       api.result_text(rc));
  }
  const std::uint32_t built = CUPTI_API_VERSION;
  if (version / 10000 != built / 10000) {
    return fmt::format("unsupported: {} has CUPTI API version {} but kbench was built with the "
                       "headers of version {}, whose activity records differ; set "
                       "KBENCH_CUPTI_LIBRARY to a libcupti of the same CUDA major version",
                       cupti.path, version, built);
  }
  if (version != built) {
    cupti.notes.push_back(fmt::format("{} has CUPTI API version {}, kbench was built with {}: "
                                      "records are read with the built layouts",
                                      cupti.path, version, built));
  }
  std::vector<std::string> layout_notes; // dropped when a layout is unreadable
  if (std::string error = check_layouts(api.next_record, cupti.path, layout_notes);
      !error.empty()) {
    return error;
  }
  for (std::string& text : layout_notes) {
    cupti.notes.push_back(std::move(text));
  }
  std::uint64_t now = 0;
  if (const CUptiResult rc = api.timestamp(&now); rc != CUPTI_SUCCESS) {
    return fmt::format("unsupported: cuptiGetTimestamp failed: {}", api.result_text(rc));
  }
  return {};
}

} // namespace

std::string CuptiApi::result_text(CUptiResult rc) const {
  const char* text = nullptr;
  if (result_string && result_string(rc, &text) == CUPTI_SUCCESS && text) {
    return fmt::format("{} (CUPTI error {})", text, static_cast<int>(rc));
  }
  return fmt::format("CUPTI error {}", static_cast<int>(rc));
}

LoadedCupti load_cupti() {
  LoadedCupti cupti;
  const OpenedCupti opened = open_cupti();
  void* library = opened.handle;
  if (!library) {
    cupti.error = fmt::format("unsupported: libcupti could not be loaded; tried {}. Install CUPTI "
                              "(it ships with the CUDA toolkit) or set KBENCH_CUPTI_LIBRARY to "
                              "its path",
                              fmt::join(opened.failures, ", "));
    return cupti;
  }
  cupti.path = opened.path;
  if (const char* env = std::getenv("KBENCH_CUPTI_LIBRARY");
      env && *env && !opened.failures.empty()) {
    // The explicit choice failed and a default was taken: say so rather than hide it.
    cupti.notes.push_back(fmt::format("KBENCH_CUPTI_LIBRARY could not be loaded: {}; using {}",
                                      opened.failures.front(), cupti.path));
  }

  CuptiApi& api = cupti.api;
  if (const std::string missing = missing_required_entry_point(library, api); !missing.empty()) {
    cupti.error = fmt::format("unsupported: {} lacks {}; set KBENCH_CUPTI_LIBRARY to the "
                              "libcupti of CUDA 13",
                              cupti.path, missing);
    return cupti;
  }
  resolve(library, "cuptiGetResultString", api.result_string);
  if (!resolve(library, "cuptiActivityGetNumDroppedRecords", api.dropped_records)) {
    cupti.notes.push_back(
        "cuptiActivityGetNumDroppedRecords is missing: dropped records are not counted");
  }
  cupti.error = check_loaded(cupti);
  return cupti;
}

std::string check_cupti_record_layouts() {
  const OpenedCupti opened = open_cupti();
  if (!opened.handle) {
    return fmt::format("unsupported: libcupti could not be loaded; tried {}",
                       fmt::join(opened.failures, ", "));
  }
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  if (!resolve(opened.handle, "cuptiActivityGetNextRecord", next_record)) {
    return fmt::format("unsupported: {} lacks cuptiActivityGetNextRecord", opened.path);
  }
  std::vector<std::string> notes;
  if (std::string error = check_layouts(next_record, opened.path, notes); !error.empty()) {
    return error;
  }
  return fmt::format("{}", fmt::join(notes, "; "));
}

} // namespace kbench::measure
