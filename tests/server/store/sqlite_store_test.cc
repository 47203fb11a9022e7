// What only the SQLite store has: migrations, files that outlive the
// process, transactions, locking and the query plans the schema promises.
// Behaviour shared with MemoryStore is in store_conformance_test.cc.

#include "server/store/sqlite/sqlite_store.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "base/status_macros.h"
#include "migrations/migrations.h"
#include "server/store/sqlite/handle.h"
#include "server/store/sqlite/migrator.h"
#include "server/store/sqlite/statements.h"
#include "server/store/sqlite/transaction.h"
#include "tests/testing/builders.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::store {
namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::IsOkAndHolds;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::NamespaceBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::ScopedTempDir;
using ::kq::testing::StatusIs;
using ::kq::testing::WorkloadBuilder;
using sqlite::DbHandle;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Optional;
using ::testing::SizeIs;

const absl::Time kCreated = absl::FromUnixSeconds(1'700'000'000);

// A raw connection's single-value queries, for inspecting what the store
// wrote.
absl::StatusOr<int64_t> QueryInt(sqlite3* db, const std::string& sql) {
  KQ_ASSIGN_OR_RETURN(sqlite::StmtHandle stmt, sqlite::Prepare(db, sql));
  sqlite::Query query(db, stmt.get(), sql);
  KQ_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no row: ", sql));
  return query.ColumnInt64(0);
}

absl::StatusOr<std::string> QueryText(sqlite3* db, const std::string& sql) {
  KQ_ASSIGN_OR_RETURN(sqlite::StmtHandle stmt, sqlite::Prepare(db, sql));
  sqlite::Query query(db, stmt.get(), sql);
  KQ_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return absl::NotFoundError(absl::StrCat("no row: ", sql));
  return query.ColumnText(0);
}

int LatestVersion() { return static_cast<int>(migrations::All().size()); }

Workload Pending(const std::string& name, int64_t revision) {
  return WorkloadBuilder(name)
      .Namespace("ns")
      .Uid("uid-" + name)
      .Revision(revision)
      .Created(kCreated)
      .Queue("lq")
      .Priority(7)
      .Request("cpu", "1")
      .Build();
}

Workload Finished(const std::string& name, int64_t revision) {
  return WorkloadBuilder(name)
      .Namespace("ns")
      .Uid("uid-" + name)
      .Revision(revision)
      .Created(kCreated)
      .Queue("lq")
      .Request("cpu", "1")
      .Admitted(AdmissionBuilder("cq").Assign("cpu", "default", "1").Build())
      .Finished()
      .Build();
}

Event Added(std::variant<ConfigObject, Workload> object) {
  Event event;
  event.type = Event::Type::kAdded;
  event.object = std::move(object);
  return event;
}

// ---------------------------------------------------------------------------
// Embedded migrations and the migrator.

TEST(EmbeddedMigrationsTest, AreNumberedFromOneWithoutGaps) {
  const std::vector<migrations::Migration>& all = migrations::All();
  ASSERT_THAT(all, Not(IsEmpty()));
  EXPECT_STREQ(all[0].name, "0001_initial_schema");
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].version, static_cast<int>(i) + 1) << all[i].name;
    EXPECT_THAT(std::string(all[i].sql), HasSubstr(";")) << all[i].name;
  }
}

class MigratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<DbHandle> db = sqlite::OpenDatabase(":memory:");
    ASSERT_OK(db.status());
    db_ = std::move(*db);
  }

  sqlite3* db() { return db_.get(); }

  DbHandle db_;
};

TEST_F(MigratorTest, MigratesAnEmptyDatabaseToTheLatestSchema) {
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(0));
  ASSERT_OK(sqlite::Migrate(db(), migrations::All()));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(LatestVersion()));

  for (const char* table :
       {"objects", "workloads", "events", "meta", "pod_templates"}) {
    SCOPED_TRACE(table);
    EXPECT_THAT(QueryInt(db(), absl::StrCat("SELECT strict FROM "
                                            "pragma_table_list WHERE name = '",
                                            table, "'")),
                IsOkAndHolds(1));
  }
  EXPECT_THAT(QueryInt(db(),
                       "SELECT COUNT(*) FROM sqlite_schema WHERE "
                       "type = 'index' AND name = "
                       "'workloads_by_finished'"),
              IsOkAndHolds(1));
  EXPECT_THAT(QueryInt(db(), "SELECT value FROM meta WHERE key = 'revision'"),
              IsOkAndHolds(0));

  // A second run has nothing to do (re-running 0001 would fail: its tables
  // exist).
  EXPECT_OK(sqlite::Migrate(db(), migrations::All()));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(LatestVersion()));
}

TEST_F(MigratorTest, StrictTablesRefuseWrongTypes) {
  ASSERT_OK(sqlite::Migrate(db(), migrations::All()));
  EXPECT_THAT(
      sqlite::Exec(db(), "INSERT INTO meta (key, value) VALUES ('x', 'text')",
                   "insert"),
      StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(sqlite::Exec(db(),
                           "INSERT INTO objects (kind, namespace, name, "
                           "revision, spec) VALUES ('a', '', NULL, 1, x'')",
                           "insert"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("NOT NULL")));
}

// 0003 keys pod templates by their workload's name; the templates 0002
// stored by uid move along (a template without a workload row has nothing
// to belong to and goes).
TEST_F(MigratorTest, PodTemplatesMoveToTheirWorkloadsName) {
  const std::vector<migrations::Migration>& all = migrations::All();
  ASSERT_GE(all.size(), 3u);
  ASSERT_OK(sqlite::Migrate(
      db(), std::vector<migrations::Migration>(all.begin(), all.begin() + 2)));
  ASSERT_OK(sqlite::Exec(
      db(),
      "INSERT INTO workloads (namespace, name, uid, queue_name, priority, "
      "creation_time_us, state, finished, revision, body) VALUES "
      "('ns', 'a', 'uid-a', 'lq', 0, 0, 'Pending', 0, 1, x'')",
      "insert workload"));
  ASSERT_OK(sqlite::Exec(db(),
                         "INSERT INTO pod_templates (workload_uid, pod_set, "
                         "template) VALUES ('uid-a', 1, '{\"a\":1}'), "
                         "('uid-gone', 0, '{}')",
                         "insert templates"));
  ASSERT_OK(sqlite::Migrate(db(), all));
  EXPECT_THAT(QueryText(db(),
                        "SELECT namespace || '/' || name || ' ' || pod_set || "
                        "' ' || workload_uid || ' ' || template FROM "
                        "pod_templates"),
              IsOkAndHolds("ns/a 1 uid-a {\"a\":1}"));
  EXPECT_THAT(QueryInt(db(), "SELECT COUNT(*) FROM pod_templates"),
              IsOkAndHolds(1));
}

TEST_F(MigratorTest, AppliesOnlyMigrationsNewerThanTheDatabase) {
  const std::vector<migrations::Migration> v1 = {
      {1, "0001_a", "CREATE TABLE a (x INTEGER NOT NULL) STRICT;"}};
  std::vector<migrations::Migration> v3 = v1;
  v3.push_back({2, "0002_b", "INSERT INTO a (x) VALUES (2);"});
  v3.push_back({3, "0003_c", "INSERT INTO a (x) VALUES (3);"});

  ASSERT_OK(sqlite::Migrate(db(), v1));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(1));
  // Re-applying 0001 would fail with "table a already exists".
  ASSERT_OK(sqlite::Migrate(db(), v3));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(3));
  EXPECT_THAT(QueryInt(db(), "SELECT group_concat(x, '') FROM a ORDER BY x"),
              IsOkAndHolds(23));
}

TEST_F(MigratorTest, FailedMigrationLeavesThePreviousVersion) {
  const std::vector<migrations::Migration> list = {
      {1, "0001_a", "CREATE TABLE a (x INTEGER NOT NULL) STRICT;"},
      {2, "0002_broken",
       "CREATE TABLE b (y INTEGER NOT NULL) STRICT;"
       "INSERT INTO missing_table VALUES (1);"},
      {3, "0003_c", "CREATE TABLE c (z INTEGER NOT NULL) STRICT;"},
  };
  EXPECT_THAT(sqlite::Migrate(db(), list),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("migration 0002_broken: no such table: "
                                 "missing_table")));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(1));
  // 0002's first statement was rolled back with the rest of it.
  EXPECT_THAT(QueryInt(db(),
                       "SELECT COUNT(*) FROM sqlite_schema WHERE "
                       "name IN ('b', 'c')"),
              IsOkAndHolds(0));
  EXPECT_EQ(sqlite3_get_autocommit(db()), 1) << "transaction left open";
}

TEST_F(MigratorTest, RefusesADatabaseNewerThanTheBinary) {
  const int newer = LatestVersion() + 4;
  ASSERT_OK(sqlite::Exec(db(),
                         absl::StrCat("PRAGMA user_version = ", newer).c_str(),
                         "set version"));
  EXPECT_THAT(sqlite::Migrate(db(), migrations::All()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       absl::StrCat("database schema version ", newer,
                                    " is newer than this kqd supports (",
                                    LatestVersion(), "); upgrade kqd")));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(newer));
}

TEST_F(MigratorTest, RefusesMisnumberedMigrations) {
  const std::vector<migrations::Migration> list = {{1, "0001_a", "SELECT 1;"},
                                                   {3, "0003_c", "SELECT 1;"}};
  EXPECT_THAT(sqlite::Migrate(db(), list),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("0003_c has version 3; expected 2")));
  EXPECT_THAT(sqlite::SchemaVersion(db()), IsOkAndHolds(0));
}

// ---------------------------------------------------------------------------
// Handles and transactions.

TEST(SqliteStatusTest, MapsResultCodes) {
  struct Case {
    int rc;
    absl::StatusCode want;
  };
  const Case cases[] = {
      {SQLITE_OK, absl::StatusCode::kOk},
      {SQLITE_DONE, absl::StatusCode::kOk},
      {SQLITE_ROW, absl::StatusCode::kOk},
      {SQLITE_BUSY, absl::StatusCode::kUnavailable},
      {SQLITE_BUSY_SNAPSHOT, absl::StatusCode::kUnavailable},
      {SQLITE_LOCKED, absl::StatusCode::kUnavailable},
      {SQLITE_CONSTRAINT_UNIQUE, absl::StatusCode::kAlreadyExists},
      {SQLITE_CONSTRAINT_PRIMARYKEY, absl::StatusCode::kAlreadyExists},
      {SQLITE_CONSTRAINT_NOTNULL, absl::StatusCode::kInternal},
      {SQLITE_CORRUPT, absl::StatusCode::kInternal},
      {SQLITE_IOERR_FSYNC, absl::StatusCode::kInternal},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rc);
    absl::Status status = sqlite::SqliteStatus(c.rc, nullptr, "write x");
    EXPECT_EQ(status.code(), c.want);
    if (!status.ok()) {
      EXPECT_THAT(std::string(status.message()), HasSubstr("write x: "));
    }
  }
}

TEST(SqliteStatusTest, DuplicateKeyIsAlreadyExists) {
  ASSERT_OK_AND_ASSIGN(DbHandle db, sqlite::OpenDatabase(":memory:"));
  ASSERT_OK(
      sqlite::Exec(db.get(), "CREATE TABLE t (k TEXT PRIMARY KEY)", "create"));
  ASSERT_OK(sqlite::Exec(db.get(), "INSERT INTO t VALUES ('a')", "insert"));
  EXPECT_THAT(sqlite::Exec(db.get(), "INSERT INTO t VALUES ('a')", "insert"),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("UNIQUE constraint failed: t.k")));
}

TEST(TransactionTest, RollsBackUnlessCommitted) {
  ASSERT_OK_AND_ASSIGN(DbHandle db, sqlite::OpenDatabase(":memory:"));
  ASSERT_OK(sqlite::Exec(db.get(), "CREATE TABLE t (x INTEGER)", "create"));
  ASSERT_OK_AND_ASSIGN(sqlite::TransactionStatements statements,
                       sqlite::TransactionStatements::Prepare(db.get()));
  {
    ASSERT_OK_AND_ASSIGN(sqlite::Transaction txn,
                         sqlite::Transaction::Begin(statements));
    ASSERT_OK(sqlite::Exec(db.get(), "INSERT INTO t VALUES (1)", "insert"));
  }
  EXPECT_THAT(QueryInt(db.get(), "SELECT COUNT(*) FROM t"), IsOkAndHolds(0));
  {
    ASSERT_OK_AND_ASSIGN(sqlite::Transaction txn,
                         sqlite::Transaction::Begin(statements));
    ASSERT_OK(sqlite::Exec(db.get(), "INSERT INTO t VALUES (2)", "insert"));
    ASSERT_OK(txn.Commit());
    EXPECT_THAT(txn.Commit(), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  EXPECT_THAT(QueryInt(db.get(), "SELECT SUM(x) FROM t"), IsOkAndHolds(2));
  EXPECT_EQ(sqlite3_get_autocommit(db.get()), 1);
}

// ---------------------------------------------------------------------------
// SqliteStore on a file.

class SqliteStoreFileTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<SqliteStore>> Open(
      SqliteOptions options = {}) {
    return SqliteStore::Open(path_, options);
  }

  // A second, raw connection to the same file.
  DbHandle RawConnection() {
    absl::StatusOr<DbHandle> db = sqlite::OpenDatabase(path_);
    EXPECT_OK(db.status());
    return db.ok() ? std::move(*db) : nullptr;
  }

  ScopedTempDir dir_{"kq_sqlite"};
  const std::string path_ = dir_.File("kq.db");
};

TEST_F(SqliteStoreFileTest, UsesWalAndTheLatestSchema) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  DbHandle raw = RawConnection();
  EXPECT_THAT(QueryText(raw.get(), "PRAGMA journal_mode"), IsOkAndHolds("wal"));
  EXPECT_THAT(sqlite::SchemaVersion(raw.get()), IsOkAndHolds(LatestVersion()));
}

TEST_F(SqliteStoreFileTest, DataSurvivesCloseAndReopen) {
  const std::vector<ConfigObject> objects = {
      NamespaceBuilder("ns").Revision(1).Build(),
      ResourceFlavorBuilder("default").Revision(1).Build(),
      ClusterQueueBuilder("cq")
          .Quota("default", "cpu", "10")
          .Revision(2)
          .Build(),
      LocalQueueBuilder("ns", "lq", "cq").Revision(1).Build(),
  };
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
    WriteBatch b1;
    b1.revision = 1;
    b1.upserted_objects = {objects[0], objects[1], objects[3]};
    b1.upserted_workloads = {Pending("a", 1), Pending("b", 1)};
    b1.events = {Added(objects[0]), Added(Pending("a", 1))};
    ASSERT_OK(store->Commit(b1));
    WriteBatch b2;
    b2.revision = 2;
    b2.upserted_objects = {objects[2]};
    b2.upserted_workloads = {Finished("b", 2)};
    b2.events = {Added(objects[2])};
    ASSERT_OK(store->Commit(b2));
  }

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  ASSERT_OK_AND_ASSIGN(LoadedState state, store->Load());
  EXPECT_EQ(state.revision, 2);
  EXPECT_EQ(state.objects, objects);
  EXPECT_THAT(state.active_workloads, ElementsAre(Pending("a", 1)));
  EXPECT_THAT(store->GetWorkload({"ns", "b"}),
              IsOkAndHolds(Optional(Finished("b", 2))));
  EXPECT_THAT(store->ListFinishedWorkloads("ns"),
              IsOkAndHolds(ElementsAre(Finished("b", 2))));
  ASSERT_OK_AND_ASSIGN(std::vector<Event> events, store->ReadEvents(0, 10));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1].object,
            (std::variant<ConfigObject, Workload>(Pending("a", 1))));
  EXPECT_EQ(events[2].revision, 2);
  // The revision is durable too: a stale batch is still refused.
  WriteBatch stale;
  stale.revision = 2;
  EXPECT_THAT(store->Commit(stale),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// Checkpoints run off the committing thread; the WAL stays bounded however
// fast commits come (a commit checkpoints itself past ~10,000 frames), and
// what was committed meanwhile is all there after a reopen.
TEST_F(SqliteStoreFileTest, WalStaysBoundedUnderSteadyCommits) {
  constexpr int kBatches = 4000;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
    for (int i = 1; i <= kBatches; ++i) {
      // As the engine does for every new workload: the read snapshot it
      // leaves open until the commit must not hold back the checkpoints.
      ASSERT_THAT(store->GetWorkload({"ns", absl::StrCat("w", i)}),
                  IsOkAndHolds(std::nullopt));
      WriteBatch batch;
      batch.revision = i;
      const std::string name = absl::StrCat("w", i);
      batch.upserted_workloads = {Pending(name, i)};
      batch.events = {Added(Pending(name, i))};
      ASSERT_OK(store->Commit(batch));
    }
    // Each commit appends a few 4 KiB frames; unchecked, 4,000 of them
    // would leave a WAL of tens of MiB.
    const auto wal_bytes = std::filesystem::file_size(path_ + "-wal");
    EXPECT_LE(wal_bytes, uint64_t{11000} * 4096 + 65536);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  ASSERT_OK_AND_ASSIGN(LoadedState state, store->Load());
  EXPECT_EQ(state.revision, kBatches);
  EXPECT_EQ(state.active_workloads.size(), size_t{kBatches});
}

// Reads share a snapshot until the next commit; what a commit wrote is
// what the reads after it see.
TEST_F(SqliteStoreFileTest, ReadsAfterACommitSeeIt) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  EXPECT_THAT(store->GetWorkload({"ns", "a"}), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store->ListFinishedWorkloads("ns"), IsOkAndHolds(IsEmpty()));
  WriteBatch first;
  first.revision = 1;
  first.upserted_workloads = {Pending("a", 1)};
  first.events = {Added(Pending("a", 1))};
  ASSERT_OK(store->Commit(first));
  EXPECT_THAT(store->GetWorkload({"ns", "a"}),
              IsOkAndHolds(Optional(Pending("a", 1))));
  EXPECT_THAT(store->ReadEvents(0, 10), IsOkAndHolds(SizeIs(1)));

  WriteBatch second;
  second.revision = 2;
  second.upserted_workloads = {Finished("a", 2)};
  second.events = {Added(Finished("a", 2))};
  ASSERT_OK(store->Commit(second));
  EXPECT_THAT(store->GetWorkload({"ns", "a"}),
              IsOkAndHolds(Optional(Finished("a", 2))));
  EXPECT_THAT(store->ListFinishedWorkloads("ns"),
              IsOkAndHolds(ElementsAre(Finished("a", 2))));
  EXPECT_THAT(store->ReadEvents(1, 10), IsOkAndHolds(SizeIs(1)));
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(1));
}

// The snapshot the store's reads leave open between commits blocks no
// other connection's writes (readers never do in WAL mode), and the
// store's next commit starts from the latest state, even after another
// connection changed the schema.
TEST_F(SqliteStoreFileTest, OpenReadsBlockNoOtherWriter) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  EXPECT_THAT(store->GetWorkload({"ns", "a"}), IsOkAndHolds(std::nullopt));
  DbHandle raw = RawConnection();
  ASSERT_OK(sqlite::Exec(raw.get(), "BEGIN IMMEDIATE", "lock"));
  ASSERT_OK(sqlite::Exec(raw.get(), "CREATE TABLE operator_notes (note TEXT)",
                         "create"));
  ASSERT_OK(sqlite::Exec(raw.get(), "COMMIT", "unlock"));

  WriteBatch batch;
  batch.revision = 1;
  batch.upserted_workloads = {Pending("a", 1)};
  ASSERT_OK(store->Commit(batch));
  EXPECT_THAT(store->GetWorkload({"ns", "a"}),
              IsOkAndHolds(Optional(Pending("a", 1))));
  EXPECT_THAT(QueryInt(raw.get(), "SELECT COUNT(*) FROM workloads"),
              IsOkAndHolds(1));
}

// The checkpointer copies committed frames back into the database file on
// its own thread, long before the WAL reaches the size at which a commit
// would do it. (Its connection once never read the database, never found
// the WAL, and every checkpoint through it did nothing: the commits did it
// all, ~20 ms each, every 10,000 frames.)
TEST_F(SqliteStoreFileTest, CheckpointerCopiesTheWalBackOnItsOwn) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  const auto db_bytes_at_open = std::filesystem::file_size(path_);
  // Each commit appends a few frames: well past the checkpointer's 1,000,
  // well short of the 10,000 at which a commit checkpoints.
  for (int i = 1; i <= 400; ++i) {
    WriteBatch batch;
    batch.revision = i;
    batch.upserted_workloads = {Pending(absl::StrCat("w", i), i)};
    ASSERT_OK(store->Commit(batch));
  }
  DbHandle raw = RawConnection();
  ASSERT_OK_AND_ASSIGN(int64_t page_size,
                       QueryInt(raw.get(), "PRAGMA page_size"));
  const auto wal_frames = (std::filesystem::file_size(path_ + "-wal") - 32) /
                          static_cast<uint64_t>(page_size + 24);
  // At least the checkpointer's 1,000: once it has copied them back, the
  // writer starts the WAL over and the file stops growing there.
  ASSERT_GE(wal_frames, 1000u);
  ASSERT_LT(wal_frames, 10000u);
  // The copy is asynchronous: wait for it, with a deadline far beyond it.
  for (int i = 0; i < 1000; ++i) {
    if (std::filesystem::file_size(path_) > db_bytes_at_open) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(std::filesystem::file_size(path_), db_bytes_at_open);
}

TEST_F(SqliteStoreFileTest, RetentionCountsEventsStoredBeforeReopen) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
    for (int64_t revision = 1; revision <= 4; ++revision) {
      WriteBatch batch;
      batch.revision = revision;
      batch.events = {Added(ConfigObject(
          NamespaceBuilder(absl::StrCat("ns", revision)).Build()))};
      ASSERT_OK(store->Commit(batch));
    }
  }
  SqliteOptions options;
  options.event_retention = 3;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open(options));
  WriteBatch batch;
  batch.revision = 5;
  batch.events = {Added(ConfigObject(NamespaceBuilder("ns5").Build()))};
  ASSERT_OK(store->Commit(batch));
  // 5 events, 3 kept: revisions 1 and 2 pruned.
  EXPECT_THAT(store->OldestEventRevision(), IsOkAndHolds(3));
  DbHandle raw = RawConnection();
  EXPECT_THAT(QueryInt(raw.get(), "SELECT COUNT(*) FROM events"),
              IsOkAndHolds(3));
}

TEST_F(SqliteStoreFileTest, RefusesADatabaseNewerThanTheBinary) {
  { ASSERT_OK(Open().status()); }
  {
    DbHandle raw = RawConnection();
    ASSERT_OK(sqlite::Exec(
        raw.get(),
        absl::StrCat("PRAGMA user_version = ", LatestVersion() + 1).c_str(),
        "set version"));
  }
  EXPECT_THAT(
      Open(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               absl::StrCat("database schema version ", LatestVersion() + 1,
                            " is newer than this kqd "
                            "supports (",
                            LatestVersion(), "); upgrade kqd")));
}

TEST_F(SqliteStoreFileTest, OpenFailsInAMissingDirectory) {
  EXPECT_THAT(SqliteStore::Open(dir_.File("missing/kq.db"), SqliteOptions{}),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("unable to open database file")));
}

TEST_F(SqliteStoreFileTest, FailedCommitLeavesTheDatabaseUnchanged) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  WriteBatch first;
  first.revision = 1;
  first.upserted_objects = {NamespaceBuilder("ns").Build()};
  first.upserted_workloads = {Pending("a", 1)};
  first.events = {Added(ConfigObject(NamespaceBuilder("ns").Build()))};
  ASSERT_OK(store->Commit(first));
  ASSERT_OK_AND_ASSIGN(LoadedState before, store->Load());

  // Make the last write of the next batch fail, after its other rows are
  // written: only the transaction keeps them out.
  DbHandle raw = RawConnection();
  ASSERT_OK(sqlite::Exec(raw.get(),
                         "CREATE TRIGGER fail_boom BEFORE INSERT ON events "
                         "WHEN NEW.name = 'boom' "
                         "BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
                         "create trigger"));
  WriteBatch second;
  second.revision = 2;
  second.upserted_objects = {ClusterQueueBuilder("cq").Build()};
  second.deleted_objects = {{.kind = ObjectKind::kNamespace, .name = "ns"}};
  second.upserted_workloads = {Pending("b", 2), Finished("a", 2)};
  second.events = {Added(ConfigObject(ClusterQueueBuilder("cq").Build())),
                   Added(ConfigObject(NamespaceBuilder("boom").Build()))};
  EXPECT_THAT(store->Commit(second), StatusIs(absl::StatusCode::kInternal,
                                              HasSubstr("injected failure")));

  ASSERT_OK_AND_ASSIGN(LoadedState after, store->Load());
  EXPECT_EQ(after.revision, before.revision);
  EXPECT_EQ(after.objects, before.objects);
  EXPECT_EQ(after.active_workloads, before.active_workloads);
  EXPECT_THAT(store->ListFinishedWorkloads(""), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(store->ReadEvents(0, 10),
              IsOkAndHolds(ElementsAre(::testing::Field(&Event::revision, 1))));
  EXPECT_THAT(QueryInt(raw.get(), "SELECT value FROM meta"), IsOkAndHolds(1));

  // The store is still usable, at the same revision.
  ASSERT_OK(sqlite::Exec(raw.get(), "DROP TRIGGER fail_boom", "drop trigger"));
  ASSERT_OK(store->Commit(second));
  ASSERT_OK_AND_ASSIGN(after, store->Load());
  EXPECT_EQ(after.revision, 2);
}

TEST_F(SqliteStoreFileTest, LockedDatabaseIsUnavailable) {
  SqliteOptions options;
  options.busy_timeout = absl::Milliseconds(20);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open(options));
  DbHandle raw = RawConnection();
  ASSERT_OK(sqlite::Exec(raw.get(), "BEGIN IMMEDIATE", "lock"));

  WriteBatch batch;
  batch.revision = 1;
  batch.upserted_objects = {NamespaceBuilder("ns").Build()};
  EXPECT_THAT(store->Commit(batch), StatusIs(absl::StatusCode::kUnavailable,
                                             HasSubstr("database is locked")));

  ASSERT_OK(sqlite::Exec(raw.get(), "ROLLBACK", "unlock"));
  ASSERT_OK(store->Commit(batch));
  EXPECT_THAT(QueryInt(raw.get(), "SELECT COUNT(*) FROM objects"),
              IsOkAndHolds(1));
}

TEST_F(SqliteStoreFileTest, WorkloadColumnsMirrorTheWorkload) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  WriteBatch batch;
  batch.revision = 3;
  batch.upserted_workloads = {Pending("a", 3), Finished("b", 3)};
  ASSERT_OK(store->Commit(batch));

  DbHandle raw = RawConnection();
  EXPECT_THAT(
      QueryText(raw.get(),
                "SELECT uid || ',' || queue_name || ',' || priority "
                "|| ',' || creation_time_us || ',' || state || ',' "
                "|| finished || ',' || revision FROM workloads "
                "WHERE name = 'a'"),
      IsOkAndHolds(absl::StrCat("uid-a,lq,7,", absl::ToUnixMicros(kCreated),
                                ",Pending,0,3")));
  EXPECT_THAT(QueryText(raw.get(),
                        "SELECT state || ',' || finished FROM "
                        "workloads WHERE name = 'b'"),
              IsOkAndHolds("Finished,1"));
}

TEST_F(SqliteStoreFileTest, CorruptRowsAreInternal) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<SqliteStore> store, Open());
  WriteBatch batch;
  batch.revision = 1;
  batch.upserted_objects = {ClusterQueueBuilder("cq").Build()};
  batch.upserted_workloads = {Pending("a", 1)};
  ASSERT_OK(store->Commit(batch));

  DbHandle raw = RawConnection();
  ASSERT_OK(sqlite::Exec(raw.get(), "UPDATE workloads SET body = x'ffff'",
                         "corrupt"));
  EXPECT_THAT(store->GetWorkload({"ns", "a"}),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("corrupt row workloads ns/a")));
  ASSERT_OK(
      sqlite::Exec(raw.get(), "UPDATE objects SET kind = 'Cohort'", "corrupt"));
  EXPECT_THAT(store->Load(), StatusIs(absl::StatusCode::kInternal,
                                      HasSubstr("holds a ClusterQueue")));
}

// Start-up must not scan finished history: the unfinished workloads are read
// through workloads_by_finished, already in (namespace, name) order.
// The query plan SQLite picks for `sql`, one line per step.
std::string QueryPlan(const char* sql) {
  absl::StatusOr<DbHandle> db = sqlite::OpenDatabase(":memory:");
  EXPECT_OK(db.status());
  if (!db.ok()) return "";
  EXPECT_OK(sqlite::Migrate(db->get(), migrations::All()));
  absl::StatusOr<sqlite::StmtHandle> stmt =
      sqlite::Prepare(db->get(), absl::StrCat("EXPLAIN QUERY PLAN ", sql));
  EXPECT_OK(stmt.status());
  if (!stmt.ok()) return "";
  sqlite::Query query(db->get(), stmt->get(), "explain");
  std::string plan;
  while (true) {
    absl::StatusOr<bool> row = query.Step();
    EXPECT_OK(row.status());
    if (!row.ok() || !*row) break;
    absl::StrAppend(&plan, query.ColumnText(3), "\n");
  }
  return plan;
}

TEST(SqliteQueryPlanTest, ActiveWorkloadsAreReadThroughTheIndex) {
  const std::string plan = QueryPlan(sqlite::kSelectActiveWorkloads);
  EXPECT_THAT(plan, HasSubstr("SEARCH workloads USING INDEX "
                              "workloads_by_finished (finished=?)"));
  EXPECT_THAT(plan, Not(HasSubstr("TEMP B-TREE")));
  EXPECT_THAT(plan, Not(HasSubstr("SCAN")));
}

// Templates are read and deleted by key, never by scanning the table.
TEST(SqliteQueryPlanTest, TemplatesAreFoundByKey) {
  for (const char* sql :
       {sqlite::kSelectPodTemplates, sqlite::kDeleteWorkloadPodTemplates}) {
    SCOPED_TRACE(sql);
    const std::string plan = QueryPlan(sql);
    EXPECT_THAT(plan, HasSubstr("SEARCH pod_templates USING PRIMARY KEY "
                                "(namespace=? AND name=?)"));
    EXPECT_THAT(plan, Not(HasSubstr("TEMP B-TREE")));
    EXPECT_THAT(plan, Not(HasSubstr("SCAN")));
  }
}

}  // namespace
}  // namespace kq::store
