#pragma once
// CUPTI activity tracing of the GPU work each timed call causes (docs/architecture.md, "The
// measurement engine": device_us spans every kernel, copy and set of the call, on every
// stream). libcupti is opened with dlopen at run time and nothing links it, libcuda or
// libcudart, so kbench builds and runs on machines without a GPU and says plainly why tracing
// is unavailable there.
//
// Two implementations behind this header, chosen by src/measure/CMakeLists.txt: with the CUPTI
// headers, cupti_tracer.cpp (buffers and callbacks) over cupti_library.cpp (loading, checks)
// and cupti_records.cpp (record layouts); without them, cupti_tracer_stub.cpp, which answers
// "unsupported" to everything. The pimpl keeps cupti.h out of this header either way.
//
// CUPTI's activity API has one set of buffer callbacks per process, hence one tracer per
// process. Typical use around a timed call, from the worker (through kbench_native):
//   load(); start();                       once
//   synchronise; t0 = timestamp_ns(); call; synchronise; t1 = timestamp_ns();
//   records = flush();                     everything completed since the previous flush
//   summarize_call(records, t0, t1, ...)   (activity_summary.hpp)
// flush() does not synchronise the device: records of unfinished work come back untimed.
#include "measure/activity_record.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kbench::measure {

class CuptiTracer {
public:
  // CUPTI_INVALID_STREAM_ID: what stream_id() answers when CUPTI cannot resolve the stream.
  static constexpr std::uint32_t kInvalidStreamId = 0xFFFFFFFFu;

  static CuptiTracer& instance();

  // "" when CUPTI is ready, else a reason starting with "unsupported: ". Runs once; later calls
  // answer the same.
  std::string load();
  // Enables kernel, copy, set and (when the driver allows) allocation records. "" or the
  // reason. Idempotent while started.
  std::string start();
  // Disables the records; what completed stays for the next flush().
  void stop();
  bool started() const;
  // Forces CUPTI to hand over its buffers and returns every record completed since the previous
  // flush, oldest first. Empty when not loaded.
  std::vector<ActivityRecord> flush();
  // CUPTI's clock, the one activity records use; 0 when not loaded.
  std::uint64_t timestamp_ns();
  // The CUPTI id of a stream, as records carry it. cu_stream is the raw CUstream handle
  // (torch.cuda.Stream.cuda_stream): 0 is the default stream of the calling thread's current
  // context taken as the legacy default stream, 0x1 CU_STREAM_LEGACY, 0x2 CU_STREAM_PER_THREAD.
  // cu_context may be 0 (no check that the stream belongs to it). kInvalidStreamId when CUPTI
  // is not loaded or cannot resolve the stream (no current context, foreign handle).
  std::uint32_t stream_id(std::uintptr_t cu_context, std::uintptr_t cu_stream);
  // Records CUPTI dropped for want of buffer space since start(): non-zero means the timings of
  // that interval are incomplete.
  std::uint64_t dropped_records() const;
  // What degraded without failing (allocation records unavailable, library fallbacks...).
  std::vector<std::string> notes() const;
  // The libcupti that was loaded; empty when none.
  std::string library_path() const;

  struct Impl;

private:
  CuptiTracer();
  ~CuptiTracer();
  std::unique_ptr<Impl> m_impl;
};

// Whether the libcupti the tracer would load steps through kernel, copy, set and memory records
// with the sizes of the structs kbench was compiled with (CUpti_ActivityKernel10, Memcpy6,
// Memset4, Memory4 of CUDA 13). Needs no GPU: load() runs the same check, and tests run it
// where load() cannot. "" when every size agrees; else what differs, starting with
// "unsupported: " when records cannot be read.
std::string check_cupti_record_layouts();

} // namespace kbench::measure
