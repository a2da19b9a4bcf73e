#pragma once
// `kbench eval --service URL`: the evaluation done by a running `kbench serve` instead of in
// this process. A `kbench eval` process starts its own fork server, whose torch import and CUDA
// start cost about 5 s on the H200 before any work; a service keeps its server warm, so from
// the command line an evaluation costs what it costs inside the service. The service takes only
// the options its requests carry (docs/service.md), so any other flag is refused, not dropped.
#include "core/options.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kbench::cli {

struct ServiceFlags {
  std::string url;        // http://HOST:PORT; empty: evaluate here
  std::string token_file; // the service's bearer token, for one that is not on loopback
};

void add_service_flags(CLI::App& command, ServiceFlags& flags);

// The flags given on `command` that a service request cannot carry ("--atol", ...).
std::vector<std::string> flags_a_service_cannot_take(const CLI::App& command);

// The request body (docs/service.md, POST /v1/evaluations): the problem's and the candidate's
// text, and the options given on the command line (the others are the service's defaults,
// which are `kbench eval`'s). Throws std::runtime_error naming a file that cannot be read.
nlohmann::json service_request(const CLI::App& command, const EvalOptions& options);

// Submits, waits and prints as `kbench eval` does; returns its exit code.
int eval_via_service(const ServiceFlags& flags, const CLI::App& command, const EvalOptions& options,
                     const std::string& json_path, bool quiet);

} // namespace kbench::cli
