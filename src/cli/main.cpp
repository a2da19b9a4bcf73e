// kbench: evaluates GPU kernels written by LLM agents against PyTorch reference programs.
// This file only wires the subcommands; each lives in its own file under src/cli/.
#include "cli/commands.hpp"

#include <csignal>
#include <iostream>

int main(int argc, char** argv) {
  // A worker that dies while we write its request must not kill the orchestrator.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"kbench: evaluate GPU kernels against PyTorch reference programs"};
  app.set_version_flag("--version", std::string("kbench ") + KBENCH_VERSION);
  app.require_subcommand(1);
  const auto run_eval = kbench::cli::register_eval_command(app);
  const auto run_suite = kbench::cli::register_suite_command(app);
  const auto run_problems = kbench::cli::register_problems_command(app);
  const auto run_check = kbench::cli::register_check_command(app);
  const auto run_specs = kbench::cli::register_specs_command(app);
  const auto run_disassemble = kbench::cli::register_disassemble_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 64;
  }
  if (app.got_subcommand("eval")) {
    return run_eval();
  }
  if (app.got_subcommand("suite")) {
    return run_suite();
  }
  if (app.got_subcommand("problems")) {
    return run_problems();
  }
  if (app.got_subcommand("check")) {
    return run_check();
  }
  if (app.got_subcommand("specs")) {
    return run_specs();
  }
  if (app.got_subcommand("disassemble")) {
    return run_disassemble();
  }
  std::cerr << app.help();
  return 64;
}
