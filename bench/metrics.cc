// `kq-bench metrics`: what /metrics costs on a large kqd. kqd holds 1,000
// ClusterQueues and 100,000 pending workloads; a scrape's time and size,
// how long the gauge capture holds the engine thread (scrapes never do),
// and Submit throughput without and with a scrape every second, in
// alternating rounds on the same kqd.

#include <httplib.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

#include "bench/bench.h"
#include "bench/objects.h"

namespace kq::bench {
namespace {

// The last value of a kqd gauge in `text` (0 when absent).
double GaugeValue(const std::string& text, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name) || line.size() <= name.size() ||
        (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    double value = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) {
      return value;
    }
  }
  return 0;
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunMetrics(const MetricsOptions& options,
                                              const Context& context) {
  TempDir dir("kq-bench-metrics");
  Kqd kqd(context.kqd_path, dir.path());
  const std::string http_port_file = dir.path() + "/http.port";
  if (absl::Status s = kqd.Start({"--http-port-file=" + http_port_file});
      !s.ok()) {
    return s;
  }
  int http_port = 0;
  std::ifstream(http_port_file) >> http_port;
  std::unique_ptr<client::Client> client = kqd.NewClient();

  // 1,000 ClusterQueues of 1 cpu (one workload each is admitted, the rest
  // wait), and a roomy one for the Submit rounds.
  v1::ApplyRequest queues;
  *queues.add_objects() = MakeFlavor("default");
  *queues.add_objects() = MakeNamespace("bench");
  for (int i = 0; i < options.cluster_queues; ++i) {
    const std::string name = PerfQueueName(i);
    *queues.add_objects() = MakeNamespace(name);
    *queues.add_objects() = MakeClusterQueue(
        {.name = name, .flavor = "default", .nominal_cpu = "1"});
    *queues.add_objects() = MakeLocalQueue(name, name, name);
  }
  *queues.add_objects() = MakeClusterQueue(
      {.name = "submit", .flavor = "default", .nominal_cpu = "1000000"});
  *queues.add_objects() = MakeLocalQueue("bench", "submit", "submit");
  if (auto r = client->Apply(queues); !r.ok()) return r.status();
  const absl::Time fill_start = absl::Now();
  constexpr int kPerApply = 5000;
  for (int first = 0; first < options.pending; first += kPerApply) {
    v1::ApplyRequest batch;
    for (int i = first; i < std::min(options.pending, first + kPerApply); ++i) {
      WorkloadShape shape;
      const int cq = i % options.cluster_queues;
      shape.namespace_name = PerfQueueName(cq);
      shape.queue_name = PerfQueueName(cq);
      shape.name = absl::StrCat("wl-", i);
      shape.cpu = "1";
      *batch.add_workloads() = MakeWorkload(shape);
    }
    if (auto r = client->Apply(batch); !r.ok()) return r.status();
  }
  const double fill_seconds = absl::ToDoubleSeconds(absl::Now() - fill_start);

  httplib::Client http("127.0.0.1", http_port);
  http.set_read_timeout(30, 0);
  // Wait for a capture that sees every workload.
  std::string text;
  const absl::Time settle = absl::Now() + absl::Minutes(2);
  while (absl::Now() < settle) {
    auto res = http.Get("/metrics");
    if (res && res->status == 200) text = res->body;
    double pending = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::StartsWith(line, "kueue_pending_workloads{")) {
        double v = 0;
        if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) {
          pending += v;
        }
      }
    }
    if (pending + options.cluster_queues >= options.pending) break;
    absl::SleepFor(absl::Milliseconds(200));
  }

  std::vector<double> scrape_ms;
  size_t bytes = 0;
  std::vector<double> capture_ms;
  for (int i = 0; i < options.scrapes; ++i) {
    const absl::Time start = absl::Now();
    auto res = http.Get("/metrics");
    if (!res || res->status != 200) {
      return absl::UnavailableError("GET /metrics failed");
    }
    scrape_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    bytes = res->body.size();
    capture_ms.push_back(
        1000 * GaugeValue(res->body, "kq_metrics_capture_step_seconds"));
    absl::SleepFor(absl::Milliseconds(100));
  }
  const Percentiles scrape = ComputePercentiles(scrape_ms);
  const Percentiles capture = ComputePercentiles(capture_ms);

  // Submit rounds: off, on, off, on ... with a scrape every second while
  // on; medians of each.
  std::atomic<int64_t> next{0};
  std::vector<double> without, with;
  for (int round = 0; round < 2 * options.rounds; ++round) {
    const bool scraping = round % 2 == 1;
    std::atomic<bool> stop{false};
    std::thread scraper;
    if (scraping) {
      scraper = std::thread([&] {
        httplib::Client c("127.0.0.1", http_port);
        c.set_read_timeout(30, 0);
        while (!stop.load()) {
          c.Get("/metrics");
          for (int i = 0; i < 10 && !stop.load(); ++i) {
            absl::SleepFor(absl::Milliseconds(100));
          }
        }
      });
    }
    const double rate =
        SubmitRate(kqd, options.in_flight, options.per_round, next);
    stop.store(true);
    if (scraper.joinable()) scraper.join();
    (scraping ? with : without).push_back(rate);
  }
  const Percentiles off = ComputePercentiles(without);
  const Percentiles on = ComputePercentiles(with);

  Table table;
  table.title = absl::StrCat(
      "/metrics of a kqd holding ", FormatCount(options.cluster_queues),
      " ClusterQueues and ", FormatCount(options.pending), " workloads");
  table.header = {"measure", "median", "p99 / max", "note"};
  table.rows.push_back({"scrape (GET /metrics)",
                        absl::StrCat(FormatFixed(scrape.p50, 1), " ms"),
                        absl::StrCat(FormatFixed(scrape.max, 1), " ms"),
                        absl::StrCat(FormatCount(bytes), " bytes")});
  table.rows.push_back(
      {"engine thread held by a scrape", "0 ms", "0 ms",
       "a scrape reads the last capture; it never calls the engine"});
  table.rows.push_back({"engine thread held by a gauge capture step",
                        absl::StrCat(FormatFixed(capture.p50, 2), " ms"),
                        absl::StrCat(FormatFixed(capture.max, 2), " ms"),
                        "captures run in steps of about 1 ms, at most one "
                        "capture per 500 ms, only while the state changes"});
  table.rows.push_back(
      {absl::StrCat("Submit, ", options.in_flight, " in flight, no scrape"),
       absl::StrCat(FormatCount(off.p50), "/s"), "",
       absl::StrCat(without.size(), " rounds of ",
                    absl::FormatDuration(options.per_round))});
  table.rows.push_back(
      {absl::StrCat("Submit, ", options.in_flight,
                    " in flight, a scrape every 1 s"),
       absl::StrCat(FormatCount(on.p50), "/s"), "",
       absl::StrCat(FormatFixed(off.p50 > 0 ? 100 * on.p50 / off.p50 : 0, 1),
                    "% of the rate without")});
  table.notes.push_back(absl::StrCat(
      "Filled through Apply in ", FormatFixed(fill_seconds, 1),
      " s; one workload per ClusterQueue is admitted, the rest pending."));
  table.notes.push_back(
      "Rounds alternate (off, on, off, on) on the same kqd, whose state grows "
      "by the submitted workloads; the host is shared, so compare the "
      "ratio, not the rates.");
  return std::vector<Table>{std::move(table)};
}

}  // namespace kq::bench
