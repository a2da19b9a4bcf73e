// --db and --no-db (cli/store_flags.hpp).
#include "cli/store_flags.hpp"

#include <iostream>

namespace kbench::cli {

void add_db_flag(CLI::App& command, std::filesystem::path& db) {
  command.add_option(
      "--db", db,
      "the results store, an SQLite file (default: " + store::Store::default_path().string() + ")");
}

void add_store_flags(CLI::App& command, StoreFlags& flags) {
  add_db_flag(command, flags.db);
  command.add_flag("--no-db", flags.no_db, "do not keep the results in the store");
}

std::unique_ptr<store::Store> open_result_store(const StoreFlags& flags, const char* command,
                                                bool& failed) {
  failed = false;
  if (flags.no_db) {
    return nullptr;
  }
  try {
    return std::make_unique<store::Store>(flags.db.empty() ? store::Store::default_path()
                                                           : flags.db);
  } catch (const std::exception& error) {
    std::cerr << "kbench " << command << ": " << error.what() << " (or run with --no-db)\n";
    failed = true;
    return nullptr;
  }
}

} // namespace kbench::cli
