#include "queue/remote_evaluation.hpp"

#include "queue/jobs.hpp"
#include "queue/work_queue.hpp"

#include <fmt/format.h>

#include <chrono>
#include <map>

namespace kbench::queue {

void evaluate_remotely(const QueueAddress& address, const std::vector<EvalOptions>& runs,
                       const std::function<void(std::size_t)>& queued,
                       const std::function<void(std::size_t, const EvalResult&)>& finished,
                       std::ostream& log) {
  WorkQueue queue(address);
  queue.ensure_group();
  // Only results posted from now on: an earlier suite's are not this one's answers.
  std::string after = queue.results_tail();
  std::map<std::string, std::vector<std::size_t>> waiting; // job id -> runs
  std::map<std::string, Job> jobs;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    try {
      Job job = job_of(runs[r]);
      waiting[job.id].push_back(r);
      jobs.emplace(job.id, std::move(job));
    } catch (const std::exception& error) {
      EvalResult failed;
      failed.status = Status::harness_error;
      failed.message = error.what();
      failed.problem_path = runs[r].problem.string();
      failed.candidate_path = runs[r].candidate.string();
      finished(r, failed);
    }
  }
  for (const auto& [id, job] : jobs) {
    queue.enqueue(id, job.body);
    for (std::size_t r : waiting[id]) {
      queued(r);
    }
  }
  log << fmt::format("kbench suite: {} job(s) on {}; waiting for results\n", jobs.size(),
                     address.text());
  auto last_progress = std::chrono::steady_clock::now();
  while (!waiting.empty()) {
    const auto entries = queue.read_results(after, 5000);
    for (const auto& entry : entries) {
      const auto found = waiting.find(entry.job_id);
      if (found == waiting.end()) {
        continue; // another suite's, or this job's second answer
      }
      auto decoded = result_from_json(entry.result);
      EvalResult result = decoded.value ? std::move(*decoded.value) : EvalResult{};
      if (!decoded.value) {
        result.status = Status::harness_error;
        result.message =
            "worker " + entry.worker + " posted a result that does not read back: " + decoded.error;
      }
      for (std::size_t r : found->second) {
        finished(r, result);
      }
      waiting.erase(found);
      last_progress = std::chrono::steady_clock::now();
    }
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(30)) {
      const auto status = queue.status();
      log << fmt::format("kbench suite: {} job(s) still out; {} worker(s) heartbeating, {} "
                         "pending, {} waiting, {} dead letter(s){}\n",
                         waiting.size(), status.workers.size(), status.pending, status.waiting,
                         status.dead,
                         status.workers.empty()
                             ? fmt::format(" (start one: kbench worker --queue {})", address.text())
                             : "");
      last_progress = std::chrono::steady_clock::now();
    }
  }
}

} // namespace kbench::queue
