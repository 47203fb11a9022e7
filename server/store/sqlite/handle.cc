#include "server/store/sqlite/handle.h"

#include "absl/strings/str_cat.h"

namespace kq::store::sqlite {

absl::Status SqliteStatus(int rc, sqlite3* db, absl::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) {
    return absl::OkStatus();
  }
  // sqlite3_errmsg describes the connection's most recent failure, which is
  // the one being reported; without a connection, describe the code.
  const std::string message = absl::StrCat(
      what, ": ", db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
      " (sqlite code ", rc, ")");
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(message);
    default:
      break;
  }
  if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
    return absl::AlreadyExistsError(message);
  }
  return absl::InternalError(message);
}

absl::StatusOr<DbHandle> OpenDatabase(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  // Even a failed open usually returns a connection, which carries the error
  // message and must be closed.
  DbHandle db(raw);
  if (rc != SQLITE_OK) {
    return SqliteStatus(rc, db.get(), absl::StrCat("open \"", path, "\""));
  }
  sqlite3_extended_result_codes(db.get(), 1);
  return db;
}

absl::StatusOr<StmtHandle> Prepare(sqlite3* db, absl::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc =
      sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  StmtHandle stmt(raw);
  if (rc != SQLITE_OK) {
    return SqliteStatus(rc, db, absl::StrCat("prepare \"", sql, "\""));
  }
  return stmt;
}

absl::Status Exec(sqlite3* db, const char* sql, absl::string_view what) {
  return SqliteStatus(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), db,
                      what);
}

Query::Query(sqlite3* db, sqlite3_stmt* stmt, absl::string_view what)
    : db_(db), stmt_(stmt), what_(what) {}

Query::~Query() {
  // reset returns the error of the last step, which was already reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Query::CheckBind(int rc) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = SqliteStatus(
        rc, db_, absl::StrCat(what_, ": bind parameter ", next_index_));
  }
  ++next_index_;
}

Query& Query::Bind(int64_t value) {
  CheckBind(sqlite3_bind_int64(stmt_, next_index_, value));
  return *this;
}

namespace {

// A null pointer would bind NULL, which NOT NULL columns refuse: an empty
// blob needs a non-null pointer.
const char* NonNull(absl::string_view bytes) {
  static const char kEmpty = 0;
  return bytes.data() == nullptr ? &kEmpty : bytes.data();
}

}  // namespace

Query& Query::Bind(absl::string_view text) {
  CheckBind(sqlite3_bind_text64(stmt_, next_index_, text.data(), text.size(),
                                SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Query& Query::BindBlob(absl::string_view bytes) {
  CheckBind(sqlite3_bind_blob64(stmt_, next_index_, NonNull(bytes),
                                bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

// SQLITE_STATIC: SQLite reads the bytes in place until the bindings are
// cleared, which ~Query does.
Query& Query::BindBorrowed(absl::string_view text) {
  CheckBind(sqlite3_bind_text64(stmt_, next_index_, text.data(), text.size(),
                                SQLITE_STATIC, SQLITE_UTF8));
  return *this;
}

Query& Query::BindBlobBorrowed(absl::string_view bytes) {
  CheckBind(sqlite3_bind_blob64(stmt_, next_index_, NonNull(bytes),
                                bytes.size(), SQLITE_STATIC));
  return *this;
}

absl::StatusOr<bool> Query::Step() {
  if (!bind_status_.ok()) return bind_status_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, db_, what_);
}

absl::Status Query::Run() {
  absl::StatusOr<bool> row = Step();
  if (!row.ok()) return row.status();
  if (*row) {
    return absl::InternalError(
        absl::StrCat(what_, ": statement returned a row"));
  }
  return absl::OkStatus();
}

int64_t Query::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::string Query::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     sqlite3_column_bytes(stmt_, column));
}

std::string Query::ColumnBlob(int column) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  if (blob == nullptr) return "";
  return std::string(static_cast<const char*>(blob),
                     sqlite3_column_bytes(stmt_, column));
}

bool Query::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

}  // namespace kq::store::sqlite
