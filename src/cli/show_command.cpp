// kbench show ID: a stored evaluation's summary (or its whole document with --json).
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "report/summary.hpp"
#include "store/store.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace kbench::cli {

Command register_show_command(CLI::App& app) {
  auto* command = app.add_subcommand("show", "show a stored evaluation's summary");
  auto id = std::make_shared<std::string>();
  auto db = std::make_shared<std::filesystem::path>();
  auto json = std::make_shared<bool>(false);
  command->add_option("id", *id, "the evaluation's id, or the start of it (at least 4 characters)")
      ->required();
  add_db_flag(*command, *db);
  command->add_flag("--json", *json, "print the whole result document (kbench.eval/1)");
  const auto run = [id, db, json]() -> int {
    try {
      store::Store results(db->empty() ? store::Store::default_path() : *db, false);
      const auto found = results.find_evaluation(*id);
      if (!found) {
        std::cerr << fmt::format("kbench show: no evaluation {:?} in {} (kbench export lists "
                                 "them)\n",
                                 *id, results.path().string());
        return 1;
      }
      if (*json) {
        std::cout << found->document.dump(2) << "\n";
        return 0;
      }
      const auto result = result_from_json(found->document);
      if (!result.value) {
        std::cerr << "kbench show: the stored document does not read back: " << result.error
                  << "\n";
        return 2;
      }
      std::cout << fmt::format("evaluation  {} ({}, {})\n", found->row.id, found->row.origin,
                               found->row.created_at);
      std::cout << report::format_summary(*result.value);
      return 0;
    } catch (const std::exception& error) {
      std::cerr << "kbench show: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
