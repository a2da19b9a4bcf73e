#include "core/seeding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kbench {

namespace {

constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// The mixing half of splitmix64, without the gamma step, so that the generator and mix64 share
// one definition of the constants.
std::uint64_t splitmix_finalise(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// 64-bit FNV-1a: stable across platforms and compilers, unlike std::hash.
std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001B3ULL;
  }
  return hash;
}

// floor(x) as int64, saturating, so absurd inputs cannot hit undefined float->int conversion.
std::int64_t floor_to_int64(double x) {
  constexpr double kMax = 9223372036854775807.0; // rounds to 2^63
  if (std::isnan(x)) {
    return 0;
  }
  const double f = std::floor(x);
  if (f >= kMax) {
    return std::numeric_limits<std::int64_t>::max();
  }
  if (f <= -kMax) {
    return std::numeric_limits<std::int64_t>::min();
  }
  return static_cast<std::int64_t>(f);
}

} // namespace

std::uint64_t mix64(std::uint64_t x) {
  return splitmix_finalise(x + kGoldenGamma);
}

std::uint32_t derive_seed(std::uint64_t base_seed, std::string_view stream, std::uint64_t index) {
  // Chaining through mix64 (rather than xor-ing the three inputs) keeps (seed, stream, index)
  // triples that differ in one component from colliding by cancellation.
  std::uint64_t h = mix64(base_seed);
  h = mix64(h ^ fnv1a64(stream));
  h = mix64(h ^ index);
  return static_cast<std::uint32_t>(h & 0x7FFFFFFFULL);
}

std::uint32_t forward_seed(std::uint64_t trial_seed) {
  return static_cast<std::uint32_t>((trial_seed + 1) & 0xFFFFFFFFULL); // wraps as Python's % 2**32
}

JitterRng::JitterRng(std::uint64_t seed) : m_state(seed) {}

std::uint64_t JitterRng::next_u64() {
  m_state += kGoldenGamma;
  return splitmix_finalise(m_state);
}

std::int64_t JitterRng::uniform_int(std::int64_t lo, std::int64_t hi) {
  // Work in unsigned arithmetic: hi - lo can exceed INT64_MAX, and unsigned wrap-around is
  // defined where signed overflow is not.
  const std::uint64_t range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (range == std::numeric_limits<std::uint64_t>::max()) {
    return static_cast<std::int64_t>(next_u64()); // the full int64 range: every value is fair
  }
  const std::uint64_t span = range + 1;
  // Values below `threshold` (= 2^64 mod span) are rejected so that the accepted ones are an
  // exact multiple of span and `r % span` is unbiased.
  const std::uint64_t threshold = (0 - span) % span;
  std::uint64_t r = next_u64();
  while (r < threshold) {
    r = next_u64();
  }
  // Conversion of an out-of-range unsigned to signed is modular since C++20.
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + r % span);
}

double JitterRng::uniform01() {
  // The top 53 bits fill a double's mantissa exactly; the result is never 1.0.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

JitterBounds jitter_bounds(std::int64_t n, double rel, std::int64_t floor_min) {
  const double nd = static_cast<double>(n);
  std::int64_t lo = floor_to_int64(nd * (1.0 - rel));
  std::int64_t hi = floor_to_int64(nd * (1.0 + rel));
  lo = std::max(lo, floor_min);
  hi = std::max(hi, floor_min);
  hi = std::max(hi, lo); // a negative rel would otherwise invert the interval
  return {lo, hi};
}

} // namespace kbench
