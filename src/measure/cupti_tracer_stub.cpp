// The tracer of a build without the CUPTI headers (src/measure/CMakeLists.txt compiles this file
// instead of cupti_tracer.cpp, cupti_library.cpp and cupti_records.cpp). Without the headers
// there are no record layouts to read, so nothing is loaded at all, and every answer says how
// to get a build that traces.
#include "measure/cupti_tracer.hpp"

namespace kbench::measure {
namespace {

constexpr const char* kNoHeaders =
    "unsupported: kbench was built without the CUPTI headers (cupti.h); install the CUDA "
    "toolkit's CUPTI and reconfigure (cmake -DKBENCH_CUPTI_INCLUDE_DIR=<dir with cupti.h>)";

} // namespace

struct CuptiTracer::Impl {};

CuptiTracer::CuptiTracer() : m_impl(std::make_unique<Impl>()) {}

CuptiTracer::~CuptiTracer() = default;

CuptiTracer& CuptiTracer::instance() {
  // Never destroyed, as with CUPTI (cupti_tracer.cpp), so both builds end the same way.
  static CuptiTracer* tracer = new CuptiTracer();
  return *tracer;
}

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

} // namespace kbench::measure
