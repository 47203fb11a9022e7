#pragma once

// RAII ownership of SQLite's C handles, the one mapping of SQLite result
// codes to absl::Status, and a small helper to bind, step and read a
// prepared statement. Everything here is thread-compatible: a connection and
// its statements are used by one thread at a time (the engine's).

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kq::store::sqlite {

// Closes a connection. sqlite3_close_v2 defers the close until every
// statement of the connection is finalized, so destruction order of handles
// cannot leak or crash.
struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;

// Finalizes a prepared statement.
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StmtHandle = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// Converts a SQLite result code of an operation described by `what` into a
// Status: OK for SQLITE_OK/ROW/DONE; Unavailable for SQLITE_BUSY and
// SQLITE_LOCKED (another connection holds the database; retrying may work);
// AlreadyExists for a UNIQUE or PRIMARY KEY constraint; Internal for
// anything else. The message includes sqlite3_errmsg(db) when `db` is set.
absl::Status SqliteStatus(int rc, sqlite3* db, absl::string_view what);

// Opens (creating if needed) the database at `path`; ":memory:" opens a
// private in-memory database. Extended result codes are enabled so that
// SqliteStatus can tell constraint kinds apart.
absl::StatusOr<DbHandle> OpenDatabase(const std::string& path);

// Prepares one SQL statement for reuse. Internal when the SQL is invalid.
absl::StatusOr<StmtHandle> Prepare(sqlite3* db, absl::string_view sql);

// Runs SQL text with no parameters and no result rows (pragmas, schema
// changes, migrations). May hold several statements.
absl::Status Exec(sqlite3* db, const char* sql, absl::string_view what);

// One use of a prepared statement: binds parameters, steps through rows and
// reads columns, then resets the statement and clears its bindings when
// destroyed, so the statement can be reused and holds no read lock.
// Parameters are bound by position, in order: Bind(a).Bind(b) binds ?1, ?2.
// A failed bind is reported by the next Step()/Run().
//
// Example:
//   Query q(db, stmt, "read workload");
//   q.Bind(ns).Bind(name);
//   KQ_ASSIGN_OR_RETURN(bool row, q.Step());
//   if (row) body = q.ColumnBlob(0);
class Query {
 public:
  Query(sqlite3* db, sqlite3_stmt* stmt, absl::string_view what);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  Query& Bind(int64_t value);
  // Bind and BindBlob copy the bytes; the Borrowed forms do not, and the
  // bytes must stay valid until this Query is destroyed (not for
  // temporaries). Commits bind every row's body and names: the copies were
  // a few percent of a commit.
  Query& Bind(absl::string_view text);
  Query& BindBlob(absl::string_view bytes);
  Query& BindBorrowed(absl::string_view text);
  Query& BindBlobBorrowed(absl::string_view bytes);

  // Steps once: true when a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Steps a statement that returns no row (INSERT, UPDATE, DELETE).
  absl::Status Run();

  int64_t ColumnInt64(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;
  bool ColumnIsNull(int column) const;

 private:
  void CheckBind(int rc);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string what_;
  int next_index_ = 1;
  absl::Status bind_status_;
};

}  // namespace kq::store::sqlite
