// kbench serve: the evaluation service (docs/service.md) over HTTP until SIGINT or SIGTERM.
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "sched/device_probe.hpp"
#include "sched/paths.hpp"
#include "service/evaluation_service.hpp"
#include "service/http_api.hpp"
#include "web/site.hpp"
#ifdef KBENCH_HAVE_QUEUE
#include "queue/remote_evaluation.hpp"
#endif

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <pthread.h>
#include <sstream>
#include <thread>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

struct ServeFlags {
  fs::path db;
  std::string bind = "127.0.0.1";
  int port = 8080;
  std::string gpus; // "0,1"; empty: every usable GPU
  std::vector<fs::path> allow_paths;
  fs::path token_file;
  int jobs = std::max(1u, std::thread::hardware_concurrency() / 2);
  int evaluations_per_gpu = 4;
  std::size_t max_source_bytes = 1 << 20;
  fs::path python, cache_dir;
  std::string queue; // redis://...: evaluations go to the work queue's workers
};

// "0,2" -> {0, 2}; every usable GPU when empty. Throws naming the flag.
std::vector<int> lane_gpus(const std::string& list) {
  const int count = static_cast<int>(sched::probe_devices().gpus.size());
  std::vector<int> gpus;
  if (list.empty()) {
    for (int g = 0; g < count; ++g) {
      gpus.push_back(g);
    }
    return gpus;
  }
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    std::size_t used = 0;
    int gpu = -1;
    try {
      gpu = std::stoi(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || gpu < 0 || gpu >= count) {
      throw std::runtime_error(fmt::format("--gpus {}: {:?} is not a GPU of this machine (it "
                                           "shows {})",
                                           list, item, count));
    }
    gpus.push_back(gpu);
  }
  return gpus;
}

} // namespace

Command register_serve_command(CLI::App& app) {
  auto* command =
      app.add_subcommand("serve", "run the evaluation service: an HTTP API over the store");
  auto flags = std::make_shared<ServeFlags>();
  add_db_flag(*command, flags->db);
  command->add_option("--bind", flags->bind, "address to listen on (not loopback: --token-file)")
      ->capture_default_str();
  command->add_option("--port", flags->port, "port to listen on (0: any free one)")
      ->capture_default_str();
  command->add_option("--gpus", flags->gpus,
                      "GPUs with a measurement lane, e.g. 0,1 (default: all)");
  command->add_option("--allow-path", flags->allow_paths,
                      "a folder whose files requests may name by path (repeat for several; "
                      "without it, requests send sources)");
  command->add_option("--token-file", flags->token_file,
                      "a file whose first line is the bearer token every request must carry");
  command->add_option("--jobs", flags->jobs, "candidates built in parallel, ahead of the lanes")
      ->capture_default_str();
  command
      ->add_option("--evaluations-per-gpu", flags->evaluations_per_gpu,
                   "CUDA evaluations at once on each GPU (their measurements take it in turn)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command
      ->add_option("--max-source-bytes", flags->max_source_bytes,
                   "the largest problem or candidate source a request may send")
      ->capture_default_str();
  command->add_option("--python", flags->python, "interpreter of the torch environment");
  command->add_option("--cache-dir", flags->cache_dir, "kbench's cache (default: ~/.cache/kbench)");
  command->add_option("--queue", flags->queue,
                      "hand every evaluation to the `kbench worker`s of a Redis work queue "
                      "(redis://HOST[:PORT][/STREAM], docs/distributed.md)");

  const auto run = [flags]() -> int {
    // SIGINT and SIGTERM end the service in order: blocked here, before any thread starts (so
    // every thread inherits the mask), and taken by one thread with sigwait.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    try {
      service::ServiceSettings settings;
      settings.db = flags->db.empty() ? store::Store::default_path() : flags->db;
      settings.defaults.python = flags->python;
      settings.defaults.cache_dir = flags->cache_dir;
      settings.gpus = lane_gpus(flags->gpus);
      settings.evaluations_per_gpu = flags->evaluations_per_gpu;
      settings.build_jobs = std::max(1, flags->jobs);
      if (!flags->queue.empty()) {
#ifdef KBENCH_HAVE_QUEUE
        const auto address = queue::parse_queue_url(flags->queue);
        settings.remote = [address](const EvalOptions& run) {
          EvalResult answered;
          std::ostringstream quiet; // the service's own log says what it does
          queue::evaluate_remotely(
              address, {run}, [](std::size_t) {},
              [&](std::size_t, const EvalResult& result) { answered = result; }, quiet);
          return answered;
        };
#else
        std::cerr << "kbench serve: --queue: this kbench was built without hiredis; install it "
                     "(Debian/Ubuntu: libhiredis-dev) and build again (scripts/setup.sh)\n";
        return 2;
#endif
      }
      for (const auto& folder : flags->allow_paths) {
        std::error_code error;
        const fs::path resolved = fs::canonical(folder, error);
        if (error || !fs::is_directory(resolved)) {
          std::cerr << "kbench serve: --allow-path " << folder.string() << ": not a folder\n";
          return 64;
        }
        settings.limits.allowed_paths.push_back(resolved);
      }
      settings.limits.max_source_bytes = flags->max_source_bytes;
      settings.limits.sources_dir =
          (flags->cache_dir.empty() ? sched::cache_directory() : flags->cache_dir) /
          "serve-sources";
      service::HttpSettings http;
      http.bind = flags->bind;
      http.port = flags->port;
      if (!flags->token_file.empty()) {
        http.token = service::read_token_file(flags->token_file);
      } else if (!service::is_loopback_address(flags->bind)) {
        std::cerr << "kbench serve: --bind " << flags->bind
                  << " answers other machines: give --token-file FILE (every request then "
                     "needs `Authorization: Bearer <token>`), or bind 127.0.0.1\n";
        return 64;
      }
      service::EvaluationService evaluations(settings);
      // The dashboard's pages beside the API, from a connection of their own to the same store.
      store::Store pages_store(settings.db);
      http.pages = [&](const std::string& path, const std::map<std::string, std::string>& query) {
        const auto page = web::render(pages_store, {flags->cache_dir}, path, query, web::Links{});
        return service::PageAnswer{page.status, page.content_type, page.body};
      };
      http.content_security_policy = web::content_security_policy();
      service::HttpApi api(evaluations, http);
      std::thread signals([&] {
        int taken = 0;
        sigwait(&stop_signals, &taken);
        std::cerr << "kbench serve: " << (taken == SIGINT ? "SIGINT" : "SIGTERM")
                  << ": finishing the evaluations in progress (" << evaluations.in_progress()
                  << "); queued ones stay in the store; a second signal ends it now\n";
        api.stop();
        sigwait(&stop_signals, &taken);
        // Whatever was building or running is taken up again at the next start, as after a
        // crash (the store marks it so).
        std::cerr << "kbench serve: " << (taken == SIGINT ? "SIGINT" : "SIGTERM")
                  << " again: ending now; the next start evaluates again what was in progress\n";
        std::_Exit(128 + taken);
      });
      signals.detach();
      std::cout << fmt::format("kbench serve: listening on http://{}:{} (store {}, {}{})",
                               flags->bind, api.port(), settings.db.string(),
                               flags->queue.empty()
                                   ? fmt::format("{} GPU lane(s)", settings.gpus.size())
                                   : "evaluating through the workers of " + flags->queue,
                               http.token.empty() ? "" : ", token required")
                << std::endl;
      api.serve();
      evaluations.stop();
      return 0;
    } catch (const std::exception& error) {
      std::cerr << "kbench serve: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
