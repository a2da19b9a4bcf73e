#include "web/leaderboard.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

namespace kbench::web {
namespace {

double geomean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) {
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) {
    return std::nullopt;
  }
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

bool correct(const BoardRun& run) {
  return run.status == "ok";
}

} // namespace

std::string exclusion_reason(const std::string& status, bool speedup_scored,
                             const std::string& held_out_status) {
  if (status == "impossible_timing") {
    return "timing ruled invalid";
  }
  if (status == "static_rejected") {
    return "rejected";
  }
  if (status == "ok" && !speedup_scored) {
    return "a trivial answer passes: speedup not a score";
  }
  if (status == "ok" && !held_out_status.empty() && held_out_status != "ok") {
    return "failed the held-out re-check";
  }
  return "";
}

const std::vector<double>& fast_p_thresholds() {
  static const std::vector<double> thresholds = {0, 0.5, 0.8, 1, 1.5, 2};
  return thresholds;
}

double pass_at_k(int n, int c, int k) {
  if (n - c < k) {
    return 1.0;
  }
  double none = 1.0; // C(n-c, k) / C(n, k) as a product
  for (int i = n - c + 1; i <= n; ++i) {
    none *= 1.0 - static_cast<double>(k) / i;
  }
  return 1.0 - none;
}

Interval95 geomean_interval(const std::vector<double>& values) {
  std::mt19937_64 random(20261202);
  std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
  std::vector<double> means;
  std::vector<double> resample(values.size());
  for (int i = 0; i < 2000; ++i) {
    for (auto& v : resample) {
      v = values[pick(random)];
    }
    means.push_back(geomean(resample));
  }
  std::sort(means.begin(), means.end());
  return {means[static_cast<std::size_t>(0.025 * means.size())],
          means[static_cast<std::size_t>(0.975 * means.size()) - 1]};
}

std::vector<BoardRow> leaderboard(const std::vector<BoardRun>& runs) {
  using Key = std::tuple<std::string, std::string, int>;
  std::map<Key, std::vector<const BoardRun*>> groups;
  for (const auto& run : runs) {
    groups[{run.model, run.tier, run.level}].push_back(&run);
  }
  std::vector<BoardRow> rows;
  for (const auto& [key, members] : groups) {
    BoardRow row;
    std::tie(row.model, row.tier, row.level) = key;
    // Per problem: its samples, the excluded ones set aside.
    std::map<std::string, std::vector<const BoardRun*>> by_problem;
    for (const BoardRun* run : members) {
      ++row.runs;
      if (run->excluded) {
        ++row.excluded;
      } else {
        by_problem[run->problem].push_back(run);
      }
    }
    row.problems = static_cast<int>(by_problem.size());
    if (row.problems == 0) {
      rows.push_back(row);
      continue;
    }
    std::vector<double> correct_speedups, all_speedups, turns, tokens, gpu_s, wall_s;
    std::map<double, int> fast;
    int first_correct = 0, smallest_n = 1 << 30;
    std::vector<std::pair<int, int>> samples_correct; // (n, c) per problem
    for (auto& [problem, samples] : by_problem) {
      std::sort(samples.begin(), samples.end(),
                [](const BoardRun* a, const BoardRun* b) { return a->sample < b->sample; });
      smallest_n = std::min(smallest_n, static_cast<int>(samples.size()));
      const BoardRun& first = *samples.front();
      const bool ok = correct(first) && first.speedup && *first.speedup > 0;
      first_correct += correct(first) ? 1 : 0;
      for (double p : fast_p_thresholds()) {
        fast[p] += ok && *first.speedup > p ? 1 : 0;
      }
      if (ok) {
        correct_speedups.push_back(*first.speedup);
      }
      all_speedups.push_back(ok ? *first.speedup : 1.0);
      int c = 0;
      for (const BoardRun* s : samples) {
        if (correct(*s)) {
          ++c;
          turns.push_back(s->turns);
          tokens.push_back(s->tokens);
          gpu_s.push_back(s->gpu_s);
          wall_s.push_back(s->wall_s);
        }
      }
      samples_correct.emplace_back(static_cast<int>(samples.size()), c);
    }
    const double problems = row.problems;
    row.correct_share = first_correct / problems;
    for (const auto& [p, count] : fast) {
      row.fast_p[p] = count / problems;
    }
    if (!correct_speedups.empty()) {
      row.geomean_correct = geomean(correct_speedups);
      row.geomean_correct_ci = geomean_interval(correct_speedups);
      row.median_speedup = median(correct_speedups);
    }
    row.geomean_all = geomean(all_speedups);
    row.geomean_all_ci = geomean_interval(all_speedups);
    // pass@k with one k for every problem: the fewest samples any problem has.
    double pass1 = 0, passk = 0;
    for (const auto& [n, c] : samples_correct) {
      pass1 += pass_at_k(n, c, 1);
      passk += pass_at_k(n, c, smallest_n);
    }
    row.pass_at_1 = pass1 / problems;
    row.k = smallest_n;
    if (smallest_n > 1) {
      row.pass_at_k = passk / problems;
    }
    row.median_turns = median(turns);
    row.median_tokens = median(tokens);
    row.median_gpu_s = median(gpu_s);
    row.median_wall_s = median(wall_s);
    rows.push_back(row);
  }
  return rows;
}

} // namespace kbench::web
