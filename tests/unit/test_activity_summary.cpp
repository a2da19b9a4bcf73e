#include "measure/activity_summary.hpp"
#include "measure/cupti_tracer.hpp"
#include "measure/nvml_clocks.hpp"
#include "sched/device_probe.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>

namespace kbench::measure {
namespace {

using Kind = ActivityRecord::Kind;

// Times in µs for readability; records carry ns.
ActivityRecord work(Kind kind, std::string name, double start_us, double end_us,
                    std::uint32_t stream, std::uint64_t bytes = 0) {
  ActivityRecord r;
  r.kind = kind;
  r.name = std::move(name);
  r.start_ns = static_cast<std::uint64_t>(start_us * 1000);
  r.end_ns = static_cast<std::uint64_t>(end_us * 1000);
  r.stream_id = stream;
  r.bytes = bytes;
  return r;
}

ActivityRecord kernel(std::string name, double start_us, double end_us, std::uint32_t stream) {
  return work(Kind::kernel, std::move(name), start_us, end_us, stream);
}

ActivityRecord memory(Kind kind, double at_us, std::uint64_t bytes) {
  ActivityRecord r = work(kind, "device", at_us, at_us, 0xFFFFFFFFu, bytes);
  return r;
}

constexpr std::uint64_t us(double value) {
  return static_cast<std::uint64_t>(value * 1000);
}

TEST(SummarizeCall, NoRecordsGivesZeroDeviceTime) {
  const CallActivity a = summarize_call({}, us(0), us(100), 7);
  EXPECT_EQ(a.device_us, 0.0);
  EXPECT_EQ(a.busy_us, 0.0);
  EXPECT_FALSE(a.first_start_ns.has_value());
  EXPECT_FALSE(a.off_caller_stream_work);
  EXPECT_TRUE(a.to_json()["first_start_ns"].is_null());
}

TEST(SummarizeCall, DeviceTimeSpansEveryStream) {
  // Caller stream 7 runs 10..20, a side stream 13 runs 15..40: the call's GPU time is 10..40.
  const CallActivity a =
      summarize_call({kernel("a", 10, 20, 7), kernel("b", 15, 40, 13)}, us(5), us(50), 7);
  EXPECT_DOUBLE_EQ(a.device_us, 30.0);
  EXPECT_DOUBLE_EQ(a.kernel_us, 35.0);
  EXPECT_DOUBLE_EQ(a.busy_us, 30.0);
  EXPECT_EQ(a.streams, (std::set<std::uint32_t>{7, 13}));
  EXPECT_TRUE(a.off_caller_stream_work);
  // No caller_done_ns: judged against the caller stream's last work (20).
  EXPECT_TRUE(a.unjoined_stream_work);
  EXPECT_DOUBLE_EQ(a.unjoined_tail_us, 20.0); // 40 - 20
}

TEST(SummarizeCall, BusyIsTheUnionAndDeviceTheSpan) {
  // Two bursts with a gap: 0..10 and 30..35 (with an overlapping copy 32..38).
  const CallActivity a = summarize_call(
      {kernel("k", 0, 10, 7), kernel("k", 30, 35, 7), work(Kind::memcpy, "DtoD", 32, 38, 7, 64)},
      us(0), us(100), 7);
  EXPECT_DOUBLE_EQ(a.device_us, 38.0);
  EXPECT_DOUBLE_EQ(a.busy_us, 18.0); // 10 + (38 - 30)
  EXPECT_DOUBLE_EQ(a.kernel_us, 15.0);
  EXPECT_DOUBLE_EQ(a.copy_us, 6.0);
  EXPECT_FALSE(a.off_caller_stream_work);
  EXPECT_FALSE(a.unjoined_stream_work);
  EXPECT_EQ(a.unjoined_tail_us, 0.0);
}

TEST(SummarizeCall, WindowKeepsOverlappingWorkOnly) {
  const CallActivity a = summarize_call({kernel("before", 0, 9, 7), kernel("straddles", 9, 12, 7),
                                         kernel("inside", 12, 20, 7), kernel("after", 31, 40, 7)},
                                        us(10), us(30), 7);
  EXPECT_EQ(a.kernel_count, 2u);
  EXPECT_EQ(a.kernels_by_name.count("before"), 0u);
  EXPECT_EQ(a.kernels_by_name.count("after"), 0u);
  // Not clipped: the straddling kernel counts whole.
  EXPECT_DOUBLE_EQ(a.device_us, 11.0);
  EXPECT_EQ(a.records_in_window, 2u);
}

TEST(SummarizeCall, UntimedRecordsAreCountedNotSummed) {
  ActivityRecord untimed = kernel("late", 0, 0, 7);
  const CallActivity a = summarize_call({untimed, kernel("k", 10, 20, 7)}, us(0), us(100), 7);
  EXPECT_EQ(a.untimed_records, 1u);
  EXPECT_EQ(a.kernel_count, 1u);
  EXPECT_DOUBLE_EQ(a.device_us, 10.0);
}

TEST(SummarizeCall, CountsLaunchesByName) {
  const CallActivity a =
      summarize_call({kernel("void relu<float>(float*)", 0, 2, 7),
                      kernel("void relu<float>(float*)", 3, 6, 7), kernel("gemm", 6, 16, 7)},
                     us(0), us(100), 7);
  ASSERT_EQ(a.kernels_by_name.size(), 2u);
  EXPECT_EQ(a.kernels_by_name.at("void relu<float>(float*)").count, 2u);
  EXPECT_DOUBLE_EQ(a.kernels_by_name.at("void relu<float>(float*)").total_us, 5.0);
  EXPECT_EQ(a.kernels_by_name.at("gemm").count, 1u);
  const auto j = a.to_json();
  EXPECT_EQ(j["kernels_by_name"]["gemm"]["count"], 1);
  EXPECT_EQ(j["kernel_count"], 3);
}

TEST(SummarizeCall, CopiesAndSetsByKind) {
  const CallActivity a = summarize_call(
      {work(Kind::memcpy, "HtoD", 0, 1, 7, 100), work(Kind::memcpy, "HtoD", 1, 2, 7, 50),
       work(Kind::memcpy, "DtoH", 2, 3, 7, 10), work(Kind::memset, "memset", 3, 4, 7, 4096)},
      us(0), us(100), 7);
  EXPECT_EQ(a.copy_count, 3u);
  EXPECT_EQ(a.copy_bytes, 160u);
  EXPECT_EQ(a.copies_by_kind.at("HtoD").count, 2u);
  EXPECT_EQ(a.copies_by_kind.at("HtoD").bytes, 150u);
  EXPECT_EQ(a.copies_by_kind.at("DtoH").bytes, 10u);
  EXPECT_EQ(a.set_count, 1u);
  EXPECT_EQ(a.set_bytes, 4096u);
}

TEST(SummarizeCall, WithoutCallerDoneAndNoCallerWorkTheTailIsTheWholeSpan) {
  const CallActivity a = summarize_call({kernel("side", 10, 25, 13)}, us(0), us(100), 7);
  EXPECT_TRUE(a.off_caller_stream_work);
  EXPECT_TRUE(a.unjoined_stream_work);
  EXPECT_DOUBLE_EQ(a.unjoined_tail_us, 15.0);
  EXPECT_TRUE(a.to_json()["caller_done_ns"].is_null());
}

TEST(SummarizeCall, SideStreamEndingFirstLeavesNoTail) {
  const CallActivity a =
      summarize_call({kernel("main", 0, 30, 7), kernel("side", 5, 10, 13)}, us(0), us(100), 7);
  EXPECT_TRUE(a.off_caller_stream_work);
  EXPECT_FALSE(a.unjoined_stream_work);
  EXPECT_EQ(a.unjoined_tail_us, 0.0);
}

// The timing loop runs the call on torch's default stream, which is CUDA's legacy default
// stream: a `<<<grid, block>>>` launch lands on the caller's own stream.
TEST(SummarizeCall, LaunchesOnTheLegacyDefaultStreamAsTheCallerAreNotOffStream) {
  constexpr std::uint32_t legacy = 7;
  const CallActivity a =
      summarize_call({kernel("relu_kernel", 10, 60, legacy), kernel("add_kernel", 60, 70, legacy)},
                     us(0), us(100), legacy, {}, legacy, us(75));
  EXPECT_TRUE(a.legacy_default_stream);
  EXPECT_FALSE(a.off_caller_stream_work);
  EXPECT_FALSE(a.unjoined_stream_work);
  EXPECT_EQ(a.to_json()["caller_done_ns"], us(75));
}

// Fork to a side stream, an event recorded there, the caller's stream waits on it: the event on
// the caller's stream completes after the side stream's work, so it ends before caller_done_ns,
// even when the side stream's kernel is the call's last work.
TEST(SummarizeCall, AJoinedSideStreamIsAFactNotUnjoinedWork) {
  const CallActivity a = summarize_call({kernel("prologue", 10, 20, 7), kernel("side", 20, 80, 13)},
                                        us(0), us(100), 7, {}, 7u, us(84));
  EXPECT_TRUE(a.off_caller_stream_work);
  EXPECT_EQ(a.streams, (std::set<std::uint32_t>{7, 13}));
  EXPECT_FALSE(a.unjoined_stream_work);
  EXPECT_EQ(a.unjoined_tail_us, 0.0);
  // The same records judged without caller_done_ns look unjoined: the 2-tuple window's limit.
  EXPECT_TRUE(
      summarize_call({kernel("prologue", 10, 20, 7), kernel("side", 20, 80, 13)}, us(0), us(100), 7)
          .unjoined_stream_work);
}

// The side stream was never joined: the caller's event completed at 22 µs while the side
// kernel ran to 90 µs.
TEST(SummarizeCall, AnUnjoinedSideStreamIsTimedFromCallerDone) {
  const CallActivity a = summarize_call({kernel("prologue", 10, 20, 7), kernel("side", 20, 90, 13)},
                                        us(0), us(100), 7, {}, 7u, us(22));
  EXPECT_TRUE(a.off_caller_stream_work);
  EXPECT_TRUE(a.unjoined_stream_work);
  EXPECT_DOUBLE_EQ(a.unjoined_tail_us, 68.0); // 90 - 22
  EXPECT_DOUBLE_EQ(a.device_us, 80.0);        // the device time still holds it
  const auto j = a.to_json();
  EXPECT_EQ(j["unjoined_stream_work"], true);
  EXPECT_DOUBLE_EQ(j["unjoined_tail_us"].get<double>(), 68.0);
}

// Nothing on the caller's stream at all (the exploit's shape: forward only enqueues on its own
// stream): every µs after caller_done_ns is missed by event timing.
TEST(SummarizeCall, OnlySideStreamWorkAfterCallerDoneIsUnjoined) {
  const CallActivity a =
      summarize_call({kernel("clamp", 12, 80, 13)}, us(0), us(100), 7, {}, 7u, us(15));
  EXPECT_TRUE(a.unjoined_stream_work);
  EXPECT_DOUBLE_EQ(a.unjoined_tail_us, 65.0);
}

TEST(SummarizeCall, LegacyDefaultStreamNeedsItsId) {
  const std::vector<ActivityRecord> records = {kernel("k", 0, 1, 7), kernel("j", 1, 2, 9)};
  EXPECT_FALSE(summarize_call(records, us(0), us(10), 9).legacy_default_stream);
  const CallActivity a = summarize_call(records, us(0), us(10), 9, {}, 7u);
  EXPECT_TRUE(a.legacy_default_stream);
  EXPECT_EQ(a.to_json()["legacy_default_stream_id"], 7);
  EXPECT_FALSE(summarize_call(records, us(0), us(10), 9, {}, 3u).legacy_default_stream);
}

TEST(SummarizeCall, MemoryTotalsAndPeak) {
  const CallActivity a =
      summarize_call({memory(Kind::memory_alloc, 1, 1000), memory(Kind::memory_alloc, 2, 500),
                      memory(Kind::memory_free, 3, 1000), memory(Kind::memory_alloc, 4, 200),
                      memory(Kind::memory_alloc, 200, 1 << 20)}, // outside the window
                     us(0), us(100), 7);
  EXPECT_EQ(a.allocation_count, 3u);
  EXPECT_EQ(a.free_count, 1u);
  EXPECT_EQ(a.allocated_bytes, 1700u);
  EXPECT_EQ(a.freed_bytes, 1000u);
  EXPECT_EQ(a.peak_net_allocated_bytes, 1500u);
  EXPECT_EQ(a.allocations_by_memory_kind.at("device").count, 3u);
  // Memory records are not device work: no time, no stream.
  EXPECT_EQ(a.device_us, 0.0);
  EXPECT_TRUE(a.streams.empty());
}

TEST(SummarizeCall, OwnKernelShare) {
  const CallActivity a =
      summarize_call({kernel("void relu_kernel<float>(float const*, float*, int)", 0, 30, 7),
                      kernel("void at::native::vectorized_elementwise_kernel<4>(int)", 30, 40, 7),
                      kernel("relu_kernel2(float*)", 40, 50, 7)},
                     us(0), us(100), 7, {"relu_kernel"});
  EXPECT_EQ(a.own_kernel_count, 1u);
  EXPECT_DOUBLE_EQ(a.own_kernel_us, 30.0);
  EXPECT_DOUBLE_EQ(a.own_kernel_share, 0.6);
}

TEST(KernelBaseName, StripsReturnTypeScopeTemplatesAndParameters) {
  EXPECT_EQ(kernel_base_name("void relu_kernel<float>(float const*, float*, int)"), "relu_kernel");
  EXPECT_EQ(kernel_base_name("relu_kernel(float*, int)"), "relu_kernel");
  EXPECT_EQ(kernel_base_name("void ns::inner::relu_kernel<float, 4>(float*)"), "relu_kernel");
  EXPECT_EQ(kernel_base_name("void (anonymous namespace)::fused(float*)"), "fused");
  EXPECT_EQ(kernel_base_name("triton_poi_fused_relu_0"), "triton_poi_fused_relu_0");
  EXPECT_EQ(kernel_base_name("add_kernel"), "add_kernel");
  EXPECT_EQ(kernel_base_name("void at::native::elementwise_kernel<128, 2, "
                             "at::native::gpu_kernel_impl<at::native::Foo<float> >("
                             "at::TensorIteratorBase&, at::native::Foo<float> const&)::"
                             "{lambda(int)#1}>(int, at::native::Bar)"),
            "elementwise_kernel");
  EXPECT_EQ(kernel_base_name(""), "");
}

TEST(IsOwnKernel, MatchesTheWholeIdentifierOnly) {
  const std::vector<std::string> own = {"relu_kernel"};
  EXPECT_TRUE(is_own_kernel("void relu_kernel<float>(float const*, float*, int)", own));
  EXPECT_TRUE(is_own_kernel("relu_kernel(float const*, float*, int)", own));
  EXPECT_TRUE(is_own_kernel("void my::ns::relu_kernel<__half>(__half*)", own));
  EXPECT_TRUE(is_own_kernel("relu_kernel", own)); // extern "C" or Triton: the raw name
  EXPECT_FALSE(is_own_kernel("void relu_kernel2<float>(float*)", own));
  EXPECT_FALSE(is_own_kernel("my_relu_kernel(float*)", own));
  EXPECT_FALSE(is_own_kernel("void at::native::relu_kernel_impl(float*)", own));
  EXPECT_FALSE(is_own_kernel("void f<relu_kernel>(float*)", own)); // only in template args
  EXPECT_TRUE(is_own_kernel("void ns::relu_kernel(float*)", {"ns::relu_kernel"}));
  EXPECT_FALSE(is_own_kernel("relu_kernel", {}));
}

TEST(IsOwnKernel, TritonKernels) {
  const std::vector<std::string> own = {"fused_add_relu", "softmax_kernel"};
  EXPECT_TRUE(is_own_kernel("fused_add_relu", own));
  EXPECT_TRUE(is_own_kernel("softmax_kernel", own));
  EXPECT_FALSE(is_own_kernel("triton_poi_fused_add_relu_0", own));
}

TEST(DemangleSymbol, DemanglesCppAndKeepsRawNames) {
  EXPECT_EQ(demangle_symbol("_Z11relu_kernelPKfPfi"), "relu_kernel(float const*, float*, int)");
  EXPECT_EQ(demangle_symbol("add_kernel"), "add_kernel");
  EXPECT_EQ(demangle_symbol("_Znot_valid_$$"), "_Znot_valid_$$");
  EXPECT_EQ(demangle_symbol(nullptr), "");
}

TEST(ThrottleReasons, DecodesKnownAndUnknownBits) {
  EXPECT_TRUE(decode_throttle_reasons(0).empty());
  EXPECT_EQ(decode_throttle_reasons(0x1 | 0x4 | 0x40),
            (std::vector<std::string>{"gpu_idle", "sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(decode_throttle_reasons(0x1000), (std::vector<std::string>{"unknown_0x1000"}));
}

// A machine with a usable GPU: the driver loads and sees a device. There the loaders may
// succeed, so the "fails cleanly" checks below only bind on machines without one.
bool gpu_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    return false;
  }
  return !sched::probe_devices().gpus.empty();
}

TEST(CuptiTracer, UnsupportedWithoutGpu) {
  CuptiTracer& tracer = CuptiTracer::instance();
  const std::string first = tracer.load();
  EXPECT_EQ(tracer.load(), first); // idempotent
  if (gpu_present()) {
    GTEST_SKIP() << "a GPU is present; CuptiTracer::load() answered: '" << first << "'";
  }
  EXPECT_EQ(first.rfind("unsupported: ", 0), 0u) << first;
  EXPECT_EQ(tracer.start(), first);
  EXPECT_TRUE(tracer.flush().empty());
  EXPECT_EQ(tracer.timestamp_ns(), 0u);
  EXPECT_EQ(tracer.stream_id(0, 0), CuptiTracer::kInvalidStreamId);
  EXPECT_FALSE(tracer.started());
  tracer.stop(); // harmless
}

// The one CUPTI property checkable without a GPU: the library's record sizes match the structs
// compiled in, so parsing reads the fields the headers describe.
TEST(CuptiTracer, LibraryRecordLayoutsMatchTheHeaders) {
  const std::string answer = check_cupti_record_layouts();
  if (answer.rfind("unsupported: libcupti could not be loaded", 0) == 0 ||
      answer.rfind("unsupported: kbench was built without", 0) == 0) {
    GTEST_SKIP() << answer;
  }
  EXPECT_EQ(answer, "");
}

TEST(NvmlClocks, LoadFailsCleanlyWithoutGpu) {
  NvmlClocks clocks;
  const std::string answer = clocks.load("0000:19:00.0");
  if (gpu_present()) {
    GTEST_SKIP() << "a GPU is present; NvmlClocks::load() answered: '" << answer << "'";
  }
  EXPECT_EQ(answer.rfind("unsupported: ", 0), 0u) << answer;
  EXPECT_FALSE(clocks.loaded());
  EXPECT_FALSE(clocks.read().error.empty());
  EXPECT_FALSE(clocks.limits().max_sm_mhz.has_value());
  EXPECT_FALSE(clocks.energy_mj().has_value());
}

TEST(NvmlClocks, UnknownBusIdIsUnsupportedEvenWithGpu) {
  NvmlClocks clocks;
  const std::string answer = clocks.load("not-a-bus-id");
  EXPECT_EQ(answer.rfind("unsupported: ", 0), 0u) << answer;
  EXPECT_FALSE(clocks.loaded());
}

} // namespace
} // namespace kbench::measure
