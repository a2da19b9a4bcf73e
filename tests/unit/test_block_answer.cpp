// Tests for src/pipeline/block_answer.cpp: one time_block answer read into typed fields.
#include "pipeline/block_answer.hpp"

#include <gtest/gtest.h>

using namespace kbench;

namespace {

nlohmann::json first_block() {
  return nlohmann::json::parse(R"({
    "ok": true, "method": "cupti",
    "setup": {"tracing": "cupti", "tracing_overhead_us": 1.2, "default_sm_mhz": 1980,
              "l2_flush_bytes": 100663296, "own_kernels": ["relu_kernel"],
              "input_generation": "device", "input_bytes": 4096, "output_bytes": 2048},
    "memory": {"allocator_peak_bytes": 4096, "raw_allocated_bytes": 0},
    "device_us": [10.5, -1, 11.0], "host_us": [20.0, 21.0, -1],
    "calls": [{"kernel_count": 1, "kernel_us": 10.0, "own_kernel_us": 10.0,
               "kernels_by_name": {"relu_kernel": 1}},
              {"kernel_count": 9}, {"kernel_count": 3}],
    "sm_mhz": [1980, "?", 1965], "mem_mhz": [3201], "clock_reasons": ["sw_power_cap"],
    "input_fingerprint": [12.5, null]
  })");
}

} // namespace

TEST(BlockAnswer, TheFirstBlockCarriesTheSetupAndTheMemory) {
  const BlockAnswer answer = parse_block(first_block());
  ASSERT_TRUE(answer.setup);
  EXPECT_EQ(answer.setup->tracing, "cupti");
  EXPECT_DOUBLE_EQ(*answer.setup->tracing_overhead_us, 1.2);
  EXPECT_DOUBLE_EQ(*answer.setup->default_sm_mhz, 1980);
  EXPECT_TRUE(answer.setup->l2_flush);
  EXPECT_EQ(answer.setup->own_kernels, std::vector<std::string>{"relu_kernel"});
  EXPECT_EQ(answer.peak_memory_bytes, 4096);
  EXPECT_EQ(answer.raw_allocated_bytes, 0);
  EXPECT_EQ(answer.method, "cupti");
}

TEST(BlockAnswer, ACallWithAFailedReadingOnEitherClockIsCountedButNotKept) {
  const BlockAnswer answer = parse_block(first_block());
  EXPECT_EQ(answer.timed_calls, 3U);
  ASSERT_EQ(answer.calls.size(), 1U);
  EXPECT_DOUBLE_EQ(answer.calls[0].device_us, 10.5);
  EXPECT_DOUBLE_EQ(answer.calls[0].host_us, 20.0);
  ASSERT_TRUE(answer.calls[0].facts);
  EXPECT_EQ(answer.calls[0].facts->kernels_by_name.at("relu_kernel"), 1);
  EXPECT_DOUBLE_EQ(answer.calls[0].facts->own_kernel_us, 10.0);
}

TEST(BlockAnswer, ClockReadingsThatAreNotNumbersAreLeftOut) {
  const BlockAnswer answer = parse_block(first_block());
  EXPECT_EQ(answer.sm_mhz, (std::vector<double>{1980, 1965}));
  EXPECT_EQ(answer.mem_mhz, std::vector<double>{3201});
  EXPECT_EQ(answer.clock_reasons, std::vector<std::string>{"sw_power_cap"});
}

TEST(BlockAnswer, LaterBlocksOnTheCpuTimeTheHostClockAlone) {
  const BlockAnswer answer =
      parse_block(nlohmann::json::parse(R"({"ok": true, "host_us": [5.0, 6.0]})"));
  EXPECT_FALSE(answer.setup);
  EXPECT_FALSE(answer.peak_memory_bytes);
  EXPECT_FALSE(answer.compile_s);
  ASSERT_EQ(answer.calls.size(), 2U);
  EXPECT_DOUBLE_EQ(answer.calls[1].device_us, 6.0);
  EXPECT_DOUBLE_EQ(answer.calls[1].host_us, 6.0);
  EXPECT_FALSE(answer.calls[1].facts);
}

TEST(BlockAnswer, TheSetupSaysHowInputsAreDrawnAndHowLargeACallIs) {
  const BlockAnswer answer = parse_block(first_block());
  ASSERT_TRUE(answer.setup);
  EXPECT_EQ(answer.setup->input_generation, "device");
  EXPECT_EQ(answer.setup->input_bytes, 4096);
  EXPECT_EQ(answer.setup->output_bytes, 2048);
  EXPECT_EQ(answer.input_fingerprint, nlohmann::json::parse("[12.5, null]"));
}

TEST(BlockAnswer, AFieldOfTheWrongTypeThrows) {
  nlohmann::json answer = first_block();
  answer["memory"]["allocator_peak_bytes"] = "lots";
  EXPECT_THROW(parse_block(answer), nlohmann::json::exception);
}
