#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/core/objects.h"
#include "server/store/sqlite/handle.h"
#include "server/store/sqlite/transaction.h"
#include "server/store/store.h"

namespace kq::store {

// Tuning of a SqliteStore.
struct SqliteOptions {
  // PRAGMA synchronous = FULL: a committed batch survives power loss. With
  // false (NORMAL), WAL mode still survives a crash of kqd, but the last
  // commits before a power loss may be lost.
  bool synchronous_full = true;
  // Events kept for Watch; older revisions are pruned (see SqliteStore).
  size_t event_retention = 100000;
  // How long a statement waits for another connection's lock before
  // failing with Unavailable.
  absl::Duration busy_timeout = absl::Seconds(5);
};

// The durable Store: one SQLite database in WAL mode (schema in
// migrations/), written by one connection. Configuration objects and
// workloads are stored as serialized kq.v1 protos (server/codec) beside the
// columns queries filter on; every Commit is one transaction.
//
// It keeps the Store contract (store.h), checked by StoreConformanceTest,
// with a retention of SqliteOptions::event_retention events.
//
// Reads between two commits share one snapshot: another connection's
// writes show from the next Commit on (kqd's store is the only writer).
//
// Thread-compatible: one thread (the engine's) uses a SqliteStore at a time.
// Another process opening the same file waits up to `busy_timeout` for the
// write lock, then gets Unavailable.
class SqliteStore final : public Store {
 public:
  // Opens, creating if needed, the database at `path` (":memory:" for a
  // private in-memory database), sets WAL mode and the pragmas, and applies
  // any pending migrations. FailedPrecondition when the database's schema
  // is newer than this binary's; Unavailable when the database is locked;
  // Internal on any other failure.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      const std::string& path, const SqliteOptions& options);

  ~SqliteStore() override;

  absl::StatusOr<LoadedState> Load() override;
  absl::Status Commit(const WriteBatch& batch) override;
  absl::StatusOr<std::optional<Workload>> GetWorkload(
      const NamespacedName& key) override;
  absl::StatusOr<std::vector<Workload>> ListFinishedWorkloads(
      const std::string& namespace_name) override;
  absl::StatusOr<std::vector<Event>> ReadEvents(int64_t after_revision,
                                                size_t limit) override;
  absl::StatusOr<int64_t> OldestEventRevision() override;
  absl::StatusOr<std::vector<PodTemplate>> ReadPodTemplates(
      const NamespacedName& key, const std::string& workload_uid) override;

 private:
  // The store's prepared statements, prepared once in Open.
  struct Statements;

  SqliteStore(sqlite::DbHandle db, const SqliteOptions& options);

  // Prepares statements and reads the revision and event count.
  absl::Status Init();
  // Writes the batch's rows; the caller holds the transaction.
  absl::Status WriteRows(const WriteBatch& batch);
  // Deletes the oldest revisions beyond the retention, given the number of
  // events once the batch of `newest_revision` is written; returns how many
  // rows it deleted.
  absl::StatusOr<int64_t> PruneEvents(int64_t event_count,
                                      int64_t newest_revision);
  // Reads the workloads `stmt` selects (bound to `ns` when set), with
  // their templates or (for Load) without.
  absl::StatusOr<std::vector<Workload>> ReadWorkloads(sqlite3_stmt* stmt,
                                                      const char* what,
                                                      const std::string* ns,
                                                      bool with_templates);

  // Reads share one read transaction, from the first read after a commit
  // until the next commit: a read in autocommit mode pays for taking and
  // releasing SQLite's file and WAL locks, which was most of the cost of
  // looking up a name that is not stored (every new workload's). The
  // snapshot never goes stale, as this connection is the only writer; the
  // checkpointer can still copy every frame, all committed before it.
  absl::Status BeginReads();
  absl::Status EndReads();
  bool reading_ = false;

  // Declared first so it is destroyed last, after every statement.
  sqlite::DbHandle db_;
  SqliteOptions options_;
  std::unique_ptr<Statements> statements_;
  std::optional<sqlite::TransactionStatements> transaction_statements_;
  // Revision of the last committed batch and number of stored events,
  // mirrored from the database and updated only after a commit succeeds.
  int64_t revision_ = 0;
  int64_t event_count_ = 0;
  // Copies committed WAL frames back into the database file on a thread and
  // connection of its own (file databases only), so that a commit does not
  // pay for SQLite's automatic checkpoint. Destroyed before db_.
  class Checkpointer;
  std::unique_ptr<Checkpointer> checkpointer_;
};

}  // namespace kq::store
