// kbench report --out DIR: the dashboard's pages as static HTML (docs/dashboard.md), for a
// folder to open or publish: the lists' first pages, every run, evaluation and problem page,
// the leaderboard, the raw documents and the stylesheet.
#include "cli/commands.hpp"
#include "cli/store_flags.hpp"
#include "web/site.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace kbench::cli {

Command register_report_command(CLI::App& app) {
  auto* command = app.add_subcommand("report", "write the dashboard's pages as static HTML");
  auto db = std::make_shared<std::filesystem::path>();
  auto out = std::make_shared<std::filesystem::path>();
  auto cache = std::make_shared<std::filesystem::path>();
  add_db_flag(*command, *db);
  command->add_option("--out", *out, "the folder to write (made when missing)")->required();
  command->add_option("--cache-dir", *cache, "kbench's cache, where problem checks are recorded");
  const auto run = [db, out, cache]() -> int {
    try {
      store::Store results(db->empty() ? store::Store::default_path() : *db, false);
      const std::size_t files = web::export_site(results, {*cache}, *out);
      std::cout << fmt::format("kbench report: {} files in {}; open {}\n", files, out->string(),
                               (*out / "index.html").string());
      return 0;
    } catch (const std::exception& error) {
      std::cerr << "kbench report: " << error.what() << "\n";
      return 2;
    }
  };
  return {command, run};
}

} // namespace kbench::cli
