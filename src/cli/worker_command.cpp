// `kbench worker --queue redis://HOST:PORT[/STREAM]`: a long-lived worker on the Redis work
// queue (queue/queue_worker.hpp, docs/distributed.md); and `kbench queue status URL`: the
// queue's depth, pending work per consumer, dead letters, workers and rate.
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "pipeline/result_key.hpp"
#include "queue/queue_worker.hpp"
#include "queue/work_queue.hpp"
#include "sched/suite_keys.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace kbench::cli {
namespace {

std::atomic<bool> g_stop = false;

extern "C" void on_stop_signal(int) {
  g_stop = true;
}

struct WorkerFlags {
  std::string queue, name, device = "auto", python;
  int gpu = 0, max_attempts = 3;
  double claim_idle_s = 60;
  bool drain = false;
  std::filesystem::path cache_dir;
  StoreFlags store;
};

std::string default_name() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return fmt::format("{}-{}", host, ::getpid());
}

std::string age(double seconds) {
  return seconds < 120 ? fmt::format("{:.0f} s", seconds) : fmt::format("{:.0f} min", seconds / 60);
}

int print_status(const std::string& url) {
  queue::WorkQueue queue(queue::parse_queue_url(url), 10);
  const auto s = queue.status();
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::cout << fmt::format("queue {}\n", queue.address().text());
  std::cout << fmt::format(
      "  jobs      {} in the stream, {} waiting for a worker, {} in hand (pending)\n", s.jobs,
      s.waiting, s.pending);
  std::cout << fmt::format("  results   {} ({:.1f} a minute over the last 5 minutes)\n", s.results,
                           s.results_per_minute);
  std::cout << fmt::format("  dead      {} dead letter(s)\n", s.dead);
  for (const auto& dead : s.dead_letters) {
    std::cout << fmt::format("    {} job {} after {} attempt(s): {}\n", dead.value("entry", ""),
                             dead.value("id", "").substr(0, 12), dead.value("attempts", ""),
                             dead.value("error", ""));
  }
  std::cout << fmt::format("  consumers {}\n", s.consumers.size());
  for (const auto& c : s.consumers) {
    std::cout << fmt::format("    {:<32} {} pending, last read {} ago\n", c.name, c.pending,
                             age(static_cast<double>(c.idle_ms) / 1000));
  }
  std::cout << fmt::format("  workers   {} heartbeating\n", s.workers.size());
  for (const auto& [name, beat] : s.workers) {
    std::cout << fmt::format("    {:<32} {} ({} done, {} {}), last beat {} ago\n", name,
                             beat.value("state", "?"), beat.value("done", 0),
                             beat.value("device", "?"), beat.value("torch_version", ""),
                             age(now - beat.value("at_unix_s", now)));
  }
  return 0;
}

} // namespace

Command register_worker_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "worker", "evaluate jobs from a Redis work queue until stopped (docs/distributed.md)");
  auto flags = std::make_shared<WorkerFlags>();
  command->add_option("--queue", flags->queue, "redis://HOST[:PORT][/STREAM]")->required();
  command->add_option("--device", flags->device, "cuda, cpu or auto (jobs that say auto get it)")
      ->check(CLI::IsMember({"cuda", "cpu", "auto"}))
      ->capture_default_str();
  command->add_option("--gpu", flags->gpu, "the GPU this worker evaluates on")
      ->capture_default_str();
  command->add_option("--name", flags->name, "the consumer's name (default: HOST-PID)");
  command
      ->add_option("--max-attempts", flags->max_attempts,
                   "deliveries of one job before it goes to the dead-letter stream")
      ->capture_default_str();
  command
      ->add_option("--claim-idle-s", flags->claim_idle_s,
                   "take back a job pending this long on a worker that stopped")
      ->capture_default_str();
  command->add_flag("--drain", flags->drain, "exit once the queue has had no job for 10 s");
  command->add_option("--python", flags->python, "interpreter of the torch environment");
  command->add_option("--cache-dir", flags->cache_dir, "kbench's cache (default: ~/.cache/kbench)");
  add_store_flags(*command, flags->store);

  const auto run = [flags]() -> int {
    try {
      queue::WorkerSettings settings;
      settings.address = queue::parse_queue_url(flags->queue);
      settings.name = flags->name.empty() ? default_name() : flags->name;
      settings.defaults.device = flags->device;
      settings.defaults.gpu = flags->gpu;
      settings.defaults.python = flags->python;
      settings.defaults.cache_dir = flags->cache_dir;
      settings.max_attempts = std::max(1, flags->max_attempts);
      settings.claim_idle_s = std::max(0.1, flags->claim_idle_s);
      settings.drain = flags->drain;
      bool failed = false;
      const auto results = open_result_store(flags->store, "worker", failed);
      if (failed) {
        return 2;
      }
      std::mutex store_mutex;
      if (results) {
        settings.on_result = [&](const std::string&, const EvalResult& result) {
          std::lock_guard lock(store_mutex);
          try {
            results->add_evaluation(result, "", "worker");
          } catch (const std::exception& error) {
            std::cerr << "kbench worker: a result was not stored locally: " << error.what() << "\n";
          }
        };
      }
      std::signal(SIGTERM, on_stop_signal);
      std::signal(SIGINT, on_stop_signal);
      const int code = queue::run_worker(settings, g_stop);
      if (g_stop) {
        std::cerr << "kbench worker: stopped; the job in hand was finished\n";
      }
      return code;
    } catch (const std::invalid_argument& error) {
      std::cerr << "kbench worker: " << error.what() << "\n";
      return 64;
    } catch (const std::exception& error) {
      std::cerr << "kbench worker: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

Command register_queue_command(CLI::App& app) {
  auto* command = app.add_subcommand("queue", "inspect a Redis work queue (docs/distributed.md)");
  auto* status = command->add_subcommand("status", "depth, pending work, dead letters, workers");
  auto url = std::make_shared<std::string>();
  status->add_option("url", *url, "redis://HOST[:PORT][/STREAM]")->required();
  command->require_subcommand(1);
  return {command, [url]() -> int {
            try {
              return print_status(*url);
            } catch (const std::invalid_argument& error) {
              std::cerr << "kbench queue status: " << error.what() << "\n";
              return 64;
            } catch (const std::exception& error) {
              std::cerr << "kbench queue status: " << error.what() << "\n";
              return 2;
            }
          }};
}

} // namespace kbench::cli
