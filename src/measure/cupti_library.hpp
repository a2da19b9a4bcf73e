#pragma once
// Finding libcupti at run time and checking that it reads the records kbench was compiled for.
// Private to the CUPTI side of measure/ (cupti_library.cpp, cupti_tracer.cpp): it includes
// cupti.h, which only those sources are given (src/measure/CMakeLists.txt), so that the rest of
// kbench, and a build without the CUPTI headers (cupti_tracer_stub.cpp), never see it.
//
// Loading is separate from tracing because it has a result worth reading on its own:
// check_cupti_record_layouts (cupti_tracer.hpp) runs the layout check without a GPU.
#include <cstddef>
#include <cupti.h>
#include <string>
#include <vector>

namespace kbench::measure {

// ACTIVITY_RECORD_ALIGNMENT in cupti_common.h: records, and so the buffers that hold them.
constexpr std::size_t kCuptiRecordAlignment = 8;

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

  // "<CUPTI's text> (CUPTI error N)", or "CUPTI error N" when the library cannot say.
  std::string result_text(CUptiResult rc) const;
};

struct LoadedCupti {
  std::string error; // "" when loaded; else the reason, starting with "unsupported: "
  std::string path;  // where the dynamic loader found libcupti
  CuptiApi api;
  // What degraded without failing, in the order found; kept even when `error` is set.
  std::vector<std::string> notes;
};

// Opens libcupti (KBENCH_CUPTI_LIBRARY first, then the soname, then the toolkit's paths),
// resolves its entry points and checks, in this order, that a GPU is there, that the API major
// version is the one built against and that the record layouts agree. Call once per process:
// CUPTI is a process-wide singleton.
LoadedCupti load_cupti();

} // namespace kbench::measure
