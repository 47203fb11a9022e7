#pragma once

// Brings a SQLite database's schema to the newest version kqd knows, by
// applying the embedded migrations (migrations/migrations.h) that it lacks.
// The schema version is SQLite's `PRAGMA user_version`.

#include <sqlite3.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "migrations/migrations.h"

namespace kq::store::sqlite {

// Returns the database's schema version (0 for a new database). Internal on
// a SQLite failure.
absl::StatusOr<int> SchemaVersion(sqlite3* db);

// Applies, in order, every migration of `migrations` whose version is
// greater than the database's schema version, each in its own transaction
// together with setting the schema version, so a failure leaves the database
// at the last version that applied completely.
//
// `migrations` must be numbered 1, 2, 3, ... (InvalidArgument otherwise).
// FailedPrecondition when the database's version is newer than the newest
// migration ("database schema version N is newer than this kqd supports (M);
// upgrade kqd"); Unavailable when another connection holds the database;
// Internal when a migration's SQL fails.
absl::Status Migrate(sqlite3* db,
                     const std::vector<migrations::Migration>& migrations);

}  // namespace kq::store::sqlite
