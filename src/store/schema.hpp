#pragma once
// The store's schema and its migrations. A file is recognised by SQLite's application_id
// ("kben") and versioned by user_version; each migration takes the file from one version to the
// next inside one transaction, so an interrupted migration leaves the old version whole.
//
// Refused, and left untouched: a file that is not an SQLite database (or is corrupt), another
// program's database (an application_id of its own, or tables without ours), and a store written
// by a newer kbench (a user_version above kSchemaVersion).
#include "store/sqlite.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kbench::store {

inline constexpr std::int64_t kApplicationId = 0x6b62656e; // "kben"

struct Migration {
  int version; // the version the file has after it
  const char* what;
  const char* sql;
};

// Every migration, oldest first; the last one's version is the current schema's.
const std::vector<Migration>& migrations();
int current_schema_version();

// Brings `db` to the current schema (creating it in an empty file), in WAL mode. Throws
// StoreError naming the file and what to do when the file is refused (see above).
void prepare_schema(Database& db);

// For tests of migrations: applies the migrations up to and including `version` only.
void prepare_schema_up_to(Database& db, int version);

} // namespace kbench::store
