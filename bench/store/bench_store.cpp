// bench/store: the results store at 10,000 evaluations (issue: fetching one at most 10 ms, a
// filtered listing at most 100 ms, on the development machine). Seeds a fresh store with
// realistic result documents (six trials, timing with flags, phases), then times fetching one
// evaluation by id and a filtered, sorted listing, against the baseline of what kbench had
// before the store: the same documents in a JSON Lines file, scanned for the same answers.
// Usage: build/bench_store [--evaluations 10000] [--rounds 50]
#include "store/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using kbench::EvalResult;

EvalResult synthetic(std::mt19937_64& random, int index) {
  EvalResult r;
  const int pick = static_cast<int>(random() % 10);
  r.status = pick < 6   ? kbench::Status::ok
             : pick < 8 ? kbench::Status::incorrect
                        : kbench::Status::compile_error;
  r.message = r.status == kbench::Status::ok ? "" : "output 0 differs from the reference's";
  r.problem_path =
      fmt::format("/data/KernelBench/level{}/{}_problem.py", 1 + index % 3, index % 100);
  r.problem_sha256 = fmt::format("{:064x}", index % 100);
  r.candidate_path = fmt::format("/runs/candidate_{}.py", index);
  r.candidate_sha256 = fmt::format("{:064x}", 1000000 + index);
  r.device = "cuda:0";
  r.device_name = "NVIDIA H200";
  r.variant = "standard";
  r.torch_version = "2.11.0+cu130";
  const int second = index % 60, minute = (index / 60) % 60, hour = (index / 3600) % 24;
  r.started_at = fmt::format("2026-12-01T{:02d}:{:02d}:{:02d}Z", hour, minute, second);
  for (int t = 0; t < 6; ++t) {
    kbench::TrialResult trial;
    trial.index = t;
    trial.seed = 42u + static_cast<std::uint32_t>(t);
    trial.passed = r.status == kbench::Status::ok;
    r.trials.push_back(trial);
  }
  if (r.status == kbench::Status::ok) {
    auto& timing = r.timing;
    timing.measured = true;
    const double speedup = std::exp(std::normal_distribution<double>(0.0, 0.6)(random));
    timing.speedup = speedup;
    timing.speedup_ci = kbench::Interval{speedup * 0.99, speedup * 1.01};
    kbench::TimingSide side;
    side.method = "cupti";
    side.stats_us = {1000, 50.0, 50.2, 0.4, 49.1, 52.0, 49.6, 50.8, 0.008};
    timing.reference = side;
    side.stats_us.median = 50.0 / speedup;
    timing.candidate = side;
    if (random() % 4 == 0) {
      timing.flags.push_back({"launch_bound", "host 221 us against 62 us of device time"});
    }
  }
  r.wall_s = 5.0 + static_cast<double>(random() % 1000) / 100.0;
  return r;
}

template <typename F>
double median_ms(int rounds, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    f(i);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  int evaluations = 10000, rounds = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    (flag == "--evaluations" ? evaluations : rounds) = std::stoi(argv[i + 1]);
  }
  const fs::path dir =
      fs::temp_directory_path() / ("kbench-bench-store-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937_64 random(7);
  std::vector<std::string> ids;
  std::vector<std::string> documents;
  const auto seed_start = Clock::now();
  {
    kbench::store::Store store(dir / "results.sqlite");
    std::ofstream jsonl(dir / "results.jsonl");
    for (int i = 0; i < evaluations; ++i) {
      const EvalResult r = synthetic(random, i);
      ids.push_back(store.add_evaluation(r, fmt::format("key-{}", i), "suite"));
      jsonl << kbench::to_json(r).dump() << "\n";
    }
  }
  const double seed_s = std::chrono::duration<double>(Clock::now() - seed_start).count();
  kbench::store::Store store(dir / "results.sqlite", false);
  const auto filter =
      kbench::store::parse_filter({"status=ok", "speedup>=1.5", "device_name=NVIDIA H200"});

  const double fetch = median_ms(rounds, [&](int i) {
    const auto found = store.find_evaluation(ids[static_cast<std::size_t>(i * 7919) % ids.size()]);
    if (!found) {
      std::abort();
    }
  });
  std::size_t listed = 0;
  const double listing =
      median_ms(rounds, [&](int) { listed = store.list_evaluations(filter, 50).size(); });
  const double counting = median_ms(rounds, [&](int) { store.count_evaluations(filter); });

  // Baseline: the documents as a JSON Lines file, parsed and scanned for the same answers.
  const int baseline_rounds = std::max(3, rounds / 10);
  const double scan_fetch = median_ms(baseline_rounds, [&](int i) {
    const std::string wanted = fmt::format("/runs/candidate_{}.py", (i * 7919) % evaluations);
    std::ifstream in(dir / "results.jsonl");
    for (std::string line; std::getline(in, line);) {
      if (nlohmann::json::parse(line)["candidate"]["path"] == wanted) {
        break;
      }
    }
  });
  const double scan_listing = median_ms(baseline_rounds, [&](int) {
    std::ifstream in(dir / "results.jsonl");
    std::vector<std::pair<std::string, double>> kept;
    for (std::string line; std::getline(in, line);) {
      const auto document = nlohmann::json::parse(line);
      const auto& speedup = document["timing"]["speedup"];
      if (document["status"] == "ok" && speedup.is_number() && speedup.get<double>() >= 1.5) {
        kept.emplace_back(document["started_at"], speedup.get<double>());
      }
    }
    std::sort(kept.begin(), kept.end(), std::greater<>());
  });
  fmt::print("bench/store: {} evaluations seeded in {:.1f} s ({:.0f} KiB of store)\n", evaluations,
             seed_s, static_cast<double>(fs::file_size(dir / "results.sqlite")) / 1024);
  fmt::print("| query | store (median of {}) | JSON Lines scan (median of {}) | ratio | target |\n",
             rounds, baseline_rounds);
  fmt::print("|---|---|---|---|---|\n");
  fmt::print("| fetch one evaluation by id | {:.3f} ms | {:.1f} ms | {:.0f}x | <= 10 ms |\n", fetch,
             scan_fetch, scan_fetch / fetch);
  fmt::print("| status=ok, speedup>=1.5, device_name: newest 50 ({} rows) | {:.2f} ms | {:.1f} ms "
             "| {:.0f}x | <= 100 ms |\n",
             listed, listing, scan_listing, scan_listing / listing);
  fmt::print("| the same, counted | {:.2f} ms | - | - | - |\n", counting);
  fs::remove_all(dir);
  return fetch <= 10 && listing <= 100 ? 0 : 1;
}
