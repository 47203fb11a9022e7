#include "server/store/sqlite/migrator.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"
#include "server/store/sqlite/handle.h"
#include "server/store/sqlite/transaction.h"

namespace kq::store::sqlite {

absl::StatusOr<int> SchemaVersion(sqlite3* db) {
  KQ_ASSIGN_OR_RETURN(StmtHandle stmt, Prepare(db, "PRAGMA user_version"));
  Query query(db, stmt.get(), "read schema version");
  KQ_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return absl::InternalError("PRAGMA user_version returned no row");
  return static_cast<int>(query.ColumnInt64(0));
}

absl::Status Migrate(sqlite3* db,
                     const std::vector<migrations::Migration>& migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("migration ", migrations[i].name, " has version ",
                       migrations[i].version, "; expected ", i + 1));
    }
  }
  const int newest = static_cast<int>(migrations.size());

  KQ_ASSIGN_OR_RETURN(int version, SchemaVersion(db));
  if (version > newest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database schema version ", version,
        " is newer than this kqd supports (", newest, "); upgrade kqd"));
  }
  if (version == newest) return absl::OkStatus();

  KQ_ASSIGN_OR_RETURN(TransactionStatements statements,
                      TransactionStatements::Prepare(db));
  for (const migrations::Migration& migration : migrations) {
    if (migration.version <= version) continue;
    KQ_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(statements));
    // Another process may have migrated between the read above and taking
    // the write lock; re-read under the lock so nothing applies twice.
    KQ_ASSIGN_OR_RETURN(int locked_version, SchemaVersion(db));
    if (locked_version >= migration.version) {
      version = locked_version;
      continue;
    }
    KQ_RETURN_IF_ERROR(
        Exec(db, migration.sql, absl::StrCat("migration ", migration.name)));
    // user_version lives in the database header, which the transaction
    // covers: the SQL and the version commit together or not at all.
    const std::string set_version =
        absl::StrCat("PRAGMA user_version = ", migration.version);
    KQ_RETURN_IF_ERROR(
        Exec(db, set_version.c_str(),
             absl::StrCat("set schema version after ", migration.name)));
    KQ_RETURN_IF_ERROR(txn.Commit());
    spdlog::info("sqlite: applied migration {}", migration.name);
    version = migration.version;
  }
  return absl::OkStatus();
}

}  // namespace kq::store::sqlite
