#pragma once
// The subcommands of `kbench`: each registers its options on the app and runs when chosen.
#include "core/options.hpp"

#include <CLI/CLI.hpp>

#include <functional>

namespace kbench::cli {

// Options that every command running evaluations shares (device, trials, seeds, deadlines...).
void add_shared_eval_options(CLI::App& command, EvalOptions& options);

// Each returns the function to call when its subcommand was chosen; it returns the exit code.
std::function<int()> register_eval_command(CLI::App& app);
std::function<int()> register_suite_command(CLI::App& app);
std::function<int()> register_problems_command(CLI::App& app);
std::function<int()> register_check_command(CLI::App& app);
std::function<int()> register_specs_command(CLI::App& app);
std::function<int()> register_disassemble_command(CLI::App& app);

} // namespace kbench::cli
