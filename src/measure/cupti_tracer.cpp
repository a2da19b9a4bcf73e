// The CUPTI tracer: the activity buffers, CUPTI's two buffer callbacks, and start/stop/flush.
// Loading and its checks are in cupti_library.cpp, reading records in cupti_records.cpp.
#include "measure/cupti_tracer.hpp"

#include "measure/cupti_buffer_pool.hpp"
#include "measure/cupti_library.hpp"
#include "measure/cupti_records.hpp"

#include <fmt/format.h>

#include <mutex>
#include <utility>

namespace kbench::measure {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kSpareBuffers = 4; // kept for reuse: their pages are already faulted in

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
  CuptiBufferPool buffers{kBufferBytes, kCuptiRecordAlignment, kSpareBuffers};
  Demangler demangler;

  std::string do_load();
  std::uint8_t* take_buffer();
  void consume(std::uint8_t* buffer, std::size_t valid_bytes);
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

// Every buffer came from g_impl's pool (on_buffer_requested), which takes it back.
void CUPTIAPI on_buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                                  std::size_t valid_bytes) {
  if (g_impl && buffer) {
    g_impl->consume(buffer, valid_bytes);
  }
}

} // namespace

std::string CuptiTracer::Impl::do_load() {
  LoadedCupti cupti = load_cupti();
  for (std::string& text : cupti.notes) {
    note(std::move(text));
  }
  if (!cupti.error.empty()) {
    return cupti.error;
  }
  path = std::move(cupti.path);
  api = cupti.api;
  loaded = true;
  return {};
}

std::uint8_t* CuptiTracer::Impl::take_buffer() {
  std::lock_guard lock(data);
  return buffers.take();
}

void CuptiTracer::Impl::consume(std::uint8_t* buffer, std::size_t valid_bytes) {
  std::lock_guard lock(data);
  CUpti_Activity* record = nullptr;
  // Stops at the end (CUPTI_ERROR_MAX_LIMIT_REACHED) or at an incomplete record
  // (CUPTI_ERROR_INVALID_KIND), as CUPTI's samples do.
  while (valid_bytes > 0 && api.next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (std::optional<ActivityRecord> out = to_activity_record(*record, demangler)) {
      completed.push_back(std::move(*out));
    }
  }
  if (api.dropped_records) {
    std::size_t count = 0;
    if (api.dropped_records(nullptr, 0, &count) == CUPTI_SUCCESS) {
      dropped += count;
    }
  }
  buffers.give_back(buffer);
}

CuptiTracer::CuptiTracer() : m_impl(std::make_unique<Impl>()) {
  g_impl = m_impl.get();
}

CuptiTracer::~CuptiTracer() = default;

CuptiTracer& CuptiTracer::instance() {
  // Leaked on purpose: CUPTI may call the buffer callbacks from its exit handler, after static
  // destructors would have run.
  static CuptiTracer* tracer = new CuptiTracer();
  return *tracer;
}

std::string CuptiTracer::load() {
  std::call_once(m_impl->load_once, [this] { m_impl->load_result = m_impl->do_load(); });
  return m_impl->load_result;
}

std::string CuptiTracer::start() {
  if (std::string error = load(); !error.empty()) {
    return error;
  }
  std::lock_guard lock(m_impl->control);
  if (m_impl->started) {
    return {};
  }
  const CuptiApi& api = m_impl->api;
  if (!m_impl->callbacks_registered) {
    if (const CUptiResult rc = api.register_callbacks(on_buffer_requested, on_buffer_completed);
        rc != CUPTI_SUCCESS) {
      return fmt::format("unsupported: cuptiActivityRegisterCallbacks failed: {}",
                         api.result_text(rc));
    }
    m_impl->callbacks_registered = true;
  }
  for (const CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET}) {
    if (const CUptiResult rc = api.enable(kind); rc != CUPTI_SUCCESS) {
      for (const CUpti_ActivityKind done : m_impl->enabled) {
        api.disable(done);
      }
      m_impl->enabled.clear();
      return fmt::format("unsupported: cuptiActivityEnable({}) failed: {}. Another profiler "
                         "(Nsight Systems, Nsight Compute, torch.profiler) may hold CUPTI in "
                         "this process: run without it",
                         activity_kind_name(kind), api.result_text(rc));
    }
    m_impl->enabled.push_back(kind);
  }
  // Allocation records are a bonus (peak memory); timing does not depend on them.
  if (const CUptiResult rc = api.enable(CUPTI_ACTIVITY_KIND_MEMORY2); rc == CUPTI_SUCCESS) {
    m_impl->enabled.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
  } else {
    m_impl->note(fmt::format("allocation records are unavailable (cuptiActivityEnable(MEMORY2) "
                             "failed: {}): allocated and freed bytes stay 0",
                             api.result_text(rc)));
  }
  m_impl->started = true;
  return {};
}

void CuptiTracer::stop() {
  std::lock_guard lock(m_impl->control);
  if (!m_impl->started) {
    return;
  }
  for (const CUpti_ActivityKind kind : m_impl->enabled) {
    m_impl->api.disable(kind);
  }
  m_impl->enabled.clear();
  m_impl->api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  m_impl->started = false;
}

bool CuptiTracer::started() const {
  std::lock_guard lock(m_impl->control);
  return m_impl->started;
}

std::vector<ActivityRecord> CuptiTracer::flush() {
  {
    std::lock_guard lock(m_impl->control);
    if (m_impl->callbacks_registered) {
      // Hands every buffer to on_buffer_completed before returning, in this thread.
      m_impl->api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
  }
  std::vector<ActivityRecord> records;
  std::lock_guard lock(m_impl->data);
  records.swap(m_impl->completed);
  return records;
}

std::uint64_t CuptiTracer::timestamp_ns() {
  if (!load().empty()) {
    return 0;
  }
  std::uint64_t now = 0;
  return m_impl->api.timestamp(&now) == CUPTI_SUCCESS ? now : 0;
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
      m_impl->api.stream_id(reinterpret_cast<CUcontext>(cu_context),
                            reinterpret_cast<CUstream>(cu_stream), per_thread, &id);
  return rc == CUPTI_SUCCESS ? id : kInvalidStreamId;
}

std::uint64_t CuptiTracer::dropped_records() const {
  std::lock_guard lock(m_impl->data);
  return m_impl->dropped;
}

std::vector<std::string> CuptiTracer::notes() const {
  std::lock_guard lock(m_impl->data);
  return m_impl->notes;
}

std::string CuptiTracer::library_path() const {
  return m_impl->loaded ? m_impl->path : std::string();
}

} // namespace kbench::measure
