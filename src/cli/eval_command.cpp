// kbench eval PROBLEM CANDIDATE: one evaluation, a human summary, optionally the JSON document.
#include "cli/commands.hpp"
#include "cli/eval_flags.hpp"
#include "cli/eval_via_service.hpp"
#include "cli/store_flags.hpp"
#include "core/json_io.hpp"
#include "pipeline/evaluation.hpp"
#include "pipeline/result_key.hpp"
#include "report/summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <unistd.h>

namespace kbench::cli {

Command register_eval_command(CLI::App& app) {
  auto* command = app.add_subcommand("eval", "evaluate one candidate against one problem");
  auto options = std::make_shared<EvalOptions>();
  auto json_path = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto store_flags = std::make_shared<StoreFlags>();
  command->add_option("problem", options->problem, "problem file (KernelBench format)")->required();
  command->add_option("candidate", options->candidate, "candidate file (defines ModelNew)")
      ->required();
  add_shared_eval_options(*command, *options);
  command->add_option("--json", *json_path, "write the full result document (kbench.eval/1)");
  command->add_flag("--quiet", *quiet, "no progress lines on stderr");
  add_store_flags(*command, *store_flags);
  auto service = std::make_shared<ServiceFlags>();
  add_service_flags(*command, *service);

  const auto run = [command, options, json_path, quiet, store_flags, service]() -> int {
    if (const auto problems = validate(*options); !problems.empty()) {
      for (const auto& problem : problems) {
        std::cerr << "kbench eval: " << problem << "\n";
      }
      return 64;
    }
    if (!service->url.empty()) {
      if (const auto refused = flags_a_service_cannot_take(*command); !refused.empty()) {
        std::cerr << "kbench eval --service: " << fmt::format("{}", fmt::join(refused, ", "))
                  << " cannot be passed to a service (it takes --device, --variant, "
                     "--precision, --trials, --rules and --no-timing, and stores the result "
                     "itself); leave them out, or leave out --service\n";
        return 64;
      }
      return eval_via_service(*service, *command, *options, *json_path, *quiet);
    }
    // Opened before the evaluation: a store that cannot be used is said at once, not after it.
    bool store_failed = false;
    const auto results = open_result_store(*store_flags, "eval", store_failed);
    if (store_failed) {
      return 2;
    }
    ProgressCallback progress;
    if (!*quiet && isatty(STDERR_FILENO)) {
      progress = [](std::string_view stage) { std::cerr << "kbench: " << stage << "...\n"; };
    }
    const EvalResult result = evaluate(*options, progress);
    std::cout << report::format_summary(result);
    if (results) {
      try {
        const std::string id =
            results->add_evaluation(result, store_key(*options).value_or(""), "eval");
        std::cout << "stored      " << id << " in " << results->path().string() << " (kbench show "
                  << id.substr(0, 8) << ")\n";
      } catch (const std::exception& error) {
        std::cerr << "kbench eval: the result was not stored: " << error.what() << "\n";
      }
    }
    if (!json_path->empty()) {
      try {
        write_json_file(*json_path, to_json(result));
      } catch (const std::exception& error) {
        std::cerr << "kbench eval: " << error.what() << "\n";
        return 2;
      }
    }
    return report::exit_code_for(result.status);
  };
  return {command, run};
}

} // namespace kbench::cli
