#pragma once
// The subcommands of `kbench`. Each file under src/cli/ registers one subcommand on the app and
// returns it with its runner, so that main.cpp holds one list of registrations and runs the one
// that was chosen: a new subcommand is one file plus one line there.
#include <CLI/CLI.hpp>

#include <functional>

namespace kbench::cli {

// A registered subcommand: `app` is parsed when the command line chose it; `run` then does the
// work and returns the exit code.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command register_eval_command(CLI::App& app);
Command register_suite_command(CLI::App& app);
Command register_problems_command(CLI::App& app);
Command register_check_command(CLI::App& app);
Command register_specs_command(CLI::App& app);
Command register_disassemble_command(CLI::App& app);
Command register_show_command(CLI::App& app);
Command register_export_command(CLI::App& app);
Command register_serve_command(CLI::App& app);
Command register_agent_command(CLI::App& app);
Command register_replay_command(CLI::App& app);
Command register_export_trace_command(CLI::App& app);
Command register_report_command(CLI::App& app);
Command register_worker_command(CLI::App& app);
Command register_queue_command(CLI::App& app);

} // namespace kbench::cli
