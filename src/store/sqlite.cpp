#include "store/sqlite.hpp"

#include <fmt/format.h>

#include <sqlite3.h>

namespace kbench::store {
namespace {

std::string shortened(std::string_view sql) {
  std::string text(sql.substr(0, 120));
  return sql.size() > 120 ? text + "..." : text;
}

} // namespace

Statement::Statement(sqlite3* db, std::string_view sql) : m_db(db), m_sql(sql) {
  if (sqlite3_prepare_v2(db, m_sql.data(), static_cast<int>(m_sql.size()), &m_statement, nullptr) !=
      SQLITE_OK) {
    throw StoreError(fmt::format("{} (in `{}`)", sqlite3_errmsg(db), shortened(m_sql)));
  }
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db), m_statement(other.m_statement), m_sql(std::move(other.m_sql)) {
  other.m_statement = nullptr;
}

Statement::~Statement() {
  sqlite3_finalize(m_statement);
}

Statement& Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(m_statement, index, text.data(), static_cast<int>(text.size()),
                    SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(m_statement, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(m_statement, index, value);
  return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(m_statement, index);
  return *this;
}

bool Statement::step() {
  const int code = sqlite3_step(m_statement);
  if (code == SQLITE_ROW) {
    return true;
  }
  if (code == SQLITE_DONE) {
    return false;
  }
  throw StoreError(fmt::format("{} (in `{}`)", sqlite3_errmsg(m_db), shortened(m_sql)));
}

void Statement::run() {
  step();
  reset();
}

void Statement::reset() {
  sqlite3_reset(m_statement);
  sqlite3_clear_bindings(m_statement);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(m_statement, column) == SQLITE_NULL;
}

std::string Statement::text(int column) const {
  const auto* bytes = sqlite3_column_text(m_statement, column);
  return bytes ? std::string(reinterpret_cast<const char*>(bytes),
                             static_cast<std::size_t>(sqlite3_column_bytes(m_statement, column)))
               : std::string();
}

std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(m_statement, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(m_statement, column);
}

std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}

Database::Database(const std::filesystem::path& path, bool create, int busy_timeout_ms)
    : m_path(path) {
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr) != SQLITE_OK) {
    const std::string why = m_db ? sqlite3_errmsg(m_db) : "out of memory";
    sqlite3_close(m_db);
    m_db = nullptr;
    throw StoreError(fmt::format("{}: cannot open the store: {}", path.string(), why));
  }
  sqlite3_busy_timeout(m_db, busy_timeout_ms);
}

Database::Database(Database&& other) noexcept : m_db(other.m_db), m_path(std::move(other.m_path)) {
  other.m_db = nullptr;
}

Database::~Database() {
  sqlite3_close_v2(m_db);
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : sqlite3_errmsg(m_db);
    sqlite3_free(error);
    throw StoreError(fmt::format("{} (in `{}`)", why, shortened(sql)));
  }
}

std::int64_t Database::changes() const {
  return sqlite3_changes64(m_db);
}

Transaction::Transaction(Database& db) : m_db(db) {
  m_db.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!m_done) {
    try {
      m_db.exec("ROLLBACK");
    } catch (const StoreError&) { // nothing left to undo
    }
  }
}

void Transaction::commit() {
  m_db.exec("COMMIT");
  m_done = true;
}

} // namespace kbench::store
