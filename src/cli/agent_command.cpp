// kbench agent PROBLEM|DIR...: multi-turn kernel-writing agents against an OpenAI-compatible
// model server (docs/agent.md), and `kbench agent probe`: which protocol features a server
// handles.
#include "agent/agent_run.hpp"
#include "agent/model_client.hpp"
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "sched/device_probe.hpp"
#include "sched/paths.hpp"
#include "store/agent_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

namespace kbench::cli {
namespace fs = std::filesystem;

namespace {

struct EndpointFlags {
  std::string url, model, api = "chat", key_env;
  double timeout_s = 600;
  int retries = 6;
};

void add_endpoint_flags(CLI::App& command, EndpointFlags& flags) {
  command.add_option("--endpoint", flags.url,
                     "the model server's base URL (kbench appends /v1/chat/completions or "
                     "/v1/responses)");
  command.add_option("--model", flags.model,
                     "the model's name on that server, or replay:FILE to play a recording or an "
                     "exported trace (no server)");
  command.add_option("--api", flags.api, "chat (Chat Completions) or responses")
      ->check(CLI::IsMember({"chat", "responses"}))
      ->capture_default_str();
  command.add_option("--api-key-env", flags.key_env,
                     "the environment variable holding the API key (none: no key sent)");
  command.add_option("--timeout-s", flags.timeout_s, "per model call")->capture_default_str();
  command
      .add_option("--retries", flags.retries, "retries of a call that got 429, 5xx or no answer")
      ->capture_default_str();
}

constexpr std::string_view kReplay = "replay:";

agent::Endpoint endpoint_of(const EndpointFlags& flags) {
  agent::Endpoint endpoint;
  if (flags.model.rfind(kReplay, 0) == 0) { // the built-in replay model: no server
    endpoint.model = flags.model;
    endpoint.replay = std::make_shared<const agent::Recording>(
        agent::load_recording(flags.model.substr(kReplay.size())));
    endpoint.url = "replay:" + endpoint.replay->file.string();
    return endpoint;
  }
  if (flags.url.empty() || flags.model.empty()) {
    throw std::invalid_argument(
        "--endpoint URL and --model NAME are required (or --model replay:FILE, a recording)");
  }
  endpoint.url = flags.url;
  endpoint.model = flags.model;
  endpoint.api = flags.api == "responses" ? agent::Api::responses : agent::Api::chat;
  if (!flags.key_env.empty()) {
    const char* key = std::getenv(flags.key_env.c_str());
    if (key == nullptr || *key == '\0') {
      throw std::runtime_error(
          fmt::format("--api-key-env {}: the variable is not set", flags.key_env));
    }
    endpoint.api_key = key;
  }
  endpoint.timeout = std::chrono::milliseconds(static_cast<long long>(flags.timeout_s * 1000));
  endpoint.max_retries = std::max(0, flags.retries);
  if (const char* base = std::getenv("KBENCH_AGENT_BACKOFF_S")) { // tests: short waits
    endpoint.backoff_base_s = std::atof(base);
  }
  return endpoint;
}

// The problem files named: files as given, folders as their *.py files in name order.
std::vector<fs::path> problem_files(const std::vector<std::string>& given) {
  std::vector<fs::path> files;
  for (const auto& item : given) {
    if (fs::is_directory(item)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(item)) {
        if (entry.path().extension() == ".py" && entry.path().filename().string()[0] != '_') {
          found.push_back(entry.path());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(item)) {
      files.emplace_back(item);
    } else {
      throw std::runtime_error(item + ": no such problem file or folder");
    }
  }
  return files;
}

struct AgentFlags {
  std::vector<std::string> problems;
  EndpointFlags endpoint;
  std::string tier = "default";
  int max_turns = 0, max_tool_calls = 0; // 0: the tier's
  double budget_s = 0, gpu_budget_s = 0;
  long long token_budget = 0;
  int samples = 1, concurrency = 1, evaluations_per_gpu = 4;
  std::string resume;
  bool show_reference = false;
  fs::path templates;
  StoreFlags store;
  EvalOptions evaluation;
};

// A resumed run goes on as it was started: its model, server, tier, budgets and evaluation
// options come from the store (the API key, never stored, from --api-key-env again).
void take_stored_settings(AgentFlags& flags, store::Store& results) {
  store::AgentRuns runs(results);
  const auto stored = runs.run(flags.resume);
  if (!stored) {
    throw std::runtime_error(
        fmt::format("--resume {}: no such agent run in {}", flags.resume, results.path().string()));
  }
  const auto& config = stored->config;
  flags.endpoint.url = flags.endpoint.url.empty() ? stored->endpoint : flags.endpoint.url;
  flags.endpoint.model = flags.endpoint.model.empty() ? stored->model : flags.endpoint.model;
  flags.endpoint.api = config.value("api", flags.endpoint.api);
  flags.tier = config.value("tier", flags.tier);
  flags.max_turns = config.value("max_turns", flags.max_turns);
  flags.max_tool_calls = config.value("max_tool_calls", flags.max_tool_calls);
  flags.budget_s = config.value("budget_wall_s", flags.budget_s);
  flags.gpu_budget_s = config.value("budget_gpu_s", flags.gpu_budget_s);
  flags.token_budget = config.value("budget_tokens", flags.token_budget);
  flags.show_reference = config.value("show_reference", flags.show_reference);
  if (const auto options = options_from_json(config.value("evaluation", nlohmann::json::object()));
      options.value) {
    flags.evaluation = *options.value;
  }
}

int run_agents(AgentFlags flags) {
  if (flags.store.no_db) {
    throw std::runtime_error("kbench agent keeps every run in the store: --no-db does not apply");
  }
  store::Store results(flags.store.db.empty() ? store::Store::default_path() : flags.store.db);
  if (!flags.resume.empty()) {
    take_stored_settings(flags, results);
  }
  agent::AgentSettings settings;
  settings.endpoint = endpoint_of(flags.endpoint);
  settings.tier = agent::tier_named(flags.tier);
  settings.budgets.max_turns = flags.max_turns > 0 ? flags.max_turns : settings.tier.max_turns;
  settings.budgets.max_tool_calls =
      flags.max_tool_calls > 0 ? flags.max_tool_calls : settings.tier.max_tool_calls;
  settings.budgets.wall_s = flags.budget_s;
  settings.budgets.gpu_s = flags.gpu_budget_s;
  settings.budgets.tokens = flags.token_budget;
  settings.evaluation = flags.evaluation;
  settings.show_reference = flags.show_reference;
  settings.templates = flags.templates;
  settings.runs_folder =
      (flags.evaluation.cache_dir.empty() ? sched::cache_directory() : flags.evaluation.cache_dir) /
      "agent-runs";
  std::vector<agent::RunRequest> requests;
  if (!flags.resume.empty()) {
    requests.push_back({"", 0, 0, flags.resume});
  } else {
    int index = 0;
    for (const auto& problem : problem_files(flags.problems)) {
      for (int sample = 0; sample < std::max(1, flags.samples); ++sample) {
        requests.push_back({problem, sample, index++, ""});
      }
    }
  }
  if (requests.empty()) {
    throw std::runtime_error("no problem to run: name problem files or folders, or --resume ID");
  }
  std::vector<int> gpus;
  for (int g = 0; g < static_cast<int>(sched::probe_devices().gpus.size()); ++g) {
    gpus.push_back(g);
  }
  agent::EvaluationGate gate(gpus, flags.evaluations_per_gpu);
  std::mutex print;
  std::atomic<std::size_t> next{0};
  std::atomic<int> troubled{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < requests.size(); i = next++) {
      const auto& request = requests[i];
      agent::RunOutcome done;
      try {
        done = agent::run_agent(settings, request, results, gate);
      } catch (const std::exception& error) {
        done.state = "failed";
        done.message = error.what();
      }
      troubled += done.state == "model_error" || done.state == "failed" ? 1 : 0;
      std::lock_guard lock(print);
      std::cout << fmt::format(
                       "kbench agent: run {} {} sample {}: {}{}, {} turn(s), {} tool call(s), {} "
                       "tokens, {:.0f} s{}",
                       done.run_id.empty() ? "-" : done.run_id,
                       request.resume_id.empty() ? request.problem.filename().string()
                                                 : "(resumed)",
                       request.sample, done.state,
                       done.final_status.empty() ? "" : " (" + done.final_status + ")", done.turns,
                       done.tool_calls, done.tokens.total(), done.wall_s,
                       done.state == "submitted" || done.state == "not_submitted"
                           ? ""
                           : ": " + done.message)
                << std::endl;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, std::min<int>(flags.concurrency, requests.size())); ++t) {
    threads.emplace_back(worker);
  }
  for (auto& thread : threads) {
    thread.join();
  }
  std::cout << fmt::format("kbench agent: {} run(s) in {} (kbench replay RUN shows one)\n",
                           requests.size(), results.path().string());
  return troubled == 0 ? 0 : 2;
}

} // namespace

Command register_agent_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "agent", "run kernel-writing agents against an OpenAI-compatible model server");
  auto flags = std::make_shared<AgentFlags>();
  command->add_option("problems", flags->problems, "problem files or folders of them");
  add_endpoint_flags(*command, flags->endpoint);
  command->add_option("--tier", flags->tier, "single, default or all (turns, tool calls, tools)")
      ->capture_default_str();
  command->add_option("--max-turns", flags->max_turns, "turns (default: the tier's)");
  command->add_option("--max-tool-calls", flags->max_tool_calls,
                      "tool calls (default: the tier's)");
  command->add_option("--budget-s", flags->budget_s, "wall-time budget per run (0: none)");
  command->add_option("--gpu-budget-s", flags->gpu_budget_s,
                      "GPU-seconds per run: device time its evaluations hold (0: none)");
  command->add_option("--token-budget", flags->token_budget,
                      "input + output tokens per run (0: none)");
  command->add_option("--samples", flags->samples, "runs per problem")->capture_default_str();
  command->add_option("--concurrency", flags->concurrency, "runs at once")->capture_default_str();
  command
      ->add_option("--evaluations-per-gpu", flags->evaluations_per_gpu,
                   "tool evaluations at once on each GPU (timed windows take it in turn)")
      ->capture_default_str();
  command->add_option("--resume", flags->resume, "continue a stored run that was cut short");
  command->add_flag("--show-reference", flags->show_reference,
                    "show the agent the reference's time and the speedup (hidden by default)");
  command->add_option("--templates", flags->templates,
                      "a folder of prompt templates that override templates/agent/");
  add_store_flags(*command, flags->store);
  auto& e = flags->evaluation;
  command->add_option("--device", e.device, "cuda, cpu or auto")->capture_default_str();
  command->add_option("--precision", e.precision, "fp32, fp16 or bf16")->capture_default_str();
  command->add_option("--variant", e.variant, "standard, popcorn or popcorn2")
      ->capture_default_str();
  command->add_option("--trials", e.trials, "correctness trials per evaluation")
      ->capture_default_str();
  command->add_option("--rules", e.rules, "the static rule set (default: default)");
  command->add_option("--python", e.python, "interpreter of the torch environment");
  command->add_option("--cache-dir", e.cache_dir, "kbench's cache (default: ~/.cache/kbench)");

  auto* probe = command->add_subcommand("probe", "check which protocol features a server handles");
  auto probe_flags = std::make_shared<EndpointFlags>();
  add_endpoint_flags(*probe, *probe_flags);

  const auto run = [command, probe, flags, probe_flags]() -> int {
    try {
      if (probe->parsed()) {
        if (probe_flags->model.rfind(kReplay, 0) == 0) {
          throw std::invalid_argument("kbench agent probe: a replay model has no server to probe");
        }
        const auto rows = agent::probe(endpoint_of(*probe_flags));
        bool all = true;
        for (const auto& row : rows) {
          all = all && row.passed;
          std::cout << fmt::format("{:<42} {:<4} {}\n", row.check, row.passed ? "yes" : "NO",
                                   row.detail);
        }
        return all ? 0 : 1;
      }
      if (const auto problems = validate(flags->evaluation); !problems.empty()) {
        for (const auto& problem : problems) {
          std::cerr << "kbench agent: " << problem << "\n";
        }
        return 64;
      }
      return run_agents(*flags);
    } catch (const store::StoreError& error) {
      std::cerr << "kbench agent: " << error.what() << "\n";
      return 2;
    } catch (const std::exception& error) {
      std::cerr << "kbench agent: " << error.what() << "\n";
      return 64;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
