// kbench worker and kbench queue in a build without hiredis (src/queue/CMakeLists.txt): the
// commands exist and say what to install, rather than being missing from `kbench --help`.
#include "cli/commands.hpp"

#include <iostream>

namespace kbench::cli {
namespace {

Command unavailable(CLI::App& app, const char* name) {
  auto* command = app.add_subcommand(name, "the Redis work queue (not in this build)");
  command->allow_extras();
  return {command, [name] {
            std::cerr << "kbench " << name
                      << ": this kbench was built without hiredis; install it (Debian/Ubuntu: "
                         "libhiredis-dev) and build again (scripts/setup.sh)\n";
            return 2;
          }};
}

} // namespace

Command register_worker_command(CLI::App& app) {
  return unavailable(app, "worker");
}
Command register_queue_command(CLI::App& app) {
  return unavailable(app, "queue");
}

} // namespace kbench::cli
