// bench/web: the dashboard over a large store (issue 19: the leaderboard answers in at most
// 200 ms, a run page in at most 100 ms). Seeds a store with 100,000 evaluations and 1,000 agent
// runs (tests/support/seeded_store.hpp, plus a 50-turn run), then times drawing the pages as
// `kbench serve` does, each against a baseline measured in the same run:
//   - the leaderboard against computing its inputs the naive way, decoding every run's final
//     result document (what the indexed columns of the store spare it);
//   - a run page, and the 50-turn one, against answering the same run's raw JSON document.
// `--keep DIR` leaves the store in DIR (with seeded.json) for bench/web/page_load.py, which
// measures the 50-turn page fully loaded in headless Chromium.
// Usage: build/bench_web [--evaluations 100000] [--runs 1000] [--rounds 20] [--keep DIR]
#include "bench/seconds.hpp"
#include "seeded_store.hpp"
#include "store/agent_runs.hpp"
#include "web/site.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {
namespace fs = std::filesystem;
using kbench::web::Links;
using kbench::web::Query;

template <typename F>
double median_ms(int rounds, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < rounds; ++i) {
    times.push_back(kbench::bench::seconds([&] { f(i); }) * 1000);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  int evaluations = 100000, runs = 1000, rounds = 20;
  std::string keep;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--keep") {
      keep = argv[i + 1];
      continue;
    }
    (flag == "--evaluations" ? evaluations
     : flag == "--runs"      ? runs
                             : rounds) = std::stoi(argv[i + 1]);
  }
  const fs::path dir =
      keep.empty() ? fs::temp_directory_path() / ("kbench-bench-web-" + std::to_string(getpid()))
                   : fs::path(keep);
  fs::remove_all(dir);
  fs::create_directories(dir);
  kbench::testing::Seeded seeded;
  const double seed_s = kbench::bench::seconds([&] {
    kbench::store::Store store(dir / "results.sqlite");
    seeded = kbench::testing::seed_store(store, dir / "problems", 50, evaluations, runs);
  });
  kbench::store::Store store(dir / "results.sqlite", false);
  const kbench::web::SiteOptions options{dir / "cache"};
  const Links served;
  auto draw = [&](const std::string& path, const Query& query = {}) {
    const auto answer = kbench::web::render(store, options, path, query, served);
    if (answer.status != 200) {
      fmt::print(stderr, "bench/web: {} answered {}\n", path, answer.status);
      std::exit(2);
    }
    return answer.body.size();
  };
  const std::string run = seeded.run_ids.front();
  std::size_t board_bytes = 0, run_bytes = 0, long_bytes = 0;
  const double board = median_ms(rounds, [&](int) { board_bytes = draw("/leaderboard"); });
  const double run_page = median_ms(rounds, [&](int) { run_bytes = draw("/runs/" + run); });
  const double long_page =
      median_ms(rounds, [&](int) { long_bytes = draw("/runs/" + seeded.long_run); });
  const double runs_list = median_ms(rounds, [&](int) { draw("/runs", {{"sort", "speedup"}}); });
  const double evaluations_list = median_ms(rounds, [&](int) {
    draw("/evaluations", {{"where", "status=ok,speedup>=1.5"}});
  });

  // Baselines, in the same run.
  kbench::store::AgentRuns agent_runs(store);
  const double naive_board = median_ms(std::max(3, rounds / 4), [&](int) {
    kbench::store::RunFilter all;
    all.limit = 0;
    double sum = 0;
    for (const auto& row : agent_runs.listing(all)) {
      if (const auto final = store.find_evaluation(row.run.final_evaluation_id)) {
        if (const auto decoded = kbench::result_from_json(final->document); decoded.value) {
          sum += decoded.value->timing.speedup.value_or(0);
        }
      }
    }
    if (sum < 0) {
      std::abort();
    }
  });
  const double raw_run = median_ms(rounds, [&](int) { draw("/raw/runs/" + run + ".json"); });
  const double raw_long =
      median_ms(rounds, [&](int) { draw("/raw/runs/" + seeded.long_run + ".json"); });

  fmt::print(
      "bench/web: {} evaluations and {} agent runs seeded in {:.1f} s ({:.0f} MiB of store)\n",
      store.count_evaluations({}), agent_runs.count({}), seed_s,
      static_cast<double>(fs::file_size(dir / "results.sqlite")) / (1 << 20));
  fmt::print("| page | drawn (median of {}) | baseline | baseline (median) | ratio | target |\n",
             rounds);
  fmt::print("|---|---|---|---|---|---|\n");
  fmt::print("| /leaderboard ({} KiB) | {:.1f} ms | every final document decoded | {:.1f} ms | "
             "{:.2f}x | <= 200 ms |\n",
             board_bytes / 1024, board, naive_board, board / naive_board);
  fmt::print("| /runs/ID, 3 turns ({} KiB) | {:.2f} ms | its raw JSON | {:.2f} ms | {:.2f}x | <= "
             "100 ms |\n",
             run_bytes / 1024, run_page, raw_run, run_page / raw_run);
  fmt::print("| /runs/ID, 50 turns ({} KiB) | {:.2f} ms | its raw JSON | {:.2f} ms | {:.2f}x | <= "
             "100 ms |\n",
             long_bytes / 1024, long_page, raw_long, long_page / raw_long);
  fmt::print("| /runs sorted by speedup, page 1 | {:.2f} ms | - | - | - | - |\n", runs_list);
  fmt::print("| /evaluations?where=status=ok,speedup>=1.5 | {:.2f} ms | - | - | - | - |\n",
             evaluations_list);
  if (keep.empty()) {
    fs::remove_all(dir);
  } else {
    std::ofstream(dir / "seeded.json")
        << nlohmann::json{{"long_run", seeded.long_run}, {"run", run}}.dump() << "\n";
    fmt::print("kept the store in {} (seeded.json names the runs) for bench/web/page_load.py\n",
               dir.string());
  }
  return board <= 200 && run_page <= 100 && long_page <= 100 ? 0 : 1;
}
