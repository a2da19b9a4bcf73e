// Passes over tensors of several blocks (compare/element_blocks.hpp), each on several threads
// where the machine has the cores: the answers must be those of one pass in element order,
// wherever in which block the element that decides them lies.
#include "checks/problem_findings.hpp"
#include "compare/element_blocks.hpp"
#include "compare/safetensors.hpp"
#include "compare/tolerance.hpp"
#include "compare/trivial_answers.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace kbench::compare {
namespace {

// 3.5 blocks: a partial block at the end.
const std::size_t kNumel = kElementBlock * 7 / 2;

Tensor filled(float value, std::size_t numel = kNumel) {
  Tensor t;
  t.dtype = DType::F32;
  t.shape = {static_cast<std::int64_t>(numel)};
  t.data.resize(numel * sizeof(float));
  auto* values = reinterpret_cast<float*>(t.data.data());
  std::fill(values, values + numel, value);
  return t;
}

void set(Tensor& t, std::size_t i, float value) {
  std::memcpy(t.data.data() + i * sizeof(float), &value, sizeof(float));
}

// Where the deciding element goes: the first block, a middle one, the last (partial) one.
const std::size_t kPlaces[] = {5, kElementBlock * 2 + 17, kNumel - 1};

TEST(ElementBlocks, ResultsComeBackInBlockOrderAndStopLeavesLaterBlocksOut) {
  const auto all = over_element_blocks<std::size_t>(
      kNumel, [](std::size_t first, std::size_t count) { return first + count; });
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(*all.back(), kNumel);
  for (std::size_t b = 0; b + 1 < all.size(); ++b) {
    EXPECT_EQ(*all[b], (b + 1) * kElementBlock);
  }
  const auto stopped = over_element_blocks<std::size_t>(
      kNumel * 4, [](std::size_t first, std::size_t) { return first; },
      [](std::size_t first) { return first == 0; });
  // Blocks already running when block 0 stopped the pass finish; none after them start.
  EXPECT_LT(std::count_if(stopped.begin(), stopped.end(), [](const auto& r) { return r; }), 14);
  EXPECT_TRUE(stopped.front().has_value());
}

TEST(ElementBlocks, AnExceptionInABlockReachesTheCaller) {
  EXPECT_THROW(over_element_blocks<int>(kNumel,
                                        [](std::size_t first, std::size_t) -> int {
                                          if (first == kElementBlock * 2) {
                                            throw std::runtime_error("block 2");
                                          }
                                          return 0;
                                        }),
               std::runtime_error);
}

TEST(ElementBlocks, CountsAndVerdictsMatchOnePassInOrder) {
  const Tolerance exact{};
  for (const std::size_t place : kPlaces) {
    Tensor t = filled(0.0f);
    set(t, place, 1.0f);
    EXPECT_EQ(count_matching(t, 0, exact), kNumel - 1) << place;
    EXPECT_FALSE(all_matching(t, 0, exact)) << place;
    EXPECT_FALSE(all_within_tolerance(t, filled(0.0f), exact)) << place;
    EXPECT_FALSE(checks::near_constant(t, exact)) << place;
  }
  EXPECT_TRUE(all_matching(filled(2.0f), 2, exact));
  EXPECT_TRUE(all_within_tolerance(filled(2.0f), filled(2.0f), exact));
  EXPECT_TRUE(checks::near_constant(filled(2.0f), exact));
}

TEST(ElementBlocks, TrivialAnswersAreFoundOrRuledOutWhateverBlockDecides) {
  const ToleranceOverride tolerance{};
  auto search = [&](const Tensor& t) {
    return find_trivial_answers(
        2,
        [&](std::size_t) {
          TensorFile file;
          file.tensors.emplace("output.0", t);
          return file;
        },
        tolerance);
  };
  const auto constant = search(filled(3.0f));
  ASSERT_EQ(constant.size(), 1u);
  EXPECT_EQ(constant[0].kind, TrivialKind::constant);
  EXPECT_EQ(constant[0].value, 3.0);
  for (const std::size_t place : kPlaces) {
    Tensor t = filled(3.0f);
    set(t, place, 30.0f);
    EXPECT_TRUE(search(t).empty()) << place;
  }
}

TEST(ElementBlocks, ALargeFileIsReadBackBitForBit) {
  Tensor t = filled(0.0f);
  for (std::size_t i = 0; i < kNumel; ++i) {
    set(t, i, static_cast<float>(i % 9973) * 0.5f - 7.0f);
  }
  const auto path = std::filesystem::path(::testing::TempDir()) / "element_blocks.safetensors";
  TensorFile file;
  file.tensors.emplace("output.0", t);
  write_safetensors(path, file);
  const TensorFile back = read_safetensors(path);
  EXPECT_TRUE(back.tensors.at("output.0").data == t.data);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  EXPECT_THROW(read_safetensors(path), TensorFileError);
  std::filesystem::remove(path);
}

} // namespace
} // namespace kbench::compare
