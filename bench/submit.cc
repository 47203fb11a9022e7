// Submission throughput and latency of a real kqd with its default
// durability (synchronous=FULL: a call returns after its batch's commit).

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

#include "bench/bench.h"
#include "bench/objects.h"

namespace kq::bench {
namespace {

constexpr char kNamespace[] = "bench";
constexpr char kQueue[] = "jobs";

// A team's queue with a small quota, so that a few workloads run and the
// rest wait, as on a busy cluster.
absl::Status ApplySetup(client::Client& client) {
  v1::ApplyRequest request;
  *request.add_objects() = MakeNamespace(kNamespace);
  *request.add_objects() = MakeFlavor("default");
  ClusterQueueShape cq;
  cq.name = "team";
  cq.flavor = "default";
  cq.nominal_cpu = "8";
  cq.nominal_memory = "32Gi";
  cq.within_cluster_queue = "LowerPriority";
  *request.add_objects() = MakeClusterQueue(cq);
  *request.add_objects() = MakeLocalQueue(kNamespace, kQueue, "team");
  return client.Apply(request).status();
}

v1::Workload JobWorkload(const std::string& name, bool template_as_json) {
  WorkloadShape shape;
  shape.namespace_name = kNamespace;
  shape.name = name;
  shape.queue_name = kQueue;
  shape.cpu = "1";
  shape.memory = "2Gi";
  shape.with_template = true;
  shape.template_as_json = template_as_json;
  shape.labels = {{"app", "bench"}, {"team", "ml"}};
  return MakeWorkload(shape);
}

struct Measured {
  int64_t workloads = 0;
  int64_t calls = 0;
  int64_t errors = 0;
  std::string first_error;
  double seconds = 0;
  Percentiles latency_us;
  absl::Duration kqd_cpu;
  absl::Duration client_cpu;
  // Calls per second over the first and the last tenth of the calls: how
  // the rate changes as the pending queue grows.
  double first_tenth_rate = 0;
  double last_tenth_rate = 0;
};

// A fresh kqd with the setup applied and a few calls made (connection,
// first batches) before measuring.
struct Server {
  TempDir dir{"kq-bench-submit"};
  std::unique_ptr<Kqd> kqd;
  std::unique_ptr<client::Client> client;
};
absl::StatusOr<std::unique_ptr<Server>> StartServer(const Context& context) {
  auto server = std::make_unique<Server>();
  server->kqd = std::make_unique<Kqd>(context.kqd_path, server->dir.path());
  if (absl::Status s = server->kqd->Start(); !s.ok()) return s;
  server->client = server->kqd->NewClient();
  if (absl::Status s = ApplySetup(*server->client); !s.ok()) return s;
  for (int i = 0; i < 20; ++i) {
    auto r =
        server->client->SubmitWorkload(JobWorkload(absl::StrCat("warm-", i),
                                                   /*template_as_json=*/true));
    if (!r.ok()) return r.status();
  }
  return server;
}

// Fills `m`'s time, CPU, rates and latencies once its calls, started at
// `start` with the CPU times given, are all answered.
void Summarize(Server& server, absl::Time start, absl::Duration kqd_cpu,
               absl::Duration client_cpu, std::vector<double>& latencies,
               std::vector<absl::Time>& acked, Measured& m) {
  m.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  m.kqd_cpu = CpuTime(server.kqd->pid()) - kqd_cpu;
  m.client_cpu = CpuTime() - client_cpu;
  m.calls = static_cast<int64_t>(latencies.size());
  std::sort(acked.begin(), acked.end());
  const size_t tenth = acked.size() / 10;
  if (tenth > 1) {
    m.first_tenth_rate =
        tenth / absl::ToDoubleSeconds(acked[tenth - 1] - start);
    m.last_tenth_rate =
        (tenth - 1) /
        absl::ToDoubleSeconds(acked.back() - acked[acked.size() - tenth]);
  }
  m.latency_us = ComputePercentiles(latencies);
}

// `threads` threads each call `call(i)` for i = 0, 1, ... (shared) until
// `limit` calls or `duration`; `call` returns the workloads it submitted
// or an error.
template <typename Call>
Measured Drive(Server& server, int threads, int64_t limit,
               absl::Duration duration, Call call) {
  Measured m;
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::vector<double> latencies;
  std::vector<absl::Time> acked;
  const absl::Duration kqd_cpu = CpuTime(server.kqd->pid());
  const absl::Duration client_cpu = CpuTime();
  const absl::Time start = absl::Now();
  const absl::Time end = start + duration;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::vector<double> mine;
      std::vector<absl::Time> mine_acked;
      int64_t workloads = 0, errors = 0;
      std::string first_error;
      while (true) {
        const int64_t i = next++;
        if (i >= limit || absl::Now() >= end) break;
        const absl::Time sent = absl::Now();
        absl::StatusOr<int> r = call(i);
        const absl::Time acked = absl::Now();
        mine.push_back(absl::ToDoubleMicroseconds(acked - sent));
        mine_acked.push_back(acked);
        if (r.ok()) {
          workloads += *r;
        } else if (errors++ == 0) {
          first_error = r.status().ToString();
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
      acked.insert(acked.end(), mine_acked.begin(), mine_acked.end());
      m.workloads += workloads;
      m.errors += errors;
      if (m.first_error.empty()) m.first_error = first_error;
    });
  }
  for (std::thread& t : pool) t.join();
  Summarize(server, start, kqd_cpu, client_cpu, latencies, acked, m);
  return m;
}

// Drive's measurement for SubmitWorkloadAsync from this one thread (see
// SubmitPaced), for `duration` at most. `request(i)` builds call i.
Measured DriveAsync(
    Server& server, int in_flight, int64_t limit, absl::Duration duration,
    double rate,
    const std::function<v1::SubmitWorkloadRequest(int64_t)>& request) {
  Measured m;
  absl::Mutex mu;
  std::vector<double> latencies;
  std::vector<absl::Time> acked;
  const absl::Duration kqd_cpu = CpuTime(server.kqd->pid());
  const absl::Duration client_cpu = CpuTime();
  const absl::Time start = absl::Now();
  SubmitPaced(*server.client, limit, rate, in_flight, start, start + duration,
              request,
              [&](int64_t, absl::Time sent,
                  absl::StatusOr<v1::SubmitWorkloadResponse> r) {
                const absl::Time now = absl::Now();
                absl::MutexLock lock(&mu);
                latencies.push_back(absl::ToDoubleMicroseconds(now - sent));
                acked.push_back(now);
                if (r.ok()) {
                  ++m.workloads;
                } else if (m.errors++ == 0) {
                  m.first_error = r.status().ToString();
                }
              });
  Summarize(server, start, kqd_cpu, client_cpu, latencies, acked, m);
  return m;
}

std::string TenthsNote(const Measured& m) {
  return absl::StrFormat("%s -> %s", FormatCount(m.first_tenth_rate),
                         FormatCount(m.last_tenth_rate));
}

v1::TemplateForm FormOf(bool templates_as_json) {
  return templates_as_json ? v1::TEMPLATE_FORM_JSON : v1::TEMPLATE_FORM_STRUCT;
}

// Call i of a submission row: workload `prefix`-i.
v1::SubmitWorkloadRequest SubmitRequest(const std::string& prefix, int64_t i,
                                        bool template_as_json) {
  v1::SubmitWorkloadRequest request;
  *request.mutable_workload() =
      JobWorkload(absl::StrCat(prefix, i), template_as_json);
  request.set_template_form(FormOf(template_as_json));
  return request;
}

std::string CpuNote(const Measured& m) {
  return absl::StrFormat("%.0f%% / %.0f%%",
                         100 * absl::ToDoubleSeconds(m.kqd_cpu) / m.seconds,
                         100 * absl::ToDoubleSeconds(m.client_cpu) / m.seconds);
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunSubmit(const SubmitOptions& options,
                                             const Context& context) {
  Table table;
  table.title =
      "submit: durable submissions to kqd (synchronous=FULL, one LocalQueue, "
      "8 cpu of quota, the rest pending)";
  table.header = {"mode",
                  "in flight",
                  "workloads",
                  "workloads/s",
                  "p50",
                  "p99",
                  "p99.9",
                  "vs the machine",
                  "CPU kqd / client",
                  "calls/s, first -> last tenth"};
  double best_unary_rate = 0;
  int best_in_flight = 0;
  std::vector<std::string> errors;
  auto note_errors = [&](const std::string& what, const Measured& m) {
    if (m.errors > 0) {
      errors.push_back(absl::StrFormat("%s: %d errors (first: %s)", what,
                                       m.errors, m.first_error));
    }
  };
  // Unary calls at each level in the options' form, kept in flight with
  // SubmitWorkloadAsync; then the most calls in flight in the other form,
  // and with a blocking thread per call (as rounds before the eighth).
  struct Unary {
    int in_flight;
    bool as_json;
    bool blocking;
  };
  std::vector<Unary> unary;
  for (int in_flight : options.in_flight) {
    unary.push_back({in_flight, options.templates_as_json, false});
  }
  if (!options.in_flight.empty()) {
    if (options.struct_rows && options.templates_as_json) {
      unary.push_back({options.in_flight.back(), false, false});
    }
    if (options.blocking_row) {
      unary.push_back(
          {options.in_flight.back(), options.templates_as_json, true});
    }
  }
  for (const Unary& row : unary) {
    std::fprintf(stderr, "submit: unary, %d in flight%s%s...\n", row.in_flight,
                 row.as_json ? "" : ", templates as Structs",
                 row.blocking ? ", a blocking thread each" : "");
    absl::StatusOr<std::unique_ptr<Server>> server = StartServer(context);
    if (!server.ok()) return server.status();
    const bool json = row.as_json;
    auto request = [json](int64_t i) { return SubmitRequest("w-", i, json); };
    client::Client& client = *(*server)->client;
    const Measured m =
        row.blocking
            ? Drive(**server, row.in_flight, options.count, options.per_level,
                    [&](int64_t i) -> absl::StatusOr<int> {
                      auto r = client.SubmitWorkload(request(i));
                      if (!r.ok()) return r.status();
                      return 1;
                    })
            : DriveAsync(**server, row.in_flight, options.count,
                         options.per_level, 0, request);
    const double rate = m.workloads / m.seconds;
    if (json == options.templates_as_json && !row.blocking &&
        row.in_flight >= best_in_flight) {
      best_in_flight = row.in_flight;
      best_unary_rate = rate;
    }
    const auto limit = context.limits.grpc_calls_per_second.find(row.in_flight);
    table.rows.push_back(
        {absl::StrCat(
             "SubmitWorkload",
             json == options.templates_as_json ? "" : ", templates as Structs",
             row.blocking ? ", a blocking thread per call" : ""),
         absl::StrCat(row.in_flight), FormatCount(m.workloads),
         FormatCount(rate), FormatMicros(m.latency_us.p50),
         FormatMicros(m.latency_us.p99), FormatMicros(m.latency_us.p999),
         limit == context.limits.grpc_calls_per_second.end()
             ? ""
             : Fraction(rate, limit->second,
                        absl::StrCat("no-op gRPC at ", row.in_flight)),
         CpuNote(m), TenthsNote(m)});
    note_errors(absl::StrCat("unary at ", row.in_flight), m);
  }
  if (options.open_loop && (best_unary_rate > 0 || options.paced_rate > 0)) {
    const double rate =
        options.paced_rate > 0 ? options.paced_rate : best_unary_rate / 2;
    // Up to 64 calls may be in flight, as in the measurement.
    best_in_flight = std::max(best_in_flight, 64);
    std::fprintf(stderr, "submit: open loop at %.0f/s...\n", rate);
    absl::StatusOr<std::unique_ptr<Server>> server = StartServer(context);
    if (!server.ok()) return server.status();
    const bool json = options.templates_as_json;
    const Measured m = DriveAsync(
        **server, best_in_flight, options.count, options.per_level, rate,
        [json](int64_t i) { return SubmitRequest("o-", i, json); });
    table.rows.push_back(
        {absl::StrFormat("SubmitWorkload, paced at %s/s (%s)",
                         FormatCount(rate),
                         options.paced_rate > 0 ? "given" : "half"),
         absl::StrCat("<= ", best_in_flight), FormatCount(m.workloads),
         FormatCount(m.workloads / m.seconds), FormatMicros(m.latency_us.p50),
         FormatMicros(m.latency_us.p99), FormatMicros(m.latency_us.p999), "",
         CpuNote(m), TenthsNote(m)});
    note_errors("open loop", m);
  }
  std::vector<std::pair<int, bool>> batched;
  for (int in_flight : options.batch_in_flight) {
    batched.emplace_back(in_flight, options.templates_as_json);
  }
  if (options.struct_rows && options.templates_as_json &&
      !options.batch_in_flight.empty()) {
    batched.emplace_back(options.batch_in_flight.back(), false);
  }
  for (const auto& [in_flight, as_json] : batched) {
    std::fprintf(stderr, "submit: Apply batches of %d, %d in flight%s...\n",
                 options.batch, in_flight,
                 as_json ? "" : ", templates as Structs");
    absl::StatusOr<std::unique_ptr<Server>> server = StartServer(context);
    if (!server.ok()) return server.status();
    client::Client& client = *(*server)->client;
    const int batch = options.batch;
    const bool json = as_json;
    Measured m =
        Drive(**server, in_flight, std::max<int64_t>(1, options.count / batch),
              options.per_level, [&](int64_t i) -> absl::StatusOr<int> {
                v1::ApplyRequest request;
                request.set_template_form(FormOf(json));
                for (int j = 0; j < batch; ++j) {
                  *request.add_workloads() =
                      JobWorkload(absl::StrCat("b-", i, "-", j), json);
                }
                auto r = client.Apply(request);
                if (!r.ok()) return r.status();
                return batch;
              });
    const double rate = m.workloads / m.seconds;
    table.rows.push_back({absl::StrCat("Apply, ", batch, " per call",
                                       as_json == options.templates_as_json
                                           ? ""
                                           : ", templates as Structs"),
                          absl::StrCat(in_flight), FormatCount(m.workloads),
                          FormatCount(rate), FormatMicros(m.latency_us.p50),
                          FormatMicros(m.latency_us.p99),
                          FormatMicros(m.latency_us.p999),
                          Fraction(rate, context.limits.sqlite_rows_per_second,
                                   "SQLite group-commit rows/s"),
                          CpuNote(m), TenthsNote(m)});
    note_errors(absl::StrCat("Apply at ", in_flight), m);
  }
  table.notes.push_back(absl::StrFormat(
      "A fresh kqd per row; each measurement stops after %s workloads or "
      "%s. Latency is per call (per batch for Apply), measured by the "
      "client from send to acknowledgement. SubmitWorkload rows keep their "
      "calls in flight from one client thread with the C++ client's "
      "SubmitWorkloadAsync (each answer sends the next call); the row "
      "\"a blocking thread per call\" drives them as rounds before the "
      "eighth did, one blocking SubmitWorkload per client thread; Apply "
      "rows use a blocking thread per call.",
      FormatCount(options.count), absl::FormatDuration(options.per_level)));
  table.notes.push_back(absl::StrCat(
      "Workloads: one pod set, cpu 1 and memory 2Gi, with a Job-like pod "
      "template (image, command, requests) and two labels. ",
      options.templates_as_json
          ? "The template travels as JSON text both ways (PodSet.template_json "
            "and template_form TEMPLATE_FORM_JSON, as `kq apply` sends it); "
            "rows marked \"templates as Structs\" send and receive it as a "
            "google.protobuf.Struct, the API's default form."
          : "The template travels as a google.protobuf.Struct both ways."));
  table.notes.push_back(absl::StrFormat(
      "CPU kqd / client: CPU time of kqd and of this process over the "
      "measurement, in percent of one core (%d cores, shared by both).",
      std::thread::hardware_concurrency()));
  if (context.limits.sqlite_commits_per_second > 0) {
    table.notes.push_back(absl::StrFormat(
        "Durable commits on this disk: %s/s with one row each (limits), so "
        "unary throughput above that needs many calls per commit.",
        FormatCount(context.limits.sqlite_commits_per_second)));
  }
  table.notes.insert(table.notes.end(), errors.begin(), errors.end());
  return std::vector<Table>{table};
}

}  // namespace kq::bench
