#include "server/store/sqlite/sqlite_store.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"
#include "migrations/migrations.h"
#include "server/codec/codec.h"
#include "server/store/sqlite/migrator.h"
#include "server/store/sqlite/statements.h"

namespace kq::store {

using sqlite::Query;
using sqlite::StmtHandle;

struct SqliteStore::Statements {
  StmtHandle upsert_object;
  StmtHandle delete_object;
  StmtHandle select_objects;
  StmtHandle upsert_workload;
  StmtHandle delete_workload;
  StmtHandle select_workload;
  StmtHandle select_active_workloads;
  StmtHandle select_finished_workloads;
  StmtHandle select_finished_workloads_in_namespace;
  StmtHandle insert_pod_template;
  StmtHandle select_pod_templates;
  StmtHandle delete_workload_pod_templates;
  StmtHandle insert_event;
  StmtHandle select_events_after;
  StmtHandle select_oldest_event_revision;
  StmtHandle count_events;
  StmtHandle select_event_revision_at;
  StmtHandle delete_events_through;
  StmtHandle select_revision;
  StmtHandle update_revision;
  StmtHandle begin_reads;
  StmtHandle end_reads;
};

namespace {

// How long a connection waits for another one's lock (sqlite3 takes whole
// milliseconds in an int).
void SetBusyTimeout(sqlite3* db, absl::Duration timeout) {
  sqlite3_busy_timeout(db, static_cast<int>(absl::ToInt64Milliseconds(
                               std::min(timeout, absl::Hours(24)))));
}

// SQLite's own automatic checkpoint threshold (PRAGMA wal_autocheckpoint):
// the checkpointer runs once this many frames were added since a run was
// last asked for.
constexpr int kCheckpointFrames = 1000;
// The writer starts the WAL over only when, as its transaction begins, every
// frame has been copied back, which a steady stream of commits seldom lets
// the checkpointer finish in time for. Beyond this many frames (~40 MiB) the
// committing thread copies the rest itself, so the next commit starts the
// WAL over.
constexpr int kMaxWalFrames = 10000;

}  // namespace

class SqliteStore::Checkpointer {
 public:
  static absl::StatusOr<std::unique_ptr<Checkpointer>> Start(
      const std::string& path, absl::Duration busy_timeout) {
    KQ_ASSIGN_OR_RETURN(sqlite::DbHandle db, sqlite::OpenDatabase(path));
    SetBusyTimeout(db.get(), busy_timeout);
    // A connection finds the WAL in its first read; until then a checkpoint
    // through it is a no-op that reports success (and -1 frames).
    KQ_RETURN_IF_ERROR(sqlite::Exec(
        db.get(), "SELECT 1 FROM sqlite_schema LIMIT 1", "open the WAL"));
    std::unique_ptr<Checkpointer> checkpointer(new Checkpointer(std::move(db)));
    checkpointer->thread_ =
        std::thread([c = checkpointer.get()] { c->Loop(); });
    return checkpointer;
  }

  ~Checkpointer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  // The writer's WAL hook: runs in every commit with the WAL's size.
  static int OnCommit(void* self, sqlite3* /*db*/, const char* /*name*/,
                      int frames) {
    auto* checkpointer = static_cast<Checkpointer*>(self);
    checkpointer->wal_frames_.store(frames, std::memory_order_relaxed);
    bool due = false;
    {
      std::lock_guard<std::mutex> lock(checkpointer->mu_);
      // Fewer frames than when a run was last asked for: the WAL was
      // started over.
      if (frames < checkpointer->frames_when_last_due_) {
        checkpointer->frames_when_last_due_ = 0;
      }
      due = frames - checkpointer->frames_when_last_due_ >= kCheckpointFrames;
      if (due) {
        checkpointer->due_ = true;
        checkpointer->frames_when_last_due_ = frames;
      }
    }
    if (due) checkpointer->wake_.notify_one();
    return SQLITE_OK;
  }

  // WAL frames after the last commit.
  int wal_frames() const { return wal_frames_.load(std::memory_order_relaxed); }

  // Copies committed frames back through `db`: the checkpointer's own
  // connection, or the committing one catching up. Waits for a run under
  // way through the other to end, as SQLite refuses a second checkpoint at
  // once.
  void Checkpoint(sqlite3* db) {
    std::lock_guard<std::mutex> running(run_mu_);
    // PASSIVE: copies what no reader still needs, never waits for the
    // writer or a reader.
    const int rc = sqlite3_wal_checkpoint_v2(
        db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      spdlog::warn("WAL checkpoint failed: {}", sqlite3_errmsg(db));
    }
  }

 private:
  explicit Checkpointer(sqlite::DbHandle db) : db_(std::move(db)) {}

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      wake_.wait(lock, [this] { return due_ || stopping_; });
      if (stopping_) return;
      due_ = false;
      lock.unlock();
      Checkpoint(db_.get());
      lock.lock();
    }
  }

  sqlite::DbHandle db_;
  std::atomic<int> wal_frames_{0};
  // Held while a checkpoint runs, through either connection.
  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable wake_;
  // The WAL's size when a run was last asked for.
  int frames_when_last_due_ = 0;
  bool due_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

namespace {

const char* EventTypeName(Event::Type type) {
  switch (type) {
    case Event::Type::kAdded:
      return "ADDED";
    case Event::Type::kModified:
      return "MODIFIED";
    case Event::Type::kDeleted:
      return "DELETED";
  }
  return "MODIFIED";
}

bool ParseEventType(const std::string& text, Event::Type* type) {
  if (text == "ADDED") {
    *type = Event::Type::kAdded;
  } else if (text == "MODIFIED") {
    *type = Event::Type::kModified;
  } else if (text == "DELETED") {
    *type = Event::Type::kDeleted;
  } else {
    return false;
  }
  return true;
}

absl::StatusOr<std::string> Serialize(const google::protobuf::Message& proto,
                                      absl::string_view what) {
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat("cannot serialize ", what));
  }
  return bytes;
}

// Decodes a stored object; any failure means the row is corrupt.
absl::StatusOr<ConfigObject> DecodeObject(const std::string& bytes,
                                          absl::string_view row) {
  v1::ConfigObject proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::InternalError(
        absl::StrCat("corrupt row ", row, ": not a kq.v1.ConfigObject"));
  }
  absl::StatusOr<ConfigObject> object = codec::FromProto(proto);
  if (!object.ok()) {
    return absl::InternalError(
        absl::StrCat("corrupt row ", row, ": ", object.status().message()));
  }
  return object;
}

absl::StatusOr<Workload> DecodeWorkload(const std::string& bytes,
                                        absl::string_view row) {
  v1::Workload proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::InternalError(
        absl::StrCat("corrupt row ", row, ": not a kq.v1.Workload"));
  }
  absl::StatusOr<Workload> workload = codec::FromProto(proto);
  if (!workload.ok()) {
    return absl::InternalError(
        absl::StrCat("corrupt row ", row, ": ", workload.status().message()));
  }
  return workload;
}

// Reads the first column of the single row `stmt` returns as an integer,
// NULL as 0.
absl::StatusOr<int64_t> ReadInt(sqlite3* db, sqlite3_stmt* stmt,
                                absl::string_view what) {
  Query query(db, stmt, what);
  KQ_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return absl::InternalError(absl::StrCat(what, ": no row"));
  return query.ColumnIsNull(0) ? 0 : query.ColumnInt64(0);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    const std::string& path, const SqliteOptions& options) {
  KQ_ASSIGN_OR_RETURN(sqlite::DbHandle db, sqlite::OpenDatabase(path));
  SetBusyTimeout(db.get(), options.busy_timeout);

  // journal_mode answers with the mode in force: "wal", or "memory" for an
  // in-memory database, which has no journal file to switch.
  {
    KQ_ASSIGN_OR_RETURN(
        StmtHandle stmt,
        sqlite::Prepare(db.get(), sqlite::kPragmaJournalModeWal));
    Query query(db.get(), stmt.get(), "set journal_mode");
    KQ_ASSIGN_OR_RETURN(bool row, query.Step());
    const std::string mode = row ? query.ColumnText(0) : "";
    if (mode != "wal" && mode != "memory") {
      return absl::InternalError(
          absl::StrCat("cannot put \"", path,
                       "\" in WAL mode (journal_mode is \"", mode, "\")"));
    }
  }
  KQ_RETURN_IF_ERROR(sqlite::Exec(db.get(),
                                  options.synchronous_full
                                      ? sqlite::kPragmaSynchronousFull
                                      : sqlite::kPragmaSynchronousNormal,
                                  "set synchronous"));
  KQ_RETURN_IF_ERROR(
      sqlite::Exec(db.get(), sqlite::kPragmaForeignKeys, "set foreign_keys"));
  KQ_RETURN_IF_ERROR(sqlite::Migrate(db.get(), migrations::All()));

  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db), options));
  KQ_RETURN_IF_ERROR(store->Init());
  // An in-memory database has no WAL to checkpoint (nor can a second
  // connection reach it).
  if (path != ":memory:" && !absl::StrContains(path, "mode=memory")) {
    KQ_ASSIGN_OR_RETURN(store->checkpointer_,
                        Checkpointer::Start(path, options.busy_timeout));
    // Replaces SQLite's automatic checkpoint in the committing thread.
    sqlite3_wal_hook(store->db_.get(), &Checkpointer::OnCommit,
                     store->checkpointer_.get());
  }
  return store;
}

SqliteStore::SqliteStore(sqlite::DbHandle db, const SqliteOptions& options)
    : db_(std::move(db)),
      options_(options),
      statements_(std::make_unique<Statements>()) {}

SqliteStore::~SqliteStore() {
  if (absl::Status ended = EndReads(); !ended.ok()) {
    spdlog::warn("sqlite: {}", ended.ToString());
  }
  if (checkpointer_ != nullptr) {
    sqlite3_wal_hook(db_.get(), nullptr, nullptr);
    checkpointer_.reset();
  }
}

absl::Status SqliteStore::Init() {
  sqlite3* db = db_.get();
  Statements& s = *statements_;
  const struct {
    StmtHandle* stmt;
    const char* sql;
  } kPrepared[] = {
      {&s.upsert_object, sqlite::kUpsertObject},
      {&s.delete_object, sqlite::kDeleteObject},
      {&s.select_objects, sqlite::kSelectObjects},
      {&s.upsert_workload, sqlite::kUpsertWorkload},
      {&s.delete_workload, sqlite::kDeleteWorkload},
      {&s.select_workload, sqlite::kSelectWorkload},
      {&s.select_active_workloads, sqlite::kSelectActiveWorkloads},
      {&s.select_finished_workloads, sqlite::kSelectFinishedWorkloads},
      {&s.select_finished_workloads_in_namespace,
       sqlite::kSelectFinishedWorkloadsInNamespace},
      {&s.insert_pod_template, sqlite::kInsertPodTemplate},
      {&s.select_pod_templates, sqlite::kSelectPodTemplates},
      {&s.delete_workload_pod_templates, sqlite::kDeleteWorkloadPodTemplates},
      {&s.insert_event, sqlite::kInsertEvent},
      {&s.select_events_after, sqlite::kSelectEventsAfter},
      {&s.select_oldest_event_revision, sqlite::kSelectOldestEventRevision},
      {&s.count_events, sqlite::kCountEvents},
      {&s.select_event_revision_at, sqlite::kSelectEventRevisionAt},
      {&s.delete_events_through, sqlite::kDeleteEventsThrough},
      {&s.select_revision, sqlite::kSelectRevision},
      {&s.update_revision, sqlite::kUpdateRevision},
      {&s.begin_reads, "BEGIN DEFERRED"},
      {&s.end_reads, "COMMIT"},
  };
  for (const auto& p : kPrepared) {
    KQ_ASSIGN_OR_RETURN(*p.stmt, sqlite::Prepare(db, p.sql));
  }
  KQ_ASSIGN_OR_RETURN(sqlite::TransactionStatements txn,
                      sqlite::TransactionStatements::Prepare(db));
  transaction_statements_.emplace(std::move(txn));

  KQ_ASSIGN_OR_RETURN(revision_,
                      ReadInt(db, s.select_revision.get(), "read revision"));
  KQ_ASSIGN_OR_RETURN(event_count_,
                      ReadInt(db, s.count_events.get(), "count events"));
  return absl::OkStatus();
}

absl::StatusOr<LoadedState> SqliteStore::Load() {
  // Load starts kqd over from what is stored: the latest of it.
  KQ_RETURN_IF_ERROR(EndReads());
  sqlite3* db = db_.get();
  LoadedState state;
  state.revision = revision_;
  {
    Query query(db, statements_->select_objects.get(), "read objects");
    while (true) {
      KQ_ASSIGN_OR_RETURN(bool row, query.Step());
      if (!row) break;
      const std::string kind = query.ColumnText(0);
      const std::string row_name = absl::StrCat(
          "objects ", kind, " ", query.ColumnText(1), "/", query.ColumnText(2));
      KQ_ASSIGN_OR_RETURN(ConfigObject object,
                          DecodeObject(query.ColumnBlob(3), row_name));
      if (kind != KindName(KindOf(object))) {
        return absl::InternalError(absl::StrCat(
            "corrupt row ", row_name, ": holds a ", KindName(KindOf(object))));
      }
      state.objects.push_back(std::move(object));
    }
  }
  // The primary key sorts kinds by name; callers get ObjectKey order, in
  // which namespaces and flavors come before the queues that use them.
  std::sort(state.objects.begin(), state.objects.end(),
            [](const ConfigObject& a, const ConfigObject& b) {
              return KeyOf(a) < KeyOf(b);
            });
  KQ_ASSIGN_OR_RETURN(state.active_workloads,
                      ReadWorkloads(statements_->select_active_workloads.get(),
                                    "read active workloads", nullptr,
                                    /*with_templates=*/false));
  return state;
}

absl::StatusOr<std::vector<Workload>> SqliteStore::ReadWorkloads(
    sqlite3_stmt* stmt, const char* what, const std::string* ns,
    bool with_templates) {
  Query query(db_.get(), stmt, what);
  if (ns != nullptr) query.Bind(*ns);
  // Rows are read here and decoded (protobuf, then core types) on a second
  // thread, chunk by chunk, so that a start-up read of a million rows uses
  // both cores. Chunks keep their order.
  struct Row {
    std::string namespace_name;
    std::string name;
    std::string body;
  };
  constexpr size_t kChunkRows = 4096;
  constexpr size_t kMaxChunksQueued = 8;
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::vector<Row>> chunks;
  bool reading_done = false;
  std::vector<Workload> out;
  absl::Status decode_status;
  std::thread decoder([&] {
    while (true) {
      std::vector<Row> chunk;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return !chunks.empty() || reading_done; });
        if (chunks.empty()) return;
        chunk = std::move(chunks.front());
        chunks.pop_front();
      }
      changed.notify_all();
      for (Row& row : chunk) {
        // After a corrupt row the read fails: decoding the rest is waste.
        // (decode_status is this thread's until the join.)
        if (!decode_status.ok()) break;
        absl::StatusOr<Workload> workload = DecodeWorkload(
            row.body,
            absl::StrCat("workloads ", row.namespace_name, "/", row.name));
        if (!workload.ok()) {
          decode_status = workload.status();
          break;
        }
        out.push_back(*std::move(workload));
      }
    }
  });
  absl::Status read_status;
  std::vector<Row> chunk;
  auto hand_over = [&] {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return chunks.size() < kMaxChunksQueued; });
    chunks.push_back(std::move(chunk));
    chunk.clear();
    lock.unlock();
    changed.notify_all();
  };
  while (true) {
    absl::StatusOr<bool> row = query.Step();
    if (!row.ok()) {
      read_status = row.status();
      break;
    }
    if (!*row) break;
    chunk.push_back(
        {query.ColumnText(0), query.ColumnText(1), query.ColumnBlob(2)});
    if (chunk.size() == kChunkRows) hand_over();
  }
  if (!chunk.empty()) hand_over();
  {
    std::lock_guard<std::mutex> lock(mu);
    reading_done = true;
  }
  changed.notify_all();
  decoder.join();
  KQ_RETURN_IF_ERROR(read_status);
  KQ_RETURN_IF_ERROR(decode_status);
  if (with_templates) {
    for (Workload& workload : out) {
      KQ_RETURN_IF_ERROR(AttachPodTemplates(workload));
    }
  }
  return out;
}

absl::Status SqliteStore::Commit(const WriteBatch& batch) {
  if (batch.revision <= revision_) {
    return absl::FailedPreconditionError(
        absl::StrCat("batch revision ", batch.revision,
                     " is not greater than the store's revision ", revision_));
  }
  KQ_RETURN_IF_ERROR(batch.CheckShape());
  KQ_RETURN_IF_ERROR(EndReads());
  // Every write below happens inside `txn`; any early return rolls all of
  // it back, so the batch applies entirely or not at all.
  KQ_ASSIGN_OR_RETURN(sqlite::Transaction txn,
                      sqlite::Transaction::Begin(*transaction_statements_));
  KQ_RETURN_IF_ERROR(WriteRows(batch));
  const int64_t event_count =
      event_count_ +
      static_cast<int64_t>(batch.events.size() +
                           batch.upserted_workload_events.size());
  KQ_ASSIGN_OR_RETURN(int64_t pruned, PruneEvents(event_count, batch.revision));
  KQ_RETURN_IF_ERROR(txn.Commit());
  revision_ = batch.revision;
  event_count_ = event_count - pruned;
  if (checkpointer_ != nullptr &&
      checkpointer_->wal_frames() >= kMaxWalFrames) {
    // Best effort, as SQLite's automatic checkpoint: the batch is committed.
    checkpointer_->Checkpoint(db_.get());
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::WriteRows(const WriteBatch& batch) {
  sqlite3* db = db_.get();
  Statements& s = *statements_;
  for (const ConfigObject& object : batch.upserted_objects) {
    const ObjectMeta& meta = MetaOf(object);
    KQ_ASSIGN_OR_RETURN(std::string spec,
                        Serialize(codec::ToProto(object), "object"));
    Query query(db, s.upsert_object.get(), "write object");
    query.Bind(KindName(KindOf(object)))
        .Bind(meta.namespace_name)
        .Bind(meta.name)
        .Bind(meta.revision)
        .BindBlob(spec);
    KQ_RETURN_IF_ERROR(query.Run());
  }
  for (const ObjectKey& key : batch.deleted_objects) {
    Query query(db, s.delete_object.get(), "delete object");
    query.Bind(KindName(key.kind)).Bind(key.namespace_name).Bind(key.name);
    KQ_RETURN_IF_ERROR(query.Run());
  }
  // With upserted_workload_events, a workload's change is both its row and
  // its event: its body is serialized once for both.
  std::vector<std::string> event_bodies;
  for (const Workload& workload : batch.upserted_workloads) {
    const WorkloadState state = StateOf(workload);
    KQ_ASSIGN_OR_RETURN(std::string body,
                        Serialize(codec::ToStoredProto(workload), "workload"));
    Query query(db, s.upsert_workload.get(), "write workload");
    query.BindBorrowed(workload.meta.namespace_name)
        .BindBorrowed(workload.meta.name)
        .Bind(workload.meta.uid.str())
        .BindBorrowed(workload.queue_name)
        .Bind(int64_t{workload.priority})
        .Bind(absl::ToUnixMicros(workload.meta.creation_timestamp))
        .BindBorrowed(StateName(state))
        .Bind(int64_t{state == WorkloadState::kFinished ? 1 : 0})
        .Bind(workload.meta.revision)
        .BindBlobBorrowed(body);
    KQ_RETURN_IF_ERROR(query.Run());
    if (!batch.upserted_workload_events.empty()) {
      event_bodies.push_back(std::move(body));
    }
  }
  for (const NamespacedName& key : batch.deleted_workloads) {
    Query templates(db, s.delete_workload_pod_templates.get(),
                    "delete pod templates");
    templates.Bind(key.first).Bind(key.second);
    KQ_RETURN_IF_ERROR(templates.Run());
    Query query(db, s.delete_workload.get(), "delete workload");
    query.Bind(key.first).Bind(key.second);
    KQ_RETURN_IF_ERROR(query.Run());
  }
  for (const PodTemplate& t : batch.added_templates) {
    Query query(db, s.insert_pod_template.get(), "write pod template");
    query.BindBorrowed(t.workload.first)
        .BindBorrowed(t.workload.second)
        .Bind(int64_t{t.pod_set})
        .BindBorrowed(t.workload_uid)
        .BindBorrowed(t.template_json);
    KQ_RETURN_IF_ERROR(query.Run());
  }
  int64_t seq = 0;
  auto write_event = [&](Event::Type type, const char* kind,
                         const ObjectMeta& meta,
                         const std::string& body) -> absl::Status {
    Query query(db, s.insert_event.get(), "write event");
    query.Bind(batch.revision)
        .Bind(seq++)
        .BindBorrowed(EventTypeName(type))
        .BindBorrowed(kind)
        .BindBorrowed(meta.namespace_name)
        .BindBorrowed(meta.name)
        .BindBlobBorrowed(body);
    return query.Run();
  };
  for (const Event& event : batch.events) {
    std::string body;
    if (const auto* workload = std::get_if<Workload>(&event.object)) {
      KQ_ASSIGN_OR_RETURN(body,
                          Serialize(codec::ToStoredProto(*workload), "event"));
      KQ_RETURN_IF_ERROR(write_event(
          event.type, KindName(ObjectKind::kWorkload), workload->meta, body));
    } else {
      const ConfigObject& object = std::get<ConfigObject>(event.object);
      KQ_ASSIGN_OR_RETURN(body, Serialize(codec::ToProto(object), "event"));
      KQ_RETURN_IF_ERROR(write_event(event.type, KindName(KindOf(object)),
                                     MetaOf(object), body));
    }
  }
  for (size_t i = 0; i < event_bodies.size(); ++i) {
    KQ_RETURN_IF_ERROR(write_event(
        batch.upserted_workload_events[i], KindName(ObjectKind::kWorkload),
        batch.upserted_workloads[i].meta, event_bodies[i]));
  }
  Query query(db, s.update_revision.get(), "write revision");
  query.Bind(batch.revision);
  return query.Run();
}

absl::StatusOr<int64_t> SqliteStore::PruneEvents(int64_t event_count,
                                                 int64_t newest_revision) {
  const int64_t retention = static_cast<int64_t>(options_.event_retention);
  // Only a batch with events can push the log past the retention; the check
  // on the count alone would prune a newest revision that exceeds it alone.
  if (event_count <= retention || event_count == event_count_) return 0;
  // Drop the excess, and with it the rest of the revision the excess ends
  // in: a half-kept revision would make resuming from before it lose events.
  // The newest revision is always kept whole.
  sqlite3* db = db_.get();
  int64_t cutoff;
  {
    Query query(db, statements_->select_event_revision_at.get(),
                "find prune cutoff");
    query.Bind(event_count - retention - 1);
    KQ_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) {
      return absl::InternalError(absl::StrCat(
          "events table holds fewer than the ", event_count, " rows counted"));
    }
    cutoff = std::min(query.ColumnInt64(0), newest_revision - 1);
  }
  Query query(db, statements_->delete_events_through.get(), "prune events");
  query.Bind(cutoff);
  KQ_RETURN_IF_ERROR(query.Run());
  return sqlite3_changes64(db);
}

absl::Status SqliteStore::BeginReads() {
  // Inside Commit's transaction, reads are its own.
  if (reading_ || !sqlite3_get_autocommit(db_.get())) return absl::OkStatus();
  KQ_RETURN_IF_ERROR(
      Query(db_.get(), statements_->begin_reads.get(), "begin reads").Run());
  reading_ = true;
  return absl::OkStatus();
}

absl::Status SqliteStore::EndReads() {
  if (!reading_) return absl::OkStatus();
  KQ_RETURN_IF_ERROR(
      Query(db_.get(), statements_->end_reads.get(), "end reads").Run());
  reading_ = false;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Workload>> SqliteStore::GetWorkload(
    const NamespacedName& key) {
  KQ_RETURN_IF_ERROR(BeginReads());
  Query query(db_.get(), statements_->select_workload.get(), "read workload");
  query.Bind(key.first).Bind(key.second);
  KQ_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(
      Workload workload,
      DecodeWorkload(query.ColumnBlob(2),
                     absl::StrCat("workloads ", key.first, "/", key.second)));
  KQ_RETURN_IF_ERROR(AttachPodTemplates(workload));
  return workload;
}

absl::StatusOr<std::vector<Workload>> SqliteStore::ListFinishedWorkloads(
    const std::string& namespace_name) {
  KQ_RETURN_IF_ERROR(BeginReads());
  if (namespace_name.empty()) {
    return ReadWorkloads(statements_->select_finished_workloads.get(),
                         "list finished workloads", nullptr,
                         /*with_templates=*/true);
  }
  return ReadWorkloads(
      statements_->select_finished_workloads_in_namespace.get(),
      "list finished workloads", &namespace_name, /*with_templates=*/true);
}

absl::StatusOr<std::vector<Event>> SqliteStore::ReadEvents(
    int64_t after_revision, size_t limit) {
  std::vector<Event> out;
  if (limit == 0) return out;
  KQ_RETURN_IF_ERROR(BeginReads());
  Query query(db_.get(), statements_->select_events_after.get(), "read events");
  query.Bind(after_revision);
  while (true) {
    KQ_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    const int64_t revision = query.ColumnInt64(0);
    if (out.size() >= limit && revision != out.back().revision) break;
    if (out.size() >= limit && revision != out.front().revision) {
      // The limit splits a revision that is not the first: stop before it.
      while (!out.empty() && out.back().revision == revision) out.pop_back();
      break;
    }
    const std::string row_name =
        absl::StrCat("events ", revision, " ", query.ColumnText(2), " ",
                     query.ColumnText(3), "/", query.ColumnText(4));
    Event event;
    event.revision = revision;
    if (!ParseEventType(query.ColumnText(1), &event.type)) {
      return absl::InternalError(absl::StrCat("corrupt row ", row_name,
                                              ": unknown event type \"",
                                              query.ColumnText(1), "\""));
    }
    if (query.ColumnText(2) == KindName(ObjectKind::kWorkload)) {
      KQ_ASSIGN_OR_RETURN(event.object,
                          DecodeWorkload(query.ColumnBlob(5), row_name));
    } else {
      KQ_ASSIGN_OR_RETURN(event.object,
                          DecodeObject(query.ColumnBlob(5), row_name));
    }
    out.push_back(std::move(event));
  }
  KQ_RETURN_IF_ERROR(AttachEventTemplates(out));
  return out;
}

absl::StatusOr<std::vector<PodTemplate>> SqliteStore::ReadPodTemplates(
    const NamespacedName& key, const std::string& workload_uid) {
  KQ_RETURN_IF_ERROR(BeginReads());
  std::vector<PodTemplate> out;
  Query query(db_.get(), statements_->select_pod_templates.get(),
              "read pod templates");
  query.Bind(key.first).Bind(key.second).Bind(workload_uid);
  while (true) {
    KQ_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    out.push_back({key, workload_uid,
                   static_cast<int32_t>(query.ColumnInt64(0)),
                   query.ColumnText(1)});
  }
  return out;
}

absl::StatusOr<int64_t> SqliteStore::OldestEventRevision() {
  KQ_RETURN_IF_ERROR(BeginReads());
  return ReadInt(db_.get(), statements_->select_oldest_event_revision.get(),
                 "read oldest event revision");
}

}  // namespace kq::store
