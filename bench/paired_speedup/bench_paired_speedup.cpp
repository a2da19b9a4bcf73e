// The speedup bootstrap's cost at the sample counts of real evaluations (a 100 µs kernel stops
// near 8000 samples per side; a few-µs kernel reaches 20 000 under the 15 s cap), the engine's
// weighted scan against the sorting baseline, measured in the same run.
// Usage: build/bench_paired_speedup
#include "bench/paired_speedup/sorting_bootstrap.hpp"
#include "bench/seconds.hpp"

#include <fmt/format.h>

#include <random>

namespace {

std::vector<kbench::measure::PairedBlock> blocks_of(int blocks, int per_block) {
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(100, 1);
  std::vector<kbench::measure::PairedBlock> out(static_cast<std::size_t>(blocks));
  for (auto& block : out) {
    for (int i = 0; i < per_block; ++i) {
      block.reference_us.push_back(noise(rng));
      block.candidate_us.push_back(noise(rng) * 0.5);
    }
  }
  return out;
}

} // namespace

int main() {
  fmt::print("| blocks x samples per side | sorting baseline | engine | ratio | same interval |\n"
             "| --- | --- | --- | --- | --- |\n");
  for (const auto& [blocks, per_block] : {std::pair{16, 500}, {400, 20}, {1000, 20}}) {
    const auto data = blocks_of(blocks, per_block);
    std::optional<kbench::measure::SpeedupEstimate> baseline, engine;
    const double t_baseline =
        kbench::bench::seconds([&] { baseline = kbench::bench::sorting_bootstrap(data); });
    const double t_engine =
        kbench::bench::seconds([&] { engine = kbench::measure::paired_speedup(data); });
    const bool same = baseline->speedup == engine->speedup && baseline->low == engine->low &&
                      baseline->high == engine->high;
    fmt::print("| {} x {} | {:.3f} s | {:.3f} s | {:.1f}x faster | {} |\n", blocks, per_block,
               t_baseline, t_engine, t_baseline / t_engine, same ? "yes" : "NO");
  }
}
