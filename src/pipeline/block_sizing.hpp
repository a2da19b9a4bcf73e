#pragma once
// How many calls the next paired timing block holds (docs/architecture.md, "Blocks"): every
// side times that many, on the same seeds.

namespace kbench {

// A block should hold about this much measured time: short enough that drift hits R and C
// alike, long enough that the round trip to the worker is small beside it.
constexpr double kBlockTargetUs = 20000;
// ... and take no more than about this much wall time. A timed call costs the harness about
// 1 ms whatever the kernel (fresh inputs, the L2 flush, the seed round trip, the output
// sampling), so a 2.5 µs kernel's 500-call block took 0.5 s a side and the kMinBlocksForInterval
// (5) paired blocks the speedup's interval needs took ~4 s, its median at the timer's resolution
// long before. 0.1 s still holds ~100 such calls, which leaves the round trip per block small
// beside it, and fits those 5 blocks of every side in about a second.
constexpr double kBlockWallTargetS = 0.1;
constexpr int kMinBlockCalls = 10, kMaxBlockCalls = 500;

// Calls for the next block from the slower side's median device time per call and the larger
// wall time per timed call of the two sides' last blocks (0: not known, no wall bound); always
// within [kMinBlockCalls, kMaxBlockCalls].
int next_block_calls(double slowest_median_device_us, double slowest_wall_per_call_s);

} // namespace kbench
