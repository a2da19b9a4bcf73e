#include "measure/cupti_records.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace kbench::measure {
namespace {

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

// What every timed record kind carries, whatever its struct version.
template <typename Record>
void copy_timed_fields(const Record& record, ActivityRecord& out) {
  out.start_ns = record.start;
  out.end_ns = record.end;
  out.device_id = record.deviceId;
  out.context_id = record.contextId;
  out.stream_id = record.streamId;
  out.correlation_id = record.correlationId;
}

ActivityRecord from_kernel(const CUpti_ActivityKernel10& k, Demangler& demangler) {
  ActivityRecord out;
  out.kind = ActivityRecord::Kind::kernel;
  if (const char* name = k.name) {
    out.mangled = name;
    out.name = demangler.demangle(out.mangled);
  }
  copy_timed_fields(k, out);
  out.grid = {k.gridX, k.gridY, k.gridZ};
  out.block = {k.blockX, k.blockY, k.blockZ};
  out.registers_per_thread = k.registersPerThread;
  out.static_shared_bytes = static_cast<std::uint32_t>(k.staticSharedMemory);
  out.dynamic_shared_bytes = static_cast<std::uint32_t>(k.dynamicSharedMemory);
  return out;
}

ActivityRecord from_memcpy(const CUpti_ActivityMemcpy6& c) {
  ActivityRecord out;
  out.kind = ActivityRecord::Kind::memcpy;
  out.name = copy_kind_name(c.copyKind);
  copy_timed_fields(c, out);
  out.bytes = c.bytes;
  return out;
}

ActivityRecord from_memset(const CUpti_ActivityMemset4& s) {
  ActivityRecord out;
  out.kind = ActivityRecord::Kind::memset;
  out.name = "memset";
  copy_timed_fields(s, out);
  out.bytes = s.bytes;
  return out;
}

// Allocations and releases are instants: start = end = the record's timestamp.
std::optional<ActivityRecord> from_memory(const CUpti_ActivityMemory4& m) {
  ActivityRecord out;
  if (m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
    out.kind = ActivityRecord::Kind::memory_alloc;
  } else if (m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
    out.kind = ActivityRecord::Kind::memory_free;
  } else {
    return std::nullopt;
  }
  out.name = memory_kind_name(m.memoryKind);
  out.start_ns = m.timestamp;
  out.end_ns = m.timestamp;
  out.device_id = m.deviceId;
  out.context_id = m.contextId;
  out.stream_id = m.streamId;
  out.correlation_id = m.correlationId;
  out.bytes = m.bytes;
  return out;
}

} // namespace

// CUPTI hands out a CUpti_Activity header that begins the full record of its kind, so each
// case reads the whole struct the kind names.
std::optional<ActivityRecord> to_activity_record(const CUpti_Activity& record,
                                                 Demangler& demangler) {
  switch (record.kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return from_kernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record), demangler);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return from_memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record));
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return from_memset(reinterpret_cast<const CUpti_ActivityMemset4&>(record));
  case CUPTI_ACTIVITY_KIND_MEMORY2:
    return from_memory(reinterpret_cast<const CUpti_ActivityMemory4&>(record));
  default:
    return std::nullopt;
  }
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

} // namespace kbench::measure
