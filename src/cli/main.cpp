// kbench: evaluates GPU kernels written by LLM agents against PyTorch reference programs.
// This file only wires the subcommands; each lives in its own file under src/cli/.
#include "cli/commands.hpp"
#include "sched/background_helpers.hpp"

#include <csignal>
#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  // A worker that dies while we write its request must not kill the orchestrator.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"kbench: evaluate GPU kernels against PyTorch reference programs"};
  app.set_version_flag("--version", std::string("kbench ") + KBENCH_VERSION);
  app.require_subcommand(1);
  // Every subcommand, in the order `kbench --help` lists them: one line each.
  std::vector<kbench::cli::Command> commands;
  commands.push_back(kbench::cli::register_eval_command(app));
  commands.push_back(kbench::cli::register_suite_command(app));
  commands.push_back(kbench::cli::register_problems_command(app));
  commands.push_back(kbench::cli::register_check_command(app));
  commands.push_back(kbench::cli::register_specs_command(app));
  commands.push_back(kbench::cli::register_disassemble_command(app));
  commands.push_back(kbench::cli::register_show_command(app));
  commands.push_back(kbench::cli::register_export_command(app));
  commands.push_back(kbench::cli::register_serve_command(app));
  commands.push_back(kbench::cli::register_worker_command(app));
  commands.push_back(kbench::cli::register_queue_command(app));
  commands.push_back(kbench::cli::register_agent_command(app));
  commands.push_back(kbench::cli::register_replay_command(app));
  commands.push_back(kbench::cli::register_export_trace_command(app));
  commands.push_back(kbench::cli::register_report_command(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 64;
  }
  for (const auto& command : commands) {
    if (command.app->parsed()) {
      const int code = command.run();
      // What the command left to be built in the background (precompiled headers) finishes before
      // kbench exits, so no helper outlives it; said, so that the wait after the command's own
      // output is not taken for a hang.
      if (const int left = kbench::sched::unfinished_background_helpers(); left > 0) {
        std::cerr << "kbench: finishing " << left
                  << " precompiled header build(s) for later compiles before exiting "
                     "(KBENCH_HOST_PCH=off and KBENCH_PCH=off build none)\n";
      }
      kbench::sched::wait_for_background_helpers();
      return code;
    }
  }
  std::cerr << app.help();
  return 64;
}
