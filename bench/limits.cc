// The machine's limits for what kqd does: a unary gRPC call that does
// nothing, and a durable SQLite insert. Every kq figure elsewhere is also
// printed as a fraction of these.

#include <sqlite3.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/rpc_method.h"
#include "grpcpp/support/client_callback.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "bench/bench.h"

namespace kq::bench {
namespace {

struct CallRate {
  double calls_per_second = 0;
  Percentiles latency_us;
};

// `in_flight` grpc.health.v1.Health/Check calls kept in flight on one
// channel from this thread (as `submit` keeps SubmitWorkloadAsync calls in
// flight). The call goes through grpc::internal::CallbackUnaryCall with raw
// byte buffers: the path generated callback stubs take, so the no-op and
// kq's SubmitWorkload differ only in what the server does, without
// generating the health proto. An empty request is a valid HealthCheckRequest
// (the server's overall status).
CallRate MeasureNoOpCalls(const std::shared_ptr<grpc::Channel>& channel,
                          int in_flight, absl::Duration duration) {
  grpc::internal::RpcMethod method("/grpc.health.v1.Health/Check",
                                   grpc::internal::RpcMethod::NORMAL_RPC,
                                   channel);
  // An empty message still needs a buffer (a null one is misuse).
  grpc::Slice empty(std::string{});
  const grpc::ByteBuffer request(&empty, 1);
  absl::Mutex mu;
  std::vector<double> latencies;
  int outstanding = 0;
  const absl::Time start = absl::Now();
  const absl::Time end = start + duration;
  // `in_flight` chains of callback calls from this thread, as `submit`
  // keeps its SubmitWorkloadAsync calls in flight: each answer sends the
  // next call until the time is up.
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer response;
    absl::Time sent;
  };
  std::function<void()> send = [&] {
    auto* call = new Call;
    call->sent = absl::Now();
    grpc::internal::CallbackUnaryCall(
        channel.get(), method, &call->context, &request, &call->response,
        [&, call](grpc::Status status) {
          const absl::Time now = absl::Now();
          const absl::Duration latency = now - call->sent;
          delete call;
          bool again = now < end;
          {
            absl::MutexLock lock(&mu);
            if (status.ok()) {
              latencies.push_back(absl::ToDoubleMicroseconds(latency));
            }
            if (!again) --outstanding;
          }
          if (again) send();
        });
  };
  {
    absl::MutexLock lock(&mu);
    outstanding = in_flight;
  }
  for (int t = 0; t < in_flight; ++t) send();
  {
    auto none_out = [&] { return outstanding == 0; };
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(&none_out));
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  CallRate rate;
  rate.calls_per_second = latencies.size() / seconds;
  rate.latency_us = ComputePercentiles(latencies);
  return rate;
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status status =
        absl::InternalError(absl::StrCat(sql, ": ", error ? error : "?"));
    sqlite3_free(error);
    return status;
  }
  return absl::OkStatus();
}

struct SqliteRates {
  double rows_per_second = 0;     // 1,000 rows per transaction
  double commits_per_second = 0;  // one row per transaction
  double read_rows_per_second = 0;
  int64_t rows = 0;
  size_t body_bytes = 0;
};

// Inserts rows shaped like kq's workloads table (same columns, primary key
// and index; a body the size of a submitted workload with a pod template)
// into a WAL database with synchronous=FULL.
absl::StatusOr<SqliteRates> MeasureSqlite(const std::string& path,
                                          absl::Duration duration) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return absl::InternalError(absl::StrCat("cannot open ", path));
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(db, sqlite3_close);
  for (const char* sql : {
           "PRAGMA journal_mode = WAL",
           "PRAGMA synchronous = FULL",
           "CREATE TABLE workloads (namespace TEXT NOT NULL, name TEXT NOT "
           "NULL, uid TEXT NOT NULL, queue_name TEXT NOT NULL, priority "
           "INTEGER NOT NULL, creation_time_us INTEGER NOT NULL, state TEXT "
           "NOT NULL, finished INTEGER NOT NULL, revision INTEGER NOT NULL, "
           "body BLOB NOT NULL, PRIMARY KEY (namespace, name)) STRICT",
           "CREATE INDEX workloads_by_finished ON workloads (finished, "
           "namespace, name)",
       }) {
    if (absl::Status s = Exec(db, sql); !s.ok()) return s;
  }
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(
          db,
          "INSERT INTO workloads VALUES (?1, ?2, ?3, 'lq', 100, ?4, "
          "'Pending', 0, ?5, ?6)",
          -1, &insert, nullptr) != SQLITE_OK) {
    return absl::InternalError(sqlite3_errmsg(db));
  }
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> finalizer(
      insert, sqlite3_finalize);
  SqliteRates rates;
  const std::string body(480, 'x');
  rates.body_bytes = body.size();
  int64_t next = 0;
  auto insert_row = [&]() -> absl::Status {
    const std::string name = absl::StrCat("wl-", next);
    const std::string uid = absl::StrCat("00000000-0000-4000-8000-", next);
    sqlite3_bind_text(insert, 1, "bench", -1, SQLITE_STATIC);
    sqlite3_bind_text(insert, 2, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, uid.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert, 4, next);
    sqlite3_bind_int64(insert, 5, next);
    sqlite3_bind_blob(insert, 6, body.data(), body.size(), SQLITE_STATIC);
    ++next;
    const int rc = sqlite3_step(insert);
    sqlite3_reset(insert);
    if (rc != SQLITE_DONE) return absl::InternalError(sqlite3_errmsg(db));
    return absl::OkStatus();
  };
  // Group commit: 1,000 rows per transaction.
  absl::Time start = absl::Now();
  int64_t rows = 0;
  while (absl::Now() - start < duration) {
    if (absl::Status s = Exec(db, "BEGIN"); !s.ok()) return s;
    for (int i = 0; i < 1000; ++i) {
      if (absl::Status s = insert_row(); !s.ok()) return s;
    }
    if (absl::Status s = Exec(db, "COMMIT"); !s.ok()) return s;
    rows += 1000;
  }
  rates.rows_per_second = rows / absl::ToDoubleSeconds(absl::Now() - start);
  // One row per transaction: each commit waits for its fsync.
  start = absl::Now();
  int64_t commits = 0;
  while (absl::Now() - start < duration / 2) {
    if (absl::Status s = insert_row(); !s.ok()) return s;
    ++commits;
  }
  rates.commits_per_second =
      commits / absl::ToDoubleSeconds(absl::Now() - start);
  // Reading back what a start-up reads: the bodies of unfinished rows.
  sqlite3_stmt* select = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT body FROM workloads WHERE finished = 0 ORDER BY "
                     "namespace, name",
                     -1, &select, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> select_finalizer(
      select, sqlite3_finalize);
  start = absl::Now();
  int64_t read = 0;
  size_t bytes = 0;
  while (sqlite3_step(select) == SQLITE_ROW) {
    bytes += sqlite3_column_bytes(select, 0);
    ++read;
  }
  rates.read_rows_per_second =
      read / std::max(1e-9, absl::ToDoubleSeconds(absl::Now() - start));
  rates.rows = next;
  return rates;
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunLimits(const LimitsOptions& options,
                                             Context& context) {
  Table grpc_table;
  grpc_table.title = "limits: no-op unary gRPC (grpc.health.v1.Health/Check)";
  grpc_table.header = {"in flight", "calls/s", "p50", "p99", "p99.9"};
  {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    // A server needs one registered service to poll its completion queues;
    // kq's own service with every method unimplemented is the cheapest.
    v1::QueueService::Service unimplemented;
    builder.RegisterService(&unimplemented);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (server == nullptr || port == 0) {
      return absl::UnavailableError("cannot start the no-op gRPC server");
    }
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                       grpc::InsecureChannelCredentials());
    // Connect and warm up before measuring.
    MeasureNoOpCalls(channel, 1, absl::Milliseconds(100));
    for (int in_flight : options.in_flight) {
      CallRate rate =
          MeasureNoOpCalls(channel, in_flight, options.per_measurement);
      context.limits.grpc_calls_per_second[in_flight] = rate.calls_per_second;
      context.limits.grpc_p50_us[in_flight] = rate.latency_us.p50;
      grpc_table.rows.push_back(
          {absl::StrCat(in_flight), FormatCount(rate.calls_per_second),
           FormatMicros(rate.latency_us.p50), FormatMicros(rate.latency_us.p99),
           FormatMicros(rate.latency_us.p999)});
    }
    server->Shutdown();
  }
  grpc_table.notes.push_back(
      "Server and client in this one process over loopback TCP, one shared "
      "channel, the calls kept in flight from one thread with gRPC's "
      "callback API (as `submit` drives kqd), so client and server share "
      "the cores as kqd and its clients do.");

  TempDir dir("kq-bench-sqlite");
  absl::StatusOr<SqliteRates> sqlite =
      MeasureSqlite(dir.path() + "/limits.db", options.per_measurement);
  if (!sqlite.ok()) return sqlite.status();
  context.limits.sqlite_rows_per_second = sqlite->rows_per_second;
  context.limits.sqlite_commits_per_second = sqlite->commits_per_second;
  context.limits.sqlite_read_rows_per_second = sqlite->read_rows_per_second;
  Table sqlite_table;
  sqlite_table.title =
      "limits: SQLite WAL, synchronous=FULL, rows shaped like kq's workloads";
  sqlite_table.header = {"measurement", "rate"};
  sqlite_table.rows = {
      {"group commit, 1,000 rows per transaction",
       FormatCount(sqlite->rows_per_second) + " rows/s"},
      {"one row per transaction (durable commits)",
       FormatCount(sqlite->commits_per_second) + " commits/s"},
      {"read back unfinished rows (start-up's read)",
       FormatCount(sqlite->read_rows_per_second) + " rows/s"},
  };
  sqlite_table.notes.push_back(absl::StrCat(
      "Table and index as migrations/0001_initial_schema.sql's workloads; ",
      sqlite->body_bytes, "-byte body per row; ", FormatCount(sqlite->rows),
      " rows written; database under ", "$TMPDIR (default /tmp)."));
  return std::vector<Table>{grpc_table, sqlite_table};
}

}  // namespace kq::bench
