// One prepared-statement wrapper for the tracker's SQLite stores (swarms and
// peers in sqlite_store.cc, the fleet in fleet_store.cc).
//
// Bound values are copied (SQLITE_TRANSIENT), so a binding never outlives
// its argument; the values are ids, hashes and names, a few dozen bytes.
// Run() resets the statement and clears its bindings, so a statement
// prepared once can be bound and run again (the batched writer does).
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

namespace swarmcast::tracker {

class SqliteStmt {
 public:
  SqliteStmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~SqliteStmt() { sqlite3_finalize(s_); }
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  // False if the SQL did not compile; Run() then fails too.
  explicit operator bool() const { return s_ != nullptr; }
  sqlite3_stmt* get() { return s_; }

  SqliteStmt& Int(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  SqliteStmt& Blob(int i, const void* p, std::size_t n) {
    sqlite3_bind_blob(s_, i, p, static_cast<int>(n), SQLITE_TRANSIENT);
    return *this;
  }
  // Text as given; an empty string stays '' (for NOT NULL columns).
  SqliteStmt& Text(int i, const std::string& t) {
    sqlite3_bind_text(s_, i, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Text, or NULL when empty: for optional columns where NULL means "none"
  // (a retired swarm's name, a missing SHA-256 pin) and UNIQUE must not
  // count every '' as the same value.
  SqliteStmt& TextOrNull(int i, const std::string& t) {
    if (t.empty()) {
      sqlite3_bind_null(s_, i);
      return *this;
    }
    return Text(i, t);
  }

  // One step of a statement that returns no rows.
  bool Run() {
    if (!s_) return false;
    int rc = sqlite3_step(s_);
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    return rc == SQLITE_DONE;
  }

 private:
  sqlite3_stmt* s_ = nullptr;
};

// Column col of the current row as text; NULL reads as "".
inline std::string ColumnText(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? std::string(reinterpret_cast<const char*>(t),
                         static_cast<std::size_t>(sqlite3_column_bytes(s, col)))
           : std::string();
}

// A blob column of exactly N bytes into out; false if its size differs.
template <std::size_t N>
bool ColumnArray(sqlite3_stmt* s, int col, std::array<std::uint8_t, N>& out) {
  if (sqlite3_column_bytes(s, col) != static_cast<int>(N)) return false;
  std::memcpy(out.data(), sqlite3_column_blob(s, col), N);
  return true;
}

}  // namespace swarmcast::tracker
