// kbench disassemble CANDIDATE: the SASS of the candidate's own kernels (pipeline/disassembly.hpp).
#include "cli/commands.hpp"
#include "core/json_io.hpp"
#include "pipeline/disassembly.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace kbench::cli {

Command register_disassemble_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "disassemble", "print the SASS of the kernels a candidate compiles itself (cuobjdump)");
  auto options = std::make_shared<DisassembleOptions>();
  auto json_path = std::make_shared<std::string>();
  command->add_option("candidate", options->candidate, "candidate file (defines ModelNew)")
      ->required();
  command->add_option("--arch", options->arch,
                      "compute capability to build for, such as 9.0 (default: the first GPU's)");
  command->add_flag("--all", options->all_functions,
                    "every function of the candidate's libraries, not only its own kernels");
  command->add_option("--python", options->python,
                      "the Python interpreter of the environment with torch");
  command->add_option("--cache-dir", options->cache_dir, "compile cache (default ~/.cache/kbench)");
  command->add_option("--json", *json_path, "also write the functions and their SASS as JSON");

  const auto run = [options, json_path]() -> int {
    const Disassembly result = disassemble(*options);
    if (!result.ok) {
      std::cerr << "kbench disassemble: " << result.error << "\n";
      return 1;
    }
    nlohmann::json functions = nlohmann::json::array();
    for (const auto& f : result.functions) {
      std::cout << fmt::format("== {}\n   {} ({}), from {}\n{}\n", f.name, f.mangled, f.arch,
                               f.library, f.sass);
      functions.push_back({{"name", f.name},
                           {"mangled", f.mangled},
                           {"arch", f.arch},
                           {"library", f.library},
                           {"sass", f.sass}});
    }
    if (!json_path->empty()) {
      write_json_file(*json_path, {{"candidate", options->candidate.string()},
                                   {"arch", result.arch},
                                   {"tool", result.tool},
                                   {"own_kernels", result.own_kernels},
                                   {"functions", functions}});
    }
    return 0;
  };
  return {command, run};
}

} // namespace kbench::cli
