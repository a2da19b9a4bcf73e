#pragma once
// The verdicts paired timing passes on what it measured: which blocks count as throttled, the
// flags a reader of the timing must see, and the decoy-kernel integrity failure. They are pure
// functions of the finished TimingInfo plus what the loop counted on the way
// (TimingObservations), so that tests/unit/test_timing_flags.cpp can check each one without a
// worker; pipeline/paired_timing.cpp runs the loop and calls them.
#include "core/result.hpp"
#include "measure/paired_speedup.hpp"
#include "measure/speed_change.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

// A block whose SM clock fell under this share of the default clock is dropped (throttling).
inline constexpr double kThrottleShare = 0.75;

// What the paired loop counted about the candidate's timed calls and the blocks, and the setup
// facts the flags weigh them against.
struct TimingObservations {
  // Counted only for the candidate's calls traced by CUPTI.
  std::size_t no_work_calls = 0; // no kernel, copy or set
  // Calls that left GPU work running on another stream after the caller's stream was done
  // (not joined back before forward returned), and the longest such tail.
  std::size_t off_stream_calls = 0;
  double off_stream_tail_us = 0;
  std::vector<std::string> own_kernels;     // the kernels the candidate declares as its own
  std::vector<measure::PairedBlock> blocks; // eager reference against candidate, block by block
  // From the setup.
  bool cuda = false;
  std::int64_t input_bytes = 0; // per input set
  std::optional<double> peak_bandwidth_bytes_per_s;
};

// Whether a block whose lowest SM clock reading was `block_low_sm_mhz` (0: none) ran throttled.
bool throttled_block(double block_low_sm_mhz, std::optional<double> default_sm_mhz);

// What NVML saw around the blocks of every side, for a sentence about a change of speed.
std::string clock_facts(const TimingInfo& timing);

// The integrity failure of a candidate whose own kernels never ran in timed calls; empty if none.
std::string decoy_kernels(const TimingInfo& timing, const TimingObservations& seen);

// Why the measurement is impossible (docs/architecture.md, "Impossible measurements"): a timed
// call on a CUDA device that caused no GPU work, or a median below the roofline floor (reading
// the inputs once at the GPU's peak bandwidth; not in warm mode, and not when the reference
// itself is faster than the floor). Empty when neither holds.
std::string impossible_measurement(const TimingInfo& timing, const TimingObservations& seen,
                                   bool warm);

// The sentence of unstable_timing: how far the changed blocks moved, the clocks, and whether
// the speedup survived the change (it agrees with the median per-block ratio) or not.
std::string unstable_timing_message(const TimingInfo& timing, const measure::SpeedChange& change);

// Appends to timing.flags what a reader must know about the finished timing (its sides, the
// speedup and the stats filled in).
void add_flags(TimingInfo& timing, const TimingObservations& seen);

} // namespace kbench
