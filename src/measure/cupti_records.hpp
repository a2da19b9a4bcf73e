#pragma once
// CUPTI's activity records, read into ActivityRecord (activity_record.hpp): the one place that
// knows the layouts of CUpti_ActivityKernel10, Memcpy6, Memset4 and Memory4 (CUDA 13), which
// cupti_library.cpp checks against the loaded libcupti. Private to the CUPTI side of measure/
// (it includes cupti.h); pure, so tests/unit/test_cupti_records.cpp feeds it records built by
// hand.
#include "measure/activity_record.hpp"

#include <cupti.h>
#include <optional>
#include <string_view>

namespace kbench::measure {

// The record in kbench's terms; empty for a kind kbench does not enable (another CUPTI client's)
// and for memory operations other than allocations and releases.
std::optional<ActivityRecord> to_activity_record(const CUpti_Activity& record,
                                                 Demangler& demangler);

// "CONCURRENT_KERNEL", "MEMCPY", "MEMSET", "MEMORY2", else "?": the kinds the tracer enables,
// as its messages name them.
std::string_view activity_kind_name(CUpti_ActivityKind kind);

} // namespace kbench::measure
