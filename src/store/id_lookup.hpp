#pragma once
// Finding one row by its id or by a prefix of one, as `kbench show`, `kbench replay` and the
// service take them: the exact id first; else, for at least 4 lower-case hex characters, the
// one row whose id starts with them (ids are 16 hex characters: store::new_id), an ambiguous
// prefix being an error that says so.
#include "store/sqlite.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace kbench::store {

// `select` is "SELECT <columns> FROM <table>"; `read` turns the current row into a Row.
template <typename Row, typename Read>
std::optional<Row> find_by_id_or_prefix(Database& db, const std::string& select,
                                        const std::string& id, Read&& read,
                                        const std::string& what) {
  auto exact = db.prepare(select + " WHERE id = ?");
  exact.bind(1, id);
  if (exact.step()) {
    return read(exact);
  }
  if (id.size() < 4 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return std::nullopt;
  }
  // Lower-case hex ids: the prefix's range is [prefix, prefix + "g").
  auto prefixed = db.prepare(select + " WHERE id >= ? AND id < ? ORDER BY id LIMIT 2");
  prefixed.bind(1, id).bind(2, id + "g");
  if (!prefixed.step()) {
    return std::nullopt;
  }
  Row found = read(prefixed);
  if (prefixed.step()) {
    throw StoreError(fmt::format("{}: more than one {} has an id starting with {:?}; give more of "
                                 "the id",
                                 db.path().string(), what, id));
  }
  return found;
}

} // namespace kbench::store
