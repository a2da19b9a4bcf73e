#pragma once
// --db and --no-db, for the commands that leave their results in the store (`kbench eval`,
// `kbench suite`), and the store they name.
#include "store/store.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace kbench::cli {

struct StoreFlags {
  std::filesystem::path db; // empty: store::Store::default_path()
  bool no_db = false;
};

void add_store_flags(CLI::App& command, StoreFlags& flags);
// --db for the commands that only read the store (`kbench show`, `kbench export`).
void add_db_flag(CLI::App& command, std::filesystem::path& db);

// The store to write to: nullptr under --no-db. When it cannot be opened, says why on stderr
// ("kbench eval: ...") and sets `failed`.
std::unique_ptr<store::Store> open_result_store(const StoreFlags& flags, const char* command,
                                                bool& failed);

} // namespace kbench::cli
