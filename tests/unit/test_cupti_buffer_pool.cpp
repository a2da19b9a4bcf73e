// Unit tests for src/measure/cupti_buffer_pool.cpp: the owner of the buffers handed to CUPTI.
#include "measure/cupti_buffer_pool.hpp"

#include <gtest/gtest.h>

#include <type_traits>

namespace kbench::measure {
namespace {

static_assert(!std::is_copy_constructible_v<CuptiBufferPool>, "one owner per buffer");
static_assert(!std::is_copy_assignable_v<CuptiBufferPool>, "one owner per buffer");
static_assert(std::is_nothrow_move_constructible_v<CuptiBufferPool>);

TEST(CuptiBufferPool, HandsOutAlignedBuffersOfTheSizeItWasGiven) {
  CuptiBufferPool pool(4096, 64, 2);
  std::uint8_t* buffer = pool.take();
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 64, 0u);
  EXPECT_EQ(pool.buffer_bytes(), 4096u);
  buffer[0] = 1;
  buffer[4095] = 2; // the whole size is ours
  pool.give_back(buffer);
}

TEST(CuptiBufferPool, AReturnedBufferIsHandedOutAgainBeforeANewOne) {
  CuptiBufferPool pool(1024, 8, 2);
  std::uint8_t* first = pool.take();
  pool.give_back(first);
  EXPECT_EQ(pool.spare_buffers(), 1u);
  EXPECT_EQ(pool.take(), first);
  EXPECT_EQ(pool.spare_buffers(), 0u);
  pool.give_back(first);
}

TEST(CuptiBufferPool, KeepsNoMoreSparesThanItWasToldAndFreesTheRest) {
  CuptiBufferPool pool(1024, 8, 2);
  std::uint8_t* buffers[] = {pool.take(), pool.take(), pool.take()};
  for (std::uint8_t* buffer : buffers) {
    pool.give_back(buffer);
  }
  EXPECT_EQ(pool.spare_buffers(), 2u);
}

TEST(CuptiBufferPool, GivingBackNothingKeepsNothing) {
  CuptiBufferPool pool(1024, 8, 2);
  pool.give_back(nullptr);
  EXPECT_EQ(pool.spare_buffers(), 0u);
}

TEST(CuptiBufferPool, AMovedPoolTakesItsSparesAlong) {
  CuptiBufferPool pool(1024, 8, 2);
  std::uint8_t* buffer = pool.take();
  pool.give_back(buffer);
  CuptiBufferPool moved(std::move(pool));
  EXPECT_EQ(moved.spare_buffers(), 1u);
  EXPECT_EQ(moved.take(), buffer);
  moved.give_back(buffer);
}

} // namespace
} // namespace kbench::measure
