// kbench replay RUN_ID: a stored agent run drawn again from the store, with no model call and no
// GPU work; --reevaluate re-scores its kernels on this machine and sets the new figures beside
// the stored ones.
#include "agent/evaluation_gate.hpp"
#include "agent/trace.hpp"
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "pipeline/result_key.hpp"
#include "sched/device_probe.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

namespace kbench::cli {

namespace {

std::string figures(const EvalResult& result) {
  std::string text = status_name(result.status);
  if (result.timing.candidate) {
    text += fmt::format(", {:.2f} µs", result.timing.candidate->stats_us.median);
  }
  if (result.timing.speedup) {
    text += fmt::format(", {:.2f}x", *result.timing.speedup);
  }
  return text;
}

int reevaluate(const agent::StoredTrace& trace, store::Store& results) {
  auto decoded = options_from_json(trace.run.config.value("evaluation", nlohmann::json::object()));
  if (!decoded.value) {
    std::cerr << "kbench replay: the run's stored options do not read back: " << decoded.error
              << "\n";
    return 2;
  }
  std::vector<int> gpus;
  for (int g = 0; g < static_cast<int>(sched::probe_devices().gpus.size()); ++g) {
    gpus.push_back(g);
  }
  agent::EvaluationGate gate(gpus, 1);
  std::cout << "\nre-evaluated on this machine:\n";
  for (const auto& [sha, path] : agent::evaluated_kernels(trace)) {
    if (!std::filesystem::exists(path)) {
      std::cout << fmt::format("  {}: {} is gone\n", sha.substr(0, 12), path);
      continue;
    }
    EvalOptions options = *decoded.value;
    options.candidate = path;
    const EvalResult result = gate.evaluate(options, 0);
    const std::string id =
        results.add_evaluation(result, store_key(options).value_or(""), "replay");
    std::cout << fmt::format("  kernel {}: {} (evaluation {})\n", sha.substr(0, 12),
                             figures(result), id);
  }
  return 0;
}

} // namespace

Command register_replay_command(CLI::App& app) {
  auto* command = app.add_subcommand("replay", "show a stored agent run again (no model calls)");
  auto id = std::make_shared<std::string>();
  auto db = std::make_shared<std::filesystem::path>();
  auto again = std::make_shared<bool>(false);
  command->add_option("run", *id, "the run's id, or the start of it")->required();
  add_db_flag(*command, *db);
  command->add_flag("--reevaluate", *again, "evaluate the run's kernels again on this machine");
  const auto run = [id, db, again]() -> int {
    try {
      store::Store results(db->empty() ? store::Store::default_path() : *db, false);
      const auto trace = agent::load_trace(results, *id);
      std::cout << agent::format_replay(trace, results);
      return *again ? reevaluate(trace, results) : 0;
    } catch (const std::exception& error) {
      std::cerr << "kbench replay: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
