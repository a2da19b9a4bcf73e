// Unit tests for src/measure/cupti_records.cpp: CUPTI's activity records, built here by hand as
// libcupti would write them, read into ActivityRecord. Compiled only where the CUPTI headers
// were found (tests/CMakeLists.txt).
#include "measure/cupti_records.hpp"

#include <gtest/gtest.h>

namespace kbench::measure {
namespace {

using Kind = ActivityRecord::Kind;

const CUpti_Activity& as_activity(const auto& record) {
  return reinterpret_cast<const CUpti_Activity&>(record);
}

CUpti_ActivityKernel10 kernel_record(const char* name) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = 1'000;
  k.end = 3'500;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 7;
  k.correlationId = 42;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  return k;
}

TEST(ToActivityRecord, AKernelKeepsItsTimesIdsLaunchShapeAndBothNames) {
  Demangler demangler;
  const CUpti_ActivityKernel10 k = kernel_record("_Z11relu_kernelPKfPfi");
  const std::optional<ActivityRecord> r = to_activity_record(as_activity(k), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, Kind::kernel);
  EXPECT_EQ(r->mangled, "_Z11relu_kernelPKfPfi");
  EXPECT_EQ(r->name, "relu_kernel(float const*, float*, int)");
  EXPECT_EQ(r->start_ns, 1'000u);
  EXPECT_EQ(r->end_ns, 3'500u);
  EXPECT_EQ(r->device_id, 1u);
  EXPECT_EQ(r->context_id, 2u);
  EXPECT_EQ(r->stream_id, 7u);
  EXPECT_EQ(r->correlation_id, 42u);
  EXPECT_EQ(r->grid, (std::array<std::int32_t, 3>{128, 2, 1}));
  EXPECT_EQ(r->block, (std::array<std::int32_t, 3>{256, 1, 1}));
  EXPECT_EQ(r->registers_per_thread, 32u);
  EXPECT_EQ(r->static_shared_bytes, 1024u);
  EXPECT_EQ(r->dynamic_shared_bytes, 4096u);
  EXPECT_EQ(r->bytes, 0u);
}

TEST(ToActivityRecord, ATritonKernelKeepsItsRawName) {
  Demangler demangler;
  const CUpti_ActivityKernel10 k = kernel_record("triton_poi_fused_add_0");
  const auto r = to_activity_record(as_activity(k), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "triton_poi_fused_add_0");
  EXPECT_EQ(r->mangled, "triton_poi_fused_add_0");
}

TEST(ToActivityRecord, AKernelWithoutANameHasEmptyNames) {
  Demangler demangler;
  const CUpti_ActivityKernel10 k = kernel_record(nullptr);
  const auto r = to_activity_record(as_activity(k), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "");
  EXPECT_EQ(r->mangled, "");
}

TEST(ToActivityRecord, TheSerialKernelKindIsReadAsAKernelToo) {
  Demangler demangler;
  CUpti_ActivityKernel10 k = kernel_record("add_kernel");
  k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  const auto r = to_activity_record(as_activity(k), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, Kind::kernel);
  EXPECT_EQ(r->name, "add_kernel");
}

TEST(ToActivityRecord, ACopyIsNamedByItsDirection) {
  Demangler demangler;
  CUpti_ActivityMemcpy6 c{};
  c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  c.bytes = 1 << 20;
  c.start = 10;
  c.end = 20;
  c.streamId = 3;
  c.correlationId = 5;
  const auto r = to_activity_record(as_activity(c), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, Kind::memcpy);
  EXPECT_EQ(r->name, "HtoD");
  EXPECT_EQ(r->bytes, 1u << 20);
  EXPECT_EQ(r->start_ns, 10u);
  EXPECT_EQ(r->end_ns, 20u);
  EXPECT_EQ(r->stream_id, 3u);
  EXPECT_EQ(r->correlation_id, 5u);

  c.copyKind = 200; // a direction a later CUPTI may add
  EXPECT_EQ(to_activity_record(as_activity(c), demangler)->name, "unknown");
}

TEST(ToActivityRecord, ASetIsNamedMemset) {
  Demangler demangler;
  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 4096;
  s.start = 100;
  s.end = 150;
  const auto r = to_activity_record(as_activity(s), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, Kind::memset);
  EXPECT_EQ(r->name, "memset");
  EXPECT_EQ(r->bytes, 4096u);
  EXPECT_EQ(r->end_ns, 150u);
}

CUpti_ActivityMemory4 memory_record(CUpti_ActivityMemoryOperationType operation) {
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = operation;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.timestamp = 777;
  m.bytes = 1 << 30;
  m.streamId = 9;
  return m;
}

TEST(ToActivityRecord, AnAllocationIsAnInstantNamedByItsMemoryKind) {
  Demangler demangler;
  const auto m = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
  const auto r = to_activity_record(as_activity(m), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, Kind::memory_alloc);
  EXPECT_EQ(r->name, "device");
  EXPECT_EQ(r->start_ns, 777u);
  EXPECT_EQ(r->end_ns, 777u);
  EXPECT_EQ(r->bytes, 1u << 30);
  EXPECT_EQ(r->stream_id, 9u);
}

TEST(ToActivityRecord, AReleaseIsAFree) {
  Demangler demangler;
  const auto m = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
  const auto r = to_activity_record(as_activity(m), demangler);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, Kind::memory_free);
}

TEST(ToActivityRecord, OtherMemoryOperationsAreLeftOut) {
  Demangler demangler;
  const auto m = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID);
  EXPECT_FALSE(to_activity_record(as_activity(m), demangler).has_value());
}

TEST(ToActivityRecord, KindsKbenchDoesNotEnableAreLeftOut) {
  Demangler demangler;
  CUpti_ActivityKernel10 other{};
  other.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  EXPECT_FALSE(to_activity_record(as_activity(other), demangler).has_value());
}

TEST(Demangler, ASymbolIsDemangledOnceAndRemembered) {
  Demangler demangler;
  const std::string& first = demangler.demangle("_Z11relu_kernelPKfPfi");
  const std::string& again = demangler.demangle("_Z11relu_kernelPKfPfi");
  EXPECT_EQ(first, "relu_kernel(float const*, float*, int)");
  EXPECT_EQ(&first, &again);
}

TEST(ActivityKindName, NamesTheKindsTheTracerEnables) {
  EXPECT_EQ(activity_kind_name(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "CONCURRENT_KERNEL");
  EXPECT_EQ(activity_kind_name(CUPTI_ACTIVITY_KIND_MEMCPY), "MEMCPY");
  EXPECT_EQ(activity_kind_name(CUPTI_ACTIVITY_KIND_MEMSET), "MEMSET");
  EXPECT_EQ(activity_kind_name(CUPTI_ACTIVITY_KIND_MEMORY2), "MEMORY2");
  EXPECT_EQ(activity_kind_name(CUPTI_ACTIVITY_KIND_DRIVER), "?");
}

} // namespace
} // namespace kbench::measure
