// bench/queue: what the Redis work queue adds per job over the local path (issue 20: at most
// 50 ms). Both sides do the same bookkeeping around an evaluation that costs nothing, so what is
// measured is the queue alone:
//   - baseline, the local path: the job's key (sources read and hashed) and its result document
//     serialised and read back, as `kbench suite` does around each evaluation;
//   - the queue: the producer's job_of + XADD, a worker's claim (XAUTOCLAIM, XREADGROUP), its
//     sources written (run_of), the result posted and acknowledged, the producer reading it
//     back, over a real Redis on loopback.
// Needs a running redis-server: `redis-server --port 6399 --save '' --appendonly no &`.
// Usage: build/bench_queue [--queue redis://127.0.0.1:6399/bench] [--jobs 500]
#include "bench/seconds.hpp"
#include "core/result.hpp"
#include "queue/jobs.hpp"
#include "queue/work_queue.hpp"
#include "sched/suite_keys.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::string url = "redis://127.0.0.1:6399/bench";
  int jobs = 500;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--queue") {
      url = argv[i + 1];
    } else {
      jobs = std::stoi(argv[i + 1]);
    }
  }
  const fs::path dir =
      fs::temp_directory_path() / ("kbench-bench-queue-" + std::to_string(getpid()));
  fs::create_directories(dir / "sources");
  std::vector<kbench::EvalOptions> runs;
  for (int i = 0; i < jobs; ++i) {
    kbench::EvalOptions run;
    run.problem = dir / "problem.py";
    run.candidate = dir / ("candidate_" + std::to_string(i) + ".py");
    run.device = "cpu";
    std::ofstream(run.problem) << "import torch\nclass Model(torch.nn.Module):\n    pass\n";
    std::ofstream(run.candidate) << "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n# "
                                 << i << "\n";
    runs.push_back(run);
  }
  kbench::EvalResult result;
  result.status = kbench::Status::ok;
  result.device_name = "cpu";
  const std::string document = kbench::to_json(result).dump();

  const double local_s = kbench::bench::seconds([&] {
    for (const auto& run : runs) {
      const auto key = kbench::sched::evaluation_key(run);
      auto decoded = kbench::result_from_json(nlohmann::json::parse(document));
      if (!key || !decoded.value) {
        std::abort();
      }
    }
  });

  kbench::queue::WorkQueue queue(kbench::queue::parse_queue_url(url), 10);
  queue.ensure_group();
  std::string after = queue.results_tail();
  kbench::EvalOptions worker;
  worker.device = "cpu";
  const double queue_s = kbench::bench::seconds([&] {
    for (const auto& run : runs) {
      const auto job = kbench::queue::job_of(run);
      queue.enqueue(job.id, job.body);
    }
    for (int i = 0; i < jobs; ++i) {
      const auto claimed = queue.claim("bench", 60, 1000);
      if (!claimed) {
        std::abort();
      }
      kbench::queue::run_of(claimed->job, worker, dir / "sources");
      queue.post_result(claimed->job_id, "bench", nlohmann::json::parse(document));
      queue.ack(claimed->entry_id);
    }
    int answered = 0;
    while (answered < jobs) {
      for (const auto& entry : queue.read_results(after, 1000)) {
        answered += kbench::result_from_json(entry.result).value.has_value();
      }
    }
  });
  const double local_ms = local_s * 1000 / jobs, queue_ms = queue_s * 1000 / jobs;
  fmt::print("bench/queue: {} jobs over {}\n", jobs, url);
  fmt::print("| path | per job | \n|---|---|\n");
  fmt::print("| local bookkeeping (baseline) | {:.3f} ms |\n", local_ms);
  fmt::print("| the queue, producer to worker and back | {:.3f} ms |\n", queue_ms);
  fmt::print("added by the queue: {:.3f} ms per job ({:.1f}x the baseline); target <= 50 ms\n",
             queue_ms - local_ms, queue_ms / local_ms);
  fs::remove_all(dir);
  return queue_ms - local_ms <= 50 ? 0 : 1;
}
