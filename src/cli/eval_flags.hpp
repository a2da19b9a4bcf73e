#pragma once
// The flags every command that runs evaluations shares (`kbench eval`, `kbench suite`), in one
// place so both spell them alike. Each flag fills the EvalOptions field of the same name, with
// dashes for underscores (--no-timing fills no_timing); tests/unit/test_eval_flags.cpp holds
// every flag to that rule and to the defaults of EvalOptions{}.
#include "core/options.hpp"

#include <CLI/CLI.hpp>

namespace kbench::cli {

// Adds the flags to `command`; they write into `options`, which must outlive the parse.
void add_shared_eval_options(CLI::App& command, EvalOptions& options);

} // namespace kbench::cli
