// Cold start: a database holding many pending and finished workloads, then
// a real kqd started on it, timed until it serves (kqd writes its port file
// after loading the state and running its first scheduling batch).

#include <sqlite3.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench/bench.h"
#include "bench/objects.h"
#include "server/codec/codec.h"
#include "server/core/spec_shape.h"
#include "server/store/sqlite/sqlite_store.h"

namespace kq::bench {
namespace {

// As scale.cc's mix: 7 x 1 cpu, 2 x 5 cpu, 1 x 20 cpu per 10.
v1::Workload StoredWorkload(int64_t i, int cluster_queues, bool finished,
                            absl::Time created) {
  const int cq = static_cast<int>(i % cluster_queues);
  const int kind = static_cast<int>((i / cluster_queues) % 10);
  WorkloadShape shape;
  shape.namespace_name = PerfQueueName(cq);
  shape.queue_name = PerfQueueName(cq);
  shape.name = absl::StrCat(finished ? "done-" : "wl-", i);
  shape.cpu = kind == 0 ? "20" : kind <= 2 ? "5" : "1";
  shape.priority = kind == 0 ? 200 : kind <= 2 ? 100 : 50;
  shape.with_template = true;
  v1::Workload wl = MakeWorkload(shape);
  v1::ObjectMeta* meta = wl.mutable_metadata();
  meta->set_uid(absl::StrFormat("00000000-0000-4000-8000-%012d", i));
  *meta->mutable_creation_timestamp() = codec::ToProto(created);
  if (!finished) return wl;
  // As a workload that ran: admitted, then Finished (Succeeded).
  v1::WorkloadStatus* status = wl.mutable_status();
  v1::Admission* admission = status->mutable_admission();
  admission->set_cluster_queue(PerfQueueName(cq));
  v1::PodSetAssignment* psa = admission->add_pod_set_assignments();
  psa->set_name("main");
  (*psa->mutable_flavors())["cpu"] = "default";
  (*psa->mutable_resource_usage())["cpu"] = shape.cpu;
  psa->set_count(1);
  const absl::Time admitted = created + absl::Seconds(1);
  for (const auto& [type, reason, at] :
       std::vector<std::tuple<std::string, std::string, absl::Time>>{
           {"QuotaReserved", "QuotaReserved", admitted},
           {"Admitted", "Admitted", admitted},
           {"Finished", "Succeeded", admitted + absl::Minutes(5)}}) {
    v1::Condition* c = status->add_conditions();
    c->set_type(type);
    c->set_status("True");
    c->set_reason(reason);
    c->set_message(type == "Finished"
                       ? "Job finished successfully"
                       : "Quota reserved in ClusterQueue " + PerfQueueName(cq));
    *c->mutable_last_transition_time() = codec::ToProto(at);
  }
  return wl;
}

struct Filled {
  double seconds = 0;
  // Building the workloads (protos, then codec::FromProto) vs
  // SqliteStore::Commit (codec::ToProto, serialization, SQLite).
  double build_seconds = 0;
  double commit_seconds = 0;
  int64_t rows = 0;
  int64_t bytes = 0;
};

// Writes the queues at revision 1, then the workloads in batches of 20,000
// per commit (synchronous=NORMAL: the fill is set-up, not measured).
absl::StatusOr<Filled> Fill(const std::string& path,
                            const RestartOptions& options) {
  store::SqliteOptions store_options;
  store_options.synchronous_full = false;
  absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
      store::SqliteStore::Open(path, store_options);
  if (!store.ok()) return store.status();
  const absl::Time start = absl::Now();
  const absl::Time epoch = start - absl::Hours(24);
  int64_t revision = 1;
  store::WriteBatch config;
  config.revision = revision;
  const std::vector<v1::ConfigObject> protos =
      MakePerfQueues(options.cluster_queues, options.cohorts, true);
  int64_t uid = 0;
  for (const v1::ConfigObject& proto : protos) {
    absl::StatusOr<ConfigObject> object = codec::FromProto(proto);
    if (!object.ok()) return object.status();
    ObjectMeta& meta = MutableMetaOf(*object);
    meta.uid = absl::StrCat("obj-", uid++);
    meta.creation_timestamp = epoch;
    meta.revision = revision;
    config.upserted_objects.push_back(*std::move(object));
  }
  if (absl::Status s = (*store)->Commit(config); !s.ok()) return s;
  Filled filled;
  const int64_t total = int64_t{options.pending} + options.finished;
  constexpr int64_t kBatch = 20000;
  for (int64_t first = 0; first < total; first += kBatch) {
    absl::Time t = absl::Now();
    store::WriteBatch batch;
    batch.revision = ++revision;
    for (int64_t i = first; i < std::min(total, first + kBatch); ++i) {
      // Finished ones first, as they came before what is pending now.
      const bool finished = i < options.finished;
      const int64_t n = finished ? i : i - options.finished;
      v1::Workload proto = StoredWorkload(n, options.cluster_queues, finished,
                                          epoch + absl::Milliseconds(i));
      proto.mutable_metadata()->set_revision(revision);
      filled.bytes += proto.ByteSizeLong();
      absl::StatusOr<Workload> wl = codec::FromProto(proto);
      if (!wl.ok()) return wl.status();
      // As kqd writes them: with the digest of each template's shape it
      // made when the workload came in, and the templates apart from the
      // rows.
      for (PodSet& ps : wl->pod_sets) {
        ps.spec_shape = SpecShapeDigest(ps.template_json.str());
      }
      std::vector<store::PodTemplate> templates =
          store::DetachPodTemplates(*wl);
      std::move(templates.begin(), templates.end(),
                std::back_inserter(batch.added_templates));
      batch.upserted_workloads.push_back(*std::move(wl));
    }
    filled.rows += batch.upserted_workloads.size();
    filled.build_seconds += absl::ToDoubleSeconds(absl::Now() - t);
    t = absl::Now();
    if (absl::Status s = (*store)->Commit(batch); !s.ok()) return s;
    filled.commit_seconds += absl::ToDoubleSeconds(absl::Now() - t);
    if ((first / kBatch) % 10 == 9) {
      std::fprintf(stderr, "restart: %lld of %lld rows written\n",
                   static_cast<long long>(filled.rows),
                   static_cast<long long>(total));
    }
  }
  filled.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return filled;
}

struct ReadFloor {
  int64_t rows = 0;
  double read_seconds = 0;
  double parse_seconds = 0;
  // codec::FromProto of the parsed protos (kq's core types).
  double convert_seconds = 0;
};

// The least a start-up must do: read the unfinished rows' bodies (in the
// store's order) and parse each into a kq.v1.Workload.
absl::StatusOr<ReadFloor> MeasureReadFloor(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return absl::InternalError(absl::StrCat("cannot open ", path));
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> closer(db, sqlite3_close);
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT body FROM workloads WHERE finished = 0 "
                         "ORDER BY namespace, name",
                         -1, &stmt, nullptr) != SQLITE_OK) {
    return absl::InternalError(sqlite3_errmsg(db));
  }
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> finalizer(
      stmt, sqlite3_finalize);
  ReadFloor floor;
  std::vector<std::string> bodies;
  absl::Time t = absl::Now();
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    bodies.emplace_back(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                        sqlite3_column_bytes(stmt, 0));
  }
  floor.read_seconds = absl::ToDoubleSeconds(absl::Now() - t);
  floor.rows = bodies.size();
  t = absl::Now();
  // One message reused, each converted as soon as parsed: the cheapest
  // way through, so the two timings are floors.
  v1::Workload wl;
  absl::Duration parse, convert;
  for (const std::string& body : bodies) {
    t = absl::Now();
    if (!wl.ParseFromString(body)) {
      return absl::InternalError("a stored workload does not parse");
    }
    const absl::Time parsed = absl::Now();
    absl::StatusOr<Workload> converted = codec::FromProto(wl);
    if (!converted.ok()) return converted.status();
    parse += parsed - t;
    convert += absl::Now() - parsed;
  }
  floor.parse_seconds = absl::ToDoubleSeconds(parse);
  floor.convert_seconds = absl::ToDoubleSeconds(convert);
  return floor;
}

// The time of kqd's first log line containing `text` (its lines start
// with an RFC 3339 UTC time), or InfinitePast.
absl::Time LogTime(const std::string& log_path, const std::string& text) {
  std::ifstream in(log_path);
  for (std::string line; std::getline(in, line);) {
    if (!absl::StrContains(line, text)) continue;
    const size_t space = line.find(' ');
    absl::Time at;
    std::string error;
    if (space != std::string::npos &&
        absl::ParseTime("%Y-%m-%dT%H:%M:%E*SZ", line.substr(0, space), &at,
                        &error)) {
      return at;
    }
  }
  return absl::InfinitePast();
}

std::string Ms(absl::Duration d) {
  return absl::StrFormat("%.0f ms", absl::ToDoubleMilliseconds(d));
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunRestart(const RestartOptions& options,
                                              const Context& context) {
  // An empty kqd's footprint, to tell the workloads' memory from the rest.
  int64_t empty_rss = 0;
  {
    TempDir empty("kq-bench-empty");
    Kqd kqd(context.kqd_path, empty.path());
    if (absl::Status s = kqd.Start(); !s.ok()) return s;
    empty_rss = RssBytes(kqd.pid());
    kqd.Stop();
  }
  TempDir dir("kq-bench-restart");
  const std::string db_path = dir.path() + "/kq.db";
  std::fprintf(stderr, "restart: writing %d pending + %d finished...\n",
               options.pending, options.finished);
  absl::StatusOr<Filled> filled = Fill(db_path, options);
  if (!filled.ok()) return filled.status();
  absl::StatusOr<ReadFloor> floor = MeasureReadFloor(db_path);
  if (!floor.ok()) return floor.status();

  std::fprintf(stderr, "restart: starting kqd...\n");
  Kqd kqd(context.kqd_path, dir.path());
  if (absl::Status s = kqd.Start({"--log-level=info"}, absl::Minutes(10));
      !s.ok()) {
    return s;
  }
  std::unique_ptr<client::Client> client = kqd.NewClient();
  absl::StatusOr<v1::ListObjectsResponse> queues =
      client->ListObjects("ClusterQueue", "");
  const absl::Time answered = absl::Now();
  if (!queues.ok()) return queues.status();
  int64_t reserving = 0, pending = 0;
  for (const v1::ConfigObject& o : queues->objects()) {
    reserving += o.cluster_queue().status().reserving_workloads();
    pending += o.cluster_queue().status().pending_workloads();
  }
  const int64_t rss = RssBytes(kqd.pid());
  const absl::Duration cpu = CpuTime(kqd.pid());
  // With this client still connected, as runners stay connected when an
  // operator restarts kqd.
  const absl::Duration shutdown = kqd.Stop();
  const absl::Time loaded = LogTime(kqd.log_path(), "loaded revision");
  const absl::Time serving = LogTime(kqd.log_path(), "kqd serving on");

  Table table;
  table.title = absl::StrFormat(
      "restart: cold start with %s pending + %s finished workloads in the "
      "database (%d ClusterQueues)",
      FormatCount(options.pending), FormatCount(options.finished),
      options.cluster_queues);
  table.header = {"phase", "time", "notes"};
  const absl::Duration to_serving = kqd.serving_at() - kqd.started_at();
  table.rows.push_back(
      {"kqd start until it listens (port file)", Ms(to_serving),
       "after loading and its first scheduling batch (20 ms pass budget)"});
  if (loaded != absl::InfinitePast()) {
    table.rows.push_back({"  of which: open + read + rebuild state",
                          Ms(loaded - kqd.started_at()),
                          "until kqd logs \"loaded revision\""});
    if (serving != absl::InfinitePast()) {
      table.rows.push_back(
          {"  of which: event log, first scheduling batch and commit, "
           "listen",
           Ms(serving - loaded), "until kqd logs \"kqd serving on\""});
    }
  }
  table.rows.push_back(
      {"kqd start until the first RPC is answered",
       Ms(answered - kqd.started_at()),
       absl::StrFormat("ListObjects ClusterQueue, sent when the port file "
                       "appeared (scheduling passes yield to waiting calls "
                       "after 2 ms); kqd CPU by then %.1f s",
                       absl::ToDoubleSeconds(cpu))});
  table.rows.push_back({"floor: read the pending rows' bodies (SQLite)",
                        absl::StrFormat("%.0f ms", floor->read_seconds * 1000),
                        absl::StrFormat("%s rows, ORDER BY namespace, name",
                                        FormatCount(floor->rows))});
  table.rows.push_back({"floor: parse them (protobuf)",
                        absl::StrFormat("%.0f ms", floor->parse_seconds * 1000),
                        ""});
  table.rows.push_back(
      {"  then codec::FromProto to core types",
       absl::StrFormat("%.0f ms", floor->convert_seconds * 1000),
       "the rows carry no template text: templates are kept apart "
       "(pod_templates) and not read at start-up"});
  table.rows.push_back(
      {"after start: workloads holding quota / pending",
       absl::StrCat(FormatCount(reserving), " / ", FormatCount(pending)),
       "summed over ClusterQueue status"});
  table.rows.push_back(
      {"kqd RSS after start", absl::StrFormat("%.0f MiB", rss / 1048576.0),
       absl::StrFormat("%.0f bytes per pending workload (empty kqd: %.0f MiB)",
                       1.0 * (rss - empty_rss) / std::max(1, options.pending),
                       empty_rss / 1048576.0)});
  table.rows.push_back({"kqd shutdown (SIGTERM to exit)", Ms(shutdown),
                        "one idle client still connected"});
  table.notes.push_back(absl::StrFormat(
      "Database written through SqliteStore::Commit in batches of 20,000 "
      "(synchronous=NORMAL for the fill): %s rows, %.0f MiB of workload "
      "protos, in %.1f s (%s rows/s; building them %.1f s, "
      "SqliteStore::Commit %.1f s = %s rows/s%s); pending workloads as "
      "submitted, finished ones with admission and "
      "QuotaReserved/Admitted/Finished conditions; each with a Job-like pod "
      "template, written apart from its row as kqd writes it.",
      FormatCount(filled->rows), filled->bytes / 1048576.0, filled->seconds,
      FormatCount(filled->rows / filled->seconds), filled->build_seconds,
      filled->commit_seconds,
      FormatCount(filled->rows / filled->commit_seconds),
      context.limits.sqlite_rows_per_second > 0
          ? absl::StrCat(", ", Fraction(filled->rows / filled->commit_seconds,
                                        context.limits.sqlite_rows_per_second,
                                        "raw SQLite group commit"))
          : ""));
  if (context.limits.sqlite_read_rows_per_second > 0) {
    table.notes.push_back(
        absl::StrCat("Start-up read rate vs the machine: ",
                     Fraction(floor->rows / absl::ToDoubleSeconds(to_serving),
                              context.limits.sqlite_read_rows_per_second,
                              "raw SQLite read rows/s (limits)"),
                     "."));
  }
  table.notes.push_back(
      "The page cache is warm (the database was just written); a start "
      "after a reboot also reads the file from disk.");
  return std::vector<Table>{table};
}

}  // namespace kq::bench
