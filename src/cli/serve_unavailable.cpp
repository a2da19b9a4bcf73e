// kbench serve in a build without cpp-httplib (src/service/CMakeLists.txt): the command exists
// and says what to install, rather than being missing from `kbench --help`.
#include "cli/commands.hpp"

#include <iostream>

namespace kbench::cli {

Command register_serve_command(CLI::App& app) {
  auto* command = app.add_subcommand("serve", "run the evaluation service (not in this build)");
  command->allow_extras();
  return {command, [] {
            std::cerr << "kbench serve: this kbench was built without cpp-httplib; install it "
                         "(Debian/Ubuntu: libcpp-httplib-dev) and build again "
                         "(scripts/setup.sh)\n";
            return 2;
          }};
}

} // namespace kbench::cli
