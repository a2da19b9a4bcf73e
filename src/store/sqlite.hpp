#pragma once
// The few parts of SQLite's C API the store uses, each with one owner: a Database owns its
// connection and a Statement its prepared statement, both move-only, finalised in their
// destructors. Every failure throws StoreError with SQLite's own message and the SQL or the file
// it was about, so a caller can tell a person what went wrong.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kbench::store {

struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Statement {
public:
  Statement(sqlite3* db, std::string_view sql);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Binds by position (1-based); each returns *this so a call site reads as one line.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::optional<double> value);
  Statement& bind_null(int index);

  // Runs to the next row: true while there is one, false when done.
  bool step();
  // step() where the statement returns no rows.
  void run();
  void reset();

  bool is_null(int column) const;
  std::string text(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;
  std::optional<double> optional_real(int column) const;

private:
  sqlite3* m_db;
  sqlite3_stmt* m_statement = nullptr;
  std::string m_sql; // for error messages
};

class Database {
public:
  // Opens (and creates when `create`) the file; a busy database is waited on up to
  // `busy_timeout_ms` before a write fails.
  Database(const std::filesystem::path& path, bool create, int busy_timeout_ms = 10000);
  Database(Database&& other) noexcept;
  Database& operator=(Database&&) = delete;
  Database(const Database&) = delete;
  ~Database();

  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) const { return Statement(m_db, sql); }
  std::int64_t changes() const;
  const std::filesystem::path& path() const { return m_path; }

private:
  sqlite3* m_db = nullptr;
  std::filesystem::path m_path;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when the scope is left without commit(): writers take
// the write lock up front, so two processes never deadlock upgrading a read.
class Transaction {
public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

private:
  Database& m_db;
  bool m_done = false;
};

} // namespace kbench::store
