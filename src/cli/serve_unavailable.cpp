// kbench serve and `kbench eval --service` in a build without cpp-httplib
// (src/service/CMakeLists.txt): they exist and say what to install, rather than being missing
// from `kbench --help`.
#include "cli/commands.hpp"
#include "cli/eval_via_service.hpp"

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

int eval_via_service(const ServiceFlags&, const CLI::App&, const EvalOptions&, const std::string&,
                     bool) {
  std::cerr << "kbench eval --service: this kbench was built without cpp-httplib; install it "
               "(Debian/Ubuntu: libcpp-httplib-dev) and build again (scripts/setup.sh)\n";
  return 2;
}

} // namespace kbench::cli
