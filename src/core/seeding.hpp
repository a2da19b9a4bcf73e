#pragma once
// Deterministic seeds and the jitter RNG. One implementation, in C++, shared by the orchestrator
// (which derives trial seeds) and the worker (which exposes the jitter RNG to problems as
// popcorn_pri), so that a seed means the same shapes everywhere and can be unit tested.
#include <cstdint>
#include <string_view>

namespace kbench {

// splitmix64 finaliser: a bijective 64-bit mix.
std::uint64_t mix64(std::uint64_t x);

// Seed number `index` of the named stream ("trial", "timing", "heldout", ...) derived from the
// user's --seed. Different streams never share seeds in practice; the result fits in 31 bits
// so every RNG (torch, numpy, random) accepts it unchanged.
std::uint32_t derive_seed(std::uint64_t base_seed, std::string_view stream, std::uint64_t index);

// The seed torch's generators get again immediately before every forward call, the reference's
// and the candidate's alike, so that a problem whose forward samples noise (MCMC steps,
// dropout-like masks) draws the same numbers on both sides. PopcornBench's rule (its
// src/kernelbench/eval.py, correctness loop): (trial_seed + 1) mod 2^32. A timed call applies it
// to the call's secret input seed.
std::uint32_t forward_seed(std::uint64_t trial_seed);
// The rule as the result document records it (`config.forward_seed`).
inline constexpr std::string_view kForwardSeedPolicy =
    "popcorn: (trial_seed+1) mod 2^32 before each forward (torch CPU and CUDA, random, numpy); "
    "timed calls: (call_seed+1) mod 2^32";

// A small counter-based generator (splitmix64 over seed + counter). Not for cryptography.
class JitterRng {
public:
  explicit JitterRng(std::uint64_t seed);
  std::uint64_t next_u64();
  // Uniform integer in [lo, hi] (inclusive) without modulo bias. Requires lo <= hi.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
  // Uniform double in [0, 1).
  double uniform01();

private:
  std::uint64_t m_state;
};

// The bounds of jitter_int(n, rel): [floor(n*(1-rel)), floor(n*(1+rel))], both at least
// `floor_min`.
struct JitterBounds {
  std::int64_t lo;
  std::int64_t hi;
};
JitterBounds jitter_bounds(std::int64_t n, double rel, std::int64_t floor_min);

} // namespace kbench
