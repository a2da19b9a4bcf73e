#include "core/seeding.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <set>

namespace kbench {
namespace {

TEST(Mix64, MatchesSplitmix64ReferenceOutput) {
  // The first outputs of the reference splitmix64 generator seeded with 0 (Vigna's C code):
  // output k is mix64(k * gamma), since mix64 adds the gamma itself.
  EXPECT_EQ(mix64(0), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(mix64(0x9E3779B97F4A7C15ULL), 0x6E789E6AA1B965F4ULL);
}

TEST(DeriveSeed, IsDeterministic) {
  EXPECT_EQ(derive_seed(42, "trial", 0), derive_seed(42, "trial", 0));
  EXPECT_EQ(derive_seed(7, "timing", 3), derive_seed(7, "timing", 3));
}

TEST(DeriveSeed, DiffersAcrossStreamsIndicesAndBases) {
  EXPECT_NE(derive_seed(42, "trial", 0), derive_seed(42, "timing", 0));
  EXPECT_NE(derive_seed(42, "trial", 0), derive_seed(42, "heldout", 0));
  EXPECT_NE(derive_seed(42, "trial", 0), derive_seed(42, "trial", 1));
  EXPECT_NE(derive_seed(42, "trial", 0), derive_seed(43, "trial", 0));

  std::set<std::uint32_t> seen;
  for (const char* stream : {"trial", "timing", "heldout"}) {
    for (std::uint64_t i = 0; i < 1000; ++i) {
      seen.insert(derive_seed(1234, stream, i));
    }
  }
  EXPECT_EQ(seen.size(), 3000u); // 3000 draws from 2^31: a collision would be a red flag
}

TEST(ForwardSeed, IsPopcornBenchsTrialSeedPlusOneModTwoToThe32) {
  EXPECT_EQ(forward_seed(41), 42U);
  EXPECT_EQ(forward_seed(0), 1U);
  EXPECT_EQ(forward_seed(0xFFFFFFFFULL), 0U);         // (2^32 - 1 + 1) % 2^32
  EXPECT_EQ(forward_seed(0x1234567800000005ULL), 6U); // a timed call's 64-bit seed
  EXPECT_EQ(forward_seed(~0ULL), 0U);
}

TEST(DeriveSeed, FitsIn31Bits) {
  for (std::uint64_t base : {0ULL, 1ULL, 42ULL, ~0ULL}) {
    for (std::uint64_t i = 0; i < 2000; ++i) {
      EXPECT_LE(derive_seed(base, "trial", i), 0x7FFFFFFFu);
    }
  }
}

TEST(JitterRng, SameSeedSameSequence) {
  JitterRng a(99), b(99), c(100);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs = differs || x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(JitterRng, IsStandardSplitmix64) {
  JitterRng rng(0);
  EXPECT_EQ(rng.next_u64(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(rng.next_u64(), 0x6E789E6AA1B965F4ULL);
}

TEST(JitterRng, UniformIntStaysInRangeAndHitsEveryValue) {
  JitterRng rng(5);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t v = rng.uniform_int(-3, 4);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(JitterRng, UniformIntDegenerateRange) {
  JitterRng rng(1);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(rng.uniform_int(17, 17), 17);
  }
}

TEST(JitterRng, UniformIntExtremeRanges) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  JitterRng rng(3);
  bool negative = false, positive = false;
  for (int i = 0; i < 200; ++i) {
    const std::int64_t v = rng.uniform_int(kMin, kMax);
    negative = negative || v < 0;
    positive = positive || v > 0;
    const std::int64_t w = rng.uniform_int(kMax - 2, kMax);
    EXPECT_GE(w, kMax - 2);
    const std::int64_t x = rng.uniform_int(kMin, kMin + 1);
    EXPECT_LE(x, kMin + 1);
    const std::int64_t y = rng.uniform_int(-1, kMax); // range wider than INT64_MAX
    EXPECT_GE(y, -1);
  }
  EXPECT_TRUE(negative);
  EXPECT_TRUE(positive);
}

TEST(JitterRng, Uniform01InUnitInterval) {
  JitterRng rng(11);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(JitterBounds, TypicalCase) {
  const JitterBounds b = jitter_bounds(18, 0.15, 1);
  EXPECT_EQ(b.lo, 15);
  EXPECT_EQ(b.hi, 20);
}

TEST(JitterBounds, SmallN) {
  const JitterBounds b = jitter_bounds(1, 0.15, 1);
  EXPECT_EQ(b.lo, 1);
  EXPECT_EQ(b.hi, 1);
}

TEST(JitterBounds, MinimumClamp) {
  const JitterBounds b = jitter_bounds(4, 0.5, 3);
  EXPECT_EQ(b.lo, 3); // floor(2.0) raised to the minimum
  EXPECT_EQ(b.hi, 6);

  const JitterBounds c = jitter_bounds(2, 0.2, 8);
  EXPECT_EQ(c.lo, 8);
  EXPECT_EQ(c.hi, 8);
}

TEST(JitterBounds, ZeroRelIsExact) {
  const JitterBounds b = jitter_bounds(1024, 0.0, 1);
  EXPECT_EQ(b.lo, 1024);
  EXPECT_EQ(b.hi, 1024);
}

} // namespace
} // namespace kbench
