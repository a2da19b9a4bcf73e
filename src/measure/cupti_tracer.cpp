#include "measure/cupti_tracer.hpp"

#include "sched/device_probe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <mutex>
#include <unordered_map>
#include <utility>

#if KBENCH_HAVE_CUPTI
#include <cupti.h>
#endif

namespace kbench::measure {

#if KBENCH_HAVE_CUPTI

namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kBufferAlignment = 8; // ACTIVITY_RECORD_ALIGNMENT in cupti_common.h
constexpr std::size_t kSpareBuffers = 4;    // kept for reuse: their pages are already faulted in

// Every entry point is looked up by name; the types come from the headers, so a signature
// change in a future CUPTI shows up as a compile error here rather than as a crash.
struct CuptiApi {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetStreamIdEx) stream_id = nullptr;
  decltype(&cuptiGetVersion) version = nullptr;
  // Optional: only messages and the dropped-record count depend on them.
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped_records = nullptr;
};

template <typename F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

std::string_view activity_kind_name(CUpti_ActivityKind kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return "CONCURRENT_KERNEL";
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return "MEMCPY";
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return "MEMSET";
  case CUPTI_ACTIVITY_KIND_MEMORY2:
    return "MEMORY2";
  default:
    return "?";
  }
}

std::string_view copy_kind_name(std::uint8_t kind) {
  static constexpr std::array<std::string_view, 11> names = {
      "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < names.size() ? names[kind] : "unknown";
}

std::string_view memory_kind_name(CUpti_ActivityMemoryKind kind) {
  static constexpr std::array<std::string_view, 8> names = {
      "unknown", "pageable", "pinned",        "device",
      "array",   "managed",  "device_static", "managed_static"};
  const auto index = static_cast<std::size_t>(kind);
  return index < names.size() ? names[index] : "unknown";
}

// Where the dynamic loader found the library (useful when a soname resolved to torch's copy).
std::string loaded_path(void* library, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

struct OpenedLibrary {
  void* handle = nullptr;
  std::string path;
  std::vector<std::string> failures; // "candidate (dlerror)" for each that did not load
};

OpenedLibrary open_cupti() {
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
  OpenedLibrary library;
  for (const std::string& candidate : candidates) {
    library.handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library.handle) {
      library.path = loaded_path(library.handle, candidate);
      break;
    }
    const char* error = dlerror();
    library.failures.push_back(fmt::format("{} ({})", candidate, error ? error : "not found"));
  }
  return library;
}

// How many bytes the library steps over after a record of this kind. CUPTI sizes a record by
// its kind alone, so a zeroed record with only `kind` set is enough: a second record is placed
// at each candidate offset until the library lands on it. 0 when it never does.
std::size_t library_record_stride(decltype(&cuptiActivityGetNextRecord) next_record,
                                  CUpti_ActivityKind kind) {
  alignas(8) std::uint8_t buffer[2048];
  for (std::size_t offset = kBufferAlignment; offset + sizeof kind <= sizeof buffer / 2;
       offset += kBufferAlignment) {
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

} // namespace

struct CuptiTracer::Impl {
  // Written once under load_once, read-only afterwards.
  std::once_flag load_once;
  std::string load_result;
  bool loaded = false;
  std::string path;
  CuptiApi api;

  // start/stop/flush, from the caller's threads.
  std::mutex control;
  bool callbacks_registered = false;
  bool started = false;
  std::vector<CUpti_ActivityKind> enabled;

  // Filled by CUPTI's callbacks, which run on CUPTI's threads as well as inside flush().
  mutable std::mutex data;
  std::vector<ActivityRecord> completed;
  std::uint64_t dropped = 0;
  std::vector<std::string> notes;
  std::vector<std::uint8_t*> spare_buffers;
  std::unordered_map<std::string, std::string> demangled; // mangled -> demangled

  std::string result_text(CUptiResult rc) const {
    const char* text = nullptr;
    if (api.result_string && api.result_string(rc, &text) == CUPTI_SUCCESS && text) {
      return fmt::format("{} (CUPTI error {})", text, static_cast<int>(rc));
    }
    return fmt::format("CUPTI error {}", static_cast<int>(rc));
  }

  std::string do_load();
  std::uint8_t* take_buffer();
  void consume(std::uint8_t* buffer, std::size_t valid_bytes);
  void parse(const CUpti_Activity* record); // with `data` held
  void note(std::string text) {
    std::lock_guard lock(data);
    notes.push_back(std::move(text));
  }
};

namespace {

// The tracer is never destroyed (see instance()), so the callbacks may always reach it, even
// from CUPTI's own exit-time flush.
CuptiTracer::Impl* g_impl = nullptr;

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  *max_records = 0; // as many as fit
  *buffer = g_impl ? g_impl->take_buffer() : nullptr;
  *size = *buffer ? kBufferBytes : 0;
}

void CUPTIAPI on_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                  std::size_t valid_bytes) {
  if (g_impl && buffer) {
    g_impl->consume(buffer, valid_bytes);
  } else {
    std::free(buffer);
  }
}

} // namespace

std::string CuptiTracer::Impl::do_load() {
  const OpenedLibrary opened = open_cupti();
  void* library = opened.handle;
  if (!library) {
    return fmt::format("unsupported: libcupti could not be loaded; tried {}. Install CUPTI (it "
                       "ships with the CUDA toolkit) or set KBENCH_CUPTI_LIBRARY to its path",
                       fmt::join(opened.failures, ", "));
  }
  path = opened.path;
  if (const char* env = std::getenv("KBENCH_CUPTI_LIBRARY");
      env && *env && !opened.failures.empty()) {
    // The explicit choice failed and a default was taken: say so rather than hide it.
    note(fmt::format("KBENCH_CUPTI_LIBRARY could not be loaded: {}; using {}",
                     opened.failures.front(), path));
  }

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
      return fmt::format("unsupported: {} lacks {}; set KBENCH_CUPTI_LIBRARY to the libcupti of "
                         "CUDA 13",
                         path, name);
    }
  }
  resolve(library, "cuptiGetResultString", api.result_string);
  if (!resolve(library, "cuptiActivityGetNumDroppedRecords", api.dropped_records)) {
    note("cuptiActivityGetNumDroppedRecords is missing: dropped records are not counted");
  }

  // Checked before any CUPTI call: CUPTI without a driver has nothing to attach to.
  if (const auto& probe = sched::probe_devices(); probe.gpus.empty()) {
    return fmt::format("unsupported: CUPTI tracing needs a GPU: {}", probe.unavailable_reason);
  }

  // Record layouts change between major versions; the structs compiled in here are CUDA 13's.
  std::uint32_t version = 0;
  if (const CUptiResult rc = api.version(&version); rc != CUPTI_SUCCESS) {
    return fmt::format("unsupported: cuptiGetVersion failed in {}: {}", path, result_text(rc));
  }
  const std::uint32_t built = CUPTI_API_VERSION;
  if (version / 10000 != built / 10000) {
    return fmt::format("unsupported: {} has CUPTI API version {} but kbench was built with the "
                       "headers of version {}, whose activity records differ; set "
                       "KBENCH_CUPTI_LIBRARY to a libcupti of the same CUDA major version",
                       path, version, built);
  }
  if (version != built) {
    note(fmt::format("{} has CUPTI API version {}, kbench was built with {}: records are read "
                     "with the built layouts",
                     path, version, built));
  }
  std::vector<std::string> layout_notes;
  if (std::string error = check_layouts(api.next_record, path, layout_notes); !error.empty()) {
    return error;
  }
  for (std::string& text : layout_notes) {
    note(std::move(text));
  }
  std::uint64_t now = 0;
  if (const CUptiResult rc = api.timestamp(&now); rc != CUPTI_SUCCESS) {
    return fmt::format("unsupported: cuptiGetTimestamp failed: {}", result_text(rc));
  }
  loaded = true;
  return {};
}

std::uint8_t* CuptiTracer::Impl::take_buffer() {
  {
    std::lock_guard lock(data);
    if (!spare_buffers.empty()) {
      std::uint8_t* buffer = spare_buffers.back();
      spare_buffers.pop_back();
      return buffer;
    }
  }
  return static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
}

void CuptiTracer::Impl::consume(std::uint8_t* buffer, std::size_t valid_bytes) {
  std::lock_guard lock(data);
  CUpti_Activity* record = nullptr;
  // Stops at the end (CUPTI_ERROR_MAX_LIMIT_REACHED) or at an incomplete record
  // (CUPTI_ERROR_INVALID_KIND), as CUPTI's samples do.
  while (valid_bytes > 0 && api.next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    parse(record);
  }
  if (api.dropped_records) {
    std::size_t count = 0;
    if (api.dropped_records(nullptr, 0, &count) == CUPTI_SUCCESS) {
      dropped += count;
    }
  }
  if (spare_buffers.size() < kSpareBuffers) {
    spare_buffers.push_back(buffer);
  } else {
    std::free(buffer);
  }
}

namespace {

// What every timed record kind carries, whatever its struct version.
template <typename Record> void copy_timed_fields(const Record& record, ActivityRecord& out) {
  out.start_ns = record.start;
  out.end_ns = record.end;
  out.device_id = record.deviceId;
  out.context_id = record.contextId;
  out.stream_id = record.streamId;
  out.correlation_id = record.correlationId;
}

} // namespace

void CuptiTracer::Impl::parse(const CUpti_Activity* record) {
  ActivityRecord out;
  switch (record->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    out.kind = ActivityRecord::Kind::kernel;
    if (const char* name = k->name) {
      out.mangled = name;
      auto it = demangled.find(out.mangled);
      if (it == demangled.end()) {
        it = demangled.emplace(out.mangled, demangle_symbol(name)).first;
      }
      out.name = it->second;
    }
    copy_timed_fields(*k, out);
    out.grid = {k->gridX, k->gridY, k->gridZ};
    out.block = {k->blockX, k->blockY, k->blockZ};
    out.registers_per_thread = k->registersPerThread;
    out.static_shared_bytes = static_cast<std::uint32_t>(k->staticSharedMemory);
    out.dynamic_shared_bytes = static_cast<std::uint32_t>(k->dynamicSharedMemory);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
    out.kind = ActivityRecord::Kind::memcpy;
    out.name = copy_kind_name(c->copyKind);
    copy_timed_fields(*c, out);
    out.bytes = c->bytes;
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
    out.kind = ActivityRecord::Kind::memset;
    out.name = "memset";
    copy_timed_fields(*s, out);
    out.bytes = s->bytes;
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMORY2: {
    const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(record);
    if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
      out.kind = ActivityRecord::Kind::memory_alloc;
    } else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
      out.kind = ActivityRecord::Kind::memory_free;
    } else {
      return;
    }
    out.name = memory_kind_name(m->memoryKind);
    out.start_ns = m->timestamp;
    out.end_ns = m->timestamp;
    out.device_id = m->deviceId;
    out.context_id = m->contextId;
    out.stream_id = m->streamId;
    out.correlation_id = m->correlationId;
    out.bytes = m->bytes;
    break;
  }
  default:
    return; // a kind we did not enable (another CUPTI client's)
  }
  completed.push_back(std::move(out));
}

CuptiTracer::CuptiTracer() : impl_(std::make_unique<Impl>()) {
  g_impl = impl_.get();
}

std::string CuptiTracer::load() {
  std::call_once(impl_->load_once, [this] { impl_->load_result = impl_->do_load(); });
  return impl_->load_result;
}

std::string CuptiTracer::start() {
  if (std::string error = load(); !error.empty()) {
    return error;
  }
  std::lock_guard lock(impl_->control);
  if (impl_->started) {
    return {};
  }
  const CuptiApi& api = impl_->api;
  if (!impl_->callbacks_registered) {
    if (const CUptiResult rc = api.register_callbacks(on_buffer_requested, on_buffer_completed);
        rc != CUPTI_SUCCESS) {
      return fmt::format("unsupported: cuptiActivityRegisterCallbacks failed: {}",
                         impl_->result_text(rc));
    }
    impl_->callbacks_registered = true;
  }
  for (const CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    if (const CUptiResult rc = api.enable(kind); rc != CUPTI_SUCCESS) {
      for (const CUpti_ActivityKind done : impl_->enabled) {
        api.disable(done);
      }
      impl_->enabled.clear();
      return fmt::format("unsupported: cuptiActivityEnable({}) failed: {}. Another profiler "
                         "(Nsight Systems, Nsight Compute, torch.profiler) may hold CUPTI in "
                         "this process: run without it",
                         activity_kind_name(kind), impl_->result_text(rc));
    }
    impl_->enabled.push_back(kind);
  }
  // Allocation records are a bonus (peak memory); timing does not depend on them.
  if (const CUptiResult rc = api.enable(CUPTI_ACTIVITY_KIND_MEMORY2); rc == CUPTI_SUCCESS) {
    impl_->enabled.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
  } else {
    impl_->note(fmt::format("allocation records are unavailable (cuptiActivityEnable(MEMORY2) "
                            "failed: {}): allocated and freed bytes stay 0",
                            impl_->result_text(rc)));
  }
  impl_->started = true;
  return {};
}

void CuptiTracer::stop() {
  std::lock_guard lock(impl_->control);
  if (!impl_->started) {
    return;
  }
  for (const CUpti_ActivityKind kind : impl_->enabled) {
    impl_->api.disable(kind);
  }
  impl_->enabled.clear();
  impl_->api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  impl_->started = false;
}

bool CuptiTracer::started() const {
  std::lock_guard lock(impl_->control);
  return impl_->started;
}

std::vector<ActivityRecord> CuptiTracer::flush() {
  {
    std::lock_guard lock(impl_->control);
    if (impl_->callbacks_registered) {
      // Hands every buffer to on_buffer_completed before returning, in this thread.
      impl_->api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
  }
  std::vector<ActivityRecord> records;
  std::lock_guard lock(impl_->data);
  records.swap(impl_->completed);
  return records;
}

std::uint64_t CuptiTracer::timestamp_ns() {
  if (!load().empty()) {
    return 0;
  }
  std::uint64_t now = 0;
  return impl_->api.timestamp(&now) == CUPTI_SUCCESS ? now : 0;
}

std::uint32_t CuptiTracer::stream_id(std::uintptr_t cu_context, std::uintptr_t cu_stream) {
  if (!load().empty()) {
    return kInvalidStreamId;
  }
  // CU_STREAM_PER_THREAD names the per-thread stream only when the flag says so; every other
  // handle (0 included) is read as a legacy-default-stream program would, which is what torch
  // is (it is not built with per-thread default streams).
  constexpr std::uintptr_t kPerThreadStream = 0x2;
  const std::uint8_t per_thread = cu_stream == kPerThreadStream ? 1 : 0;
  std::uint32_t id = kInvalidStreamId;
  const CUptiResult rc =
      impl_->api.stream_id(reinterpret_cast<CUcontext>(cu_context),
                           reinterpret_cast<CUstream>(cu_stream), per_thread, &id);
  return rc == CUPTI_SUCCESS ? id : kInvalidStreamId;
}

std::uint64_t CuptiTracer::dropped_records() const {
  std::lock_guard lock(impl_->data);
  return impl_->dropped;
}

std::vector<std::string> CuptiTracer::notes() const {
  std::lock_guard lock(impl_->data);
  return impl_->notes;
}

std::string CuptiTracer::library_path() const {
  return impl_->loaded ? impl_->path : std::string();
}

std::string check_cupti_record_layouts() {
  const OpenedLibrary opened = open_cupti();
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

#else // !KBENCH_HAVE_CUPTI

// Without the headers there are no record layouts to read, so nothing is loaded at all.
struct CuptiTracer::Impl {};

namespace {
constexpr const char* kNoHeaders =
    "unsupported: kbench was built without the CUPTI headers (cupti.h); install the CUDA "
    "toolkit's CUPTI and reconfigure (cmake -DKBENCH_CUPTI_INCLUDE_DIR=<dir with cupti.h>)";
}

CuptiTracer::CuptiTracer() : impl_(std::make_unique<Impl>()) {}
std::string CuptiTracer::load() {
  return kNoHeaders;
}
std::string CuptiTracer::start() {
  return kNoHeaders;
}
void CuptiTracer::stop() {}
bool CuptiTracer::started() const {
  return false;
}
std::vector<ActivityRecord> CuptiTracer::flush() {
  return {};
}
std::uint64_t CuptiTracer::timestamp_ns() {
  return 0;
}
std::uint32_t CuptiTracer::stream_id(std::uintptr_t, std::uintptr_t) {
  return kInvalidStreamId;
}
std::uint64_t CuptiTracer::dropped_records() const {
  return 0;
}
std::vector<std::string> CuptiTracer::notes() const {
  return {};
}
std::string CuptiTracer::library_path() const {
  return {};
}
std::string check_cupti_record_layouts() {
  return kNoHeaders;
}

#endif

CuptiTracer::~CuptiTracer() = default;

CuptiTracer& CuptiTracer::instance() {
  // Leaked on purpose: CUPTI may call the buffer callbacks from its exit handler, after static
  // destructors would have run.
  static CuptiTracer* tracer = new CuptiTracer();
  return *tracer;
}

} // namespace kbench::measure
