#pragma once
// The leaderboard's figures (docs/dashboard.md), from one row per agent run's final
// evaluation, as KernelBench defines them (src/kernelbench/score.py): fast_p is the share of
// the problems attempted whose first sample is correct and faster than p x the reference;
// geometric means over the correct kernels and over all (a failure counts as 1x, and the board
// says so), each with a bootstrap 95 % interval over problems; the median speedup; pass@k with
// the unbiased estimator where there are several samples; and what a correct kernel cost
// (turns, tokens, GPU-seconds, wall time, medians). Runs whose timing was ruled invalid, that
// were rejected or that look hacked are left out and counted apart. Pure: the page and the tests
// feed it rows.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kbench::web {

struct BoardRun {
  std::string model, tier, problem; // problem: its sha256 (the same problem across paths)
  int level = 0;                    // 0: unknown
  int sample = 0;
  std::string status;               // the final evaluation's; "" when there is none
  std::optional<double> speedup;    // over eager, when measured and scored
  bool excluded = false;            // ruled invalid, rejected, or hacked (see below)
  std::string excluded_why;
  double turns = 0, tokens = 0, gpu_s = 0, wall_s = 0;
};

// Why a run is left out of the figures, or "" when it counts: a final status of
// impossible_timing or static_rejected, a speedup that is not a score (a trivial answer), a
// held-out re-check that failed.
std::string exclusion_reason(const std::string& status, bool speedup_scored,
                             const std::string& held_out_status);

struct Interval95 {
  double low = 0, high = 0;
};

struct BoardRow {
  std::string model, tier;
  int level = 0;
  int problems = 0, runs = 0, excluded = 0;
  double correct_share = 0;                // of problems: sample 0 correct
  std::map<double, double> fast_p;         // p -> share of problems
  std::optional<double> geomean_correct;   // over correct first samples
  std::optional<Interval95> geomean_correct_ci;
  std::optional<double> geomean_all;       // failures as 1x
  std::optional<Interval95> geomean_all_ci;
  std::optional<double> median_speedup;    // correct first samples
  std::optional<double> pass_at_1, pass_at_k;
  int k = 1;                               // the samples per problem pass@k counts
  std::optional<double> median_turns, median_tokens, median_gpu_s, median_wall_s; // correct ones
};

const std::vector<double>& fast_p_thresholds(); // 0, 0.5, 0.8, 1, 1.5, 2

// One row per (model, tier, level), sorted by model, tier, level.
std::vector<BoardRow> leaderboard(const std::vector<BoardRun>& runs);

// 1 - C(n-c, k) / C(n, k): the chance that at least one of k samples drawn from n (c correct)
// is correct.
double pass_at_k(int n, int c, int k);

// The bootstrap 95 % interval of the geometric mean of `values` (> 0), 2000 resamples with a
// fixed seed, so a page shows the same interval each time.
Interval95 geomean_interval(const std::vector<double>& values);

} // namespace kbench::web
