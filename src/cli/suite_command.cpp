// kbench suite MANIFEST: evaluates the (problem, candidate) pairs a manifest lists and prints
// one table. `make run` uses it on examples/quick.json, `make run-all` on examples/examples.json.
// The manifest's format and how its entries become evaluations: sched/suite_plan.hpp; which
// entries are the same evaluation, and which results a --resume reuses: sched/suite_keys.hpp;
// the order builds and evaluations run in: sched/suite_pipeline.hpp.
#include "cli/commands.hpp"
#include "cli/eval_flags.hpp"
#include "cli/store_flags.hpp"
#include "core/json_io.hpp"
#include "pipeline/result_key.hpp"
#include "pipeline/suite_prebuild.hpp"
#include "pipeline/suite_runner.hpp"
#include "report/suite_progress.hpp"
#include "report/suite_table.hpp"
#include "sched/device_probe.hpp"
#include "sched/jsonl_log.hpp"
#include "sched/suite_keys.hpp"
#include "sched/suite_plan.hpp"
#ifdef KBENCH_HAVE_QUEUE
#include "queue/remote_evaluation.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <unistd.h>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

// --build-only: the builds a suite would run ahead, reported one line each; exit 1 when one
// failed, so a script that warms the cache sees it.
int build_all(const std::vector<EvalOptions>& builds, int jobs) {
  std::cerr << fmt::format("kbench suite: building {} candidate(s), {} at a time\n", builds.size(),
                           jobs);
  const auto results = prebuild(builds, jobs);
  int failed = 0;
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const bool built = results[i].status == Status::ok;
    failed += built ? 0 : 1;
    std::cout << fmt::format("{} {} ({:.1f} s{})\n", built ? "built " : "FAILED",
                             builds[i].candidate.string(), results[i].wall_s,
                             built ? "" : ": " + results[i].message);
  }
  std::cout << fmt::format("{} built, {} failed\n", builds.size() - failed, failed);
  return failed == 0 ? 0 : 1;
}

// The GPUs with a measurement lane: the one --gpu names, else every usable one.
std::vector<int> lane_gpus(bool gpu_given, int gpu, int gpu_count) {
  if (gpu_given) {
    return {gpu};
  }
  std::vector<int> gpus;
  for (int g = 0; g < gpu_count; ++g) {
    gpus.push_back(g);
  }
  return gpus;
}

// Progress while the lanes run: on a terminal one line, rewritten in place; elsewhere (a log,
// a pipe) a line when an evaluation starts and one when it ends.
class ProgressPrinter {
public:
  ProgressPrinter(std::vector<report::SuiteRow>& rows, std::size_t total)
      : m_rows(rows), m_terminal(::isatty(STDERR_FILENO) == 1),
        m_started(std::chrono::steady_clock::now()) {
    m_progress.total = total;
    redraw();
  }

  void started(std::size_t row) {
    if (!m_terminal) {
      const auto& r = m_rows[row];
      std::cerr << fmt::format("kbench suite: [#{}] {} x {} on {}\n", row + 1, r.problem,
                               r.candidate, r.device);
    }
  }

  void finished(std::size_t row) {
    const auto& r = m_rows[row];
    ++m_progress.done;
    m_progress.failed += r.result->status == Status::ok ? 0 : 1;
    m_progress.unexpected += r.met_expectation() ? 0 : 1;
    const std::string outcome =
        fmt::format("{} ({:.1f} s){}", status_name(r.result->status), r.result->wall_s,
                    r.met_expectation() ? "" : ", expected " + r.expect);
    if (m_terminal) {
      if (!r.met_expectation()) { // kept above the progress line
        std::cerr << fmt::format("\r\033[Kkbench suite: [#{}] {} x {} on {}: {}\n", row + 1,
                                 r.problem, r.candidate, r.device, outcome);
      }
      redraw();
    } else {
      std::cerr << fmt::format("kbench suite: [#{}]   -> {}  ({})\n", row + 1, outcome,
                               report::format_progress(now()));
    }
  }

  ~ProgressPrinter() {
    if (m_terminal) {
      std::cerr << "\n";
    }
  }

private:
  report::SuiteProgress now() {
    m_progress.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
    return m_progress;
  }
  void redraw() {
    if (m_terminal) {
      std::cerr << "\r\033[Kkbench suite: " << report::format_progress(now()) << std::flush;
    }
  }

  std::vector<report::SuiteRow>& m_rows;
  bool m_terminal;
  std::chrono::steady_clock::time_point m_started;
  report::SuiteProgress m_progress;
};

} // namespace

Command register_suite_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("suite", "evaluate every pair a manifest lists; print a table");
  auto options = std::make_shared<EvalOptions>();
  auto manifest = std::make_shared<std::string>();
  auto jsonl = std::make_shared<std::string>();
  command->add_option("manifest", *manifest, "suite manifest (JSON)")->required();
  add_shared_eval_options(*command, *options);
  command->add_option("--jsonl", *jsonl, "write every result document, one per line");
  auto resume = std::make_shared<bool>(false);
  command->add_flag("--resume", *resume,
                    "reuse the results --jsonl already holds for the same problem, candidate and "
                    "options, evaluate the rest and append them");
  auto only_device = std::make_shared<std::string>();
  command->add_option("--only-device", *only_device,
                      "evaluate only the entries that run on this device (cpu or cuda)");
  auto jobs = std::make_shared<int>(std::max(1u, std::thread::hardware_concurrency() / 2));
  command->add_option("--jobs", *jobs, "candidates built in parallel, ahead of the evaluations")
      ->capture_default_str();
  auto per_gpu = std::make_shared<int>(4);
  command
      ->add_option("--evaluations-per-gpu", *per_gpu,
                   "CUDA evaluations run at once on each GPU: their trials overlap, their "
                   "measurements take the GPU in turn (1: one at a time)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  auto store_flags = std::make_shared<StoreFlags>();
  add_store_flags(*command, *store_flags);
  auto build_only = std::make_shared<bool>(false);
  command->add_flag("--build-only", *build_only,
                    "build every candidate into the compile cache, --jobs at a time, and evaluate "
                    "none (warms the cache before a timed run)");

  auto queue = std::make_shared<std::string>();
  command->add_option(
      "--queue", *queue,
      "enqueue the evaluations on a Redis work queue (redis://HOST[:PORT][/STREAM]) "
      "for `kbench worker`s, and collect their results (docs/distributed.md)");

  const auto run = [command, options, manifest, jsonl, resume, jobs, only_device, build_only,
                    per_gpu, store_flags, queue]() -> int {
#ifndef KBENCH_HAVE_QUEUE
    if (!queue->empty()) {
      std::cerr << "kbench suite: --queue: this kbench was built without hiredis; install it "
                   "(Debian/Ubuntu: libhiredis-dev) and build again (scripts/setup.sh)\n";
      return 2;
    }
#endif
    if (const auto problems = validate(*options); !problems.empty()) {
      for (const auto& problem : problems) {
        std::cerr << "kbench suite: " << problem << "\n";
      }
      return 64;
    }
    if (*resume && jsonl->empty()) {
      std::cerr << "kbench suite: --resume reads the results of an earlier run from --jsonl; "
                   "name the file with --jsonl FILE\n";
      return 64;
    }
    std::vector<sched::ManifestEntry> entries;
    try {
      entries = sched::read_manifest(*manifest);
    } catch (const std::exception& error) {
      std::cerr << "kbench suite: " << error.what() << "\n";
      return 64;
    }
    // With --queue the workers' GPUs evaluate the CUDA entries, not this machine's.
    const int gpu_count = queue->empty()
                              ? static_cast<int>(sched::probe_devices().gpus.size())
                              : std::max(1, static_cast<int>(sched::probe_devices().gpus.size()));
    const auto planned = sched::plan_suite(entries, *options, fs::path(*manifest).parent_path(),
                                           *only_device, gpu_count);
    std::vector<report::SuiteRow> rows;
    std::vector<EvalOptions> all_runs;
    std::vector<std::optional<sched::EvalKey>> keys;
    for (const auto& plan : planned) {
      rows.push_back({plan.entry.problem, plan.entry.candidate, plan.device, std::nullopt,
                      plan.skipped_reason, plan.entry.expect, ""});
      keys.push_back(plan.run ? sched::evaluation_key(*plan.run) : std::nullopt);
      if (plan.run) {
        all_runs.push_back(*plan.run);
      }
    }
    if (*build_only) {
      return build_all(sched::distinct_builds(all_runs), *jobs);
    }

    sched::ResumeLog log;
    if (*resume) {
      try {
        log = sched::read_resume_log(*jsonl);
      } catch (const std::exception& error) {
        std::cerr << "kbench suite: " << error.what() << "\n";
        return 64;
      }
      for (const auto& warning : log.warnings) {
        std::cerr << "kbench suite: warning: " << warning << "\n";
      }
    }
    const auto duplicates = sched::find_duplicates(keys);
    std::vector<EvalOptions> runs; // what this run evaluates, in manifest order
    std::vector<std::size_t> row_of_run;
    std::size_t reused = 0, duplicated = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!planned[i].run) {
        continue;
      }
      if (duplicates[i]) {
        rows[i].note = fmt::format("duplicate of #{}", *duplicates[i] + 1);
        ++duplicated;
      } else if (const EvalResult* found =
                     keys[i] ? sched::find_reusable(log, *keys[i]) : nullptr) {
        rows[i].result = *found;
        rows[i].note = "reused from " + fs::path(*jsonl).filename().string();
        ++reused;
      } else {
        runs.push_back(*planned[i].run);
        row_of_run.push_back(i);
      }
    }
    if (*resume) {
      const auto other = std::count_if(log.records.begin(), log.records.end(), [&](const auto& r) {
        return std::none_of(keys.begin(), keys.end(), [&](const auto& k) { return k == r.first; });
      });
      if (other > 0) {
        std::cerr << fmt::format(
            "kbench suite: warning: {} result(s) in {} are for other entries or other options "
            "(device, precision, trials, timing flags, kbench version); kept in the file, not "
            "reused\n",
            other, *jsonl);
      }
      std::cerr << fmt::format("kbench suite: {} result(s) reused from {}, {} to evaluate\n",
                               reused, *jsonl, runs.size());
    }
    if (duplicated > 0) {
      std::cerr << fmt::format("kbench suite: {} entr{} repeat an earlier one (same problem, "
                               "candidate and options) and take its result\n",
                               duplicated, duplicated == 1 ? "y" : "ies");
    }

    std::ofstream lines;
    if (!jsonl->empty()) {
      if (const auto why =
              sched::open_jsonl_for_append(lines, *jsonl, *resume, log.complete_bytes)) {
        std::cerr << "kbench suite: cannot write " << *jsonl
                  << (why->empty() ? std::string() : ": " + *why) << "\n";
        return 64;
      }
    }
    bool store_failed = false;
    const auto results = open_result_store(*store_flags, "suite", store_failed);
    if (store_failed) {
      return 2;
    }
    std::optional<std::int64_t> suite_id;
    if (results) {
      suite_id = results->begin_suite(fs::absolute(*manifest).string(), to_json(*options));
    }
    {
      ProgressPrinter progress(rows, runs.size());
      const bool gpu_given = command->get_option("--gpu")->count() > 0;
      const auto started = [&](std::size_t r) { progress.started(row_of_run[r]); };
      const auto finished = [&](std::size_t r, const EvalResult& result) {
        const std::size_t i = row_of_run[r];
        rows[i].result = result;
        if (lines.is_open() && keys[i]) {
          // flushed: a killed suite keeps its rows, and --resume picks up from them
          lines << sched::suite_line(result, *keys[i]).dump() << std::endl;
        } else if (lines.is_open()) {
          lines << to_json(result).dump() << std::endl;
        }
        if (results) {
          try {
            // A worker's result is keyed by the device and torch it ran on, not this machine's.
            const auto key = queue->empty() || !keys[i]
                                 ? store_key(runs[r])
                                 : std::optional(sched::content_key(*keys[i], result.device_name,
                                                                    result.torch_version));
            results->add_evaluation(result, key.value_or(""), "suite", suite_id);
          } catch (const std::exception& error) {
            std::cerr << "kbench suite: a result was not stored: " << error.what() << "\n";
          }
        }
        progress.finished(i);
      };
      if (queue->empty()) {
        evaluate_pipelined(runs, *jobs, lane_gpus(gpu_given, options->gpu, gpu_count), *per_gpu,
                           started, finished);
      } else {
#ifdef KBENCH_HAVE_QUEUE
        try {
          queue::evaluate_remotely(queue::parse_queue_url(*queue), runs, started, finished,
                                   std::cerr);
        } catch (const std::exception& error) {
          std::cerr << "kbench suite: --queue: " << error.what() << "\n";
          return 2;
        }
#endif
      }
    }
    if (results) {
      results->finish_suite(*suite_id);
      std::cerr << fmt::format("kbench suite: results stored in {} (suite {}; kbench export "
                               "--where suite={})\n",
                               results->path().string(), *suite_id, *suite_id);
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (duplicates[i]) {
        rows[i].result = rows[*duplicates[i]].result;
      }
    }
    std::cout << report::format_suite_table(rows);
    const auto missed = std::count_if(
        rows.begin(), rows.end(), [](const report::SuiteRow& r) { return !r.met_expectation(); });
    const auto skipped = std::count_if(
        rows.begin(), rows.end(), [](const report::SuiteRow& r) { return !r.result.has_value(); });
    std::cout << fmt::format("{} evaluated, {} skipped, {} not as expected\n",
                             rows.size() - static_cast<std::size_t>(skipped), skipped, missed);
    return missed == 0 ? 0 : 1;
  };
  return {command, run};
}

} // namespace kbench::cli
