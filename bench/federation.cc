// `kq-bench federation`: MultiKueue end to end on one machine (issue 31).
// One manager and three worker kqds on loopback, each with its own data
// directory; the manager's MultiKueueClusters name kq contexts files of the
// workers. Workloads are submitted to the manager with SubmitWorkloadAsync;
// an agent watching the manager finishes each one once it is Admitted (as a
// runner attached on the manager would), and watches on the workers (by
// origin) check that every workload was bound on exactly one worker, the
// one its status.clusterName names. Costs come from /metrics: the workers'
// FederationService calls (the manager's RPCs) and the manager's commits.

#include <httplib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <stop_token>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include "bench/bench.h"
#include "bench/objects.h"
#include "manifest/manifest.h"
#include "proto/util/workload.h"

namespace kq::bench {
namespace {

constexpr char kNamespace[] = "bench";
constexpr char kQueue[] = "jobs";
constexpr char kOrigin[] = "multikueue";
constexpr char kFederationMethods[] = "/kq.v1.FederationService/";

// One kqd of the federation and the port of its /metrics.
struct Member {
  std::string name;
  std::unique_ptr<Kqd> kqd;
  int http_port = 0;
};

struct Federation {
  TempDir dir{"kq-bench-federation"};
  Member manager;
  std::vector<Member> workers;
};

absl::Status StartMember(const Context& context, const std::string& root,
                         const std::string& name, Member& member) {
  const std::string data = root + "/" + name;
  std::filesystem::create_directories(data);
  member.name = name;
  member.kqd = std::make_unique<Kqd>(context.kqd_path, data);
  const std::string http_port_file = data + "/http.port";
  if (absl::Status s =
          member.kqd->Start({"--http-port-file=" + http_port_file});
      !s.ok()) {
    return s;
  }
  std::ifstream(http_port_file) >> member.http_port;
  if (member.http_port == 0) {
    return absl::InternalError(
        absl::StrCat(name, " wrote no HTTP port to ", http_port_file));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Scrape(const Member& member) {
  httplib::Client http("127.0.0.1", member.http_port);
  http.set_read_timeout(30, 0);
  httplib::Result r = http.Get("/metrics");
  if (!r || r->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET /metrics of ", member.name, " failed"));
  }
  return r->body;
}

// The value of a sample line ("name{labels} value").
double SampleValue(absl::string_view line) {
  double value = 0;
  if (!absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) return 0;
  return value;
}

// The sum of the samples of `name` whose label text holds `label` (empty:
// every sample).
double Sum(const std::string& text, absl::string_view name,
           absl::string_view label) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name) || line.size() <= name.size() ||
        (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    if (!label.empty() && !absl::StrContains(line, label)) continue;
    sum += SampleValue(line);
  }
  return sum;
}

// The FederationService's samples of `series` (kq_grpc_requests_total,
// kq_grpc_request_duration_seconds_sum), by method (short name).
std::map<std::string, double> FederationCalls(const std::string& text,
                                              absl::string_view series) {
  std::map<std::string, double> calls;
  const std::string prefix = absl::StrCat(series, "{");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    const size_t at = line.find(kFederationMethods);
    if (at == absl::string_view::npos) continue;
    const size_t begin = at + sizeof(kFederationMethods) - 1;
    const size_t end = line.find('"', begin);
    calls[std::string(line.substr(begin, end - begin))] += SampleValue(line);
  }
  return calls;
}

// What /metrics says of the federation at one moment.
struct Counters {
  std::map<std::string, double> worker_calls;  // summed over the workers
  // The seconds the workers spent answering them.
  std::map<std::string, double> worker_call_seconds;
  double manager_commits = 0;
  double manager_commands = 0;
  double worker_commits = 0;
};

absl::StatusOr<Counters> ReadCounters(const Federation& fed) {
  Counters c;
  absl::StatusOr<std::string> manager = Scrape(fed.manager);
  if (!manager.ok()) return manager.status();
  c.manager_commits =
      Sum(*manager, "kq_engine_batches_total", "stored=\"true\"");
  c.manager_commands = Sum(*manager, "kq_engine_commands_total", "");
  for (const Member& w : fed.workers) {
    absl::StatusOr<std::string> text = Scrape(w);
    if (!text.ok()) return text.status();
    for (const auto& [method, n] :
         FederationCalls(*text, "kq_grpc_requests_total")) {
      c.worker_calls[method] += n;
    }
    for (const auto& [method, n] :
         FederationCalls(*text, "kq_grpc_request_duration_seconds_sum")) {
      c.worker_call_seconds[method] += n;
    }
    c.worker_commits +=
        Sum(*text, "kq_engine_batches_total", "stored=\"true\"");
  }
  return c;
}

absl::Status Apply(client::Client& client, const std::string& yaml,
                   std::vector<v1::ConfigObject> extra) {
  absl::StatusOr<std::vector<manifest::Document>> docs =
      manifest::ParseManifests(yaml);
  if (!docs.ok()) return docs.status();
  v1::ApplyRequest request;
  for (v1::ConfigObject& o : extra) *request.add_objects() = std::move(o);
  for (const manifest::Document& d : *docs) {
    if (!d.status.ok()) return d.status;
    if (d.config_object.has_value()) *request.add_objects() = *d.config_object;
  }
  return client.Apply(request).status();
}

// Starts the manager and `workers` workers and waits until the manager's
// links to all of them are up.
absl::StatusOr<std::unique_ptr<Federation>> StartFederation(
    const Context& context, int workers, int64_t quota) {
  auto fed = std::make_unique<Federation>();
  const std::string root = fed->dir.path();
  std::string clusters;
  std::string cluster_objects;
  for (int i = 1; i <= workers; ++i) {
    Member& w = fed->workers.emplace_back();
    if (absl::Status s = StartMember(context, root, absl::StrCat("w", i), w);
        !s.ok()) {
      return s;
    }
    // Each worker admits every copy at once.
    if (absl::Status s =
            Apply(*w.kqd->NewClient(), "",
                  {MakeNamespace(kNamespace), MakeFlavor("default"),
                   MakeClusterQueue({.name = "team",
                                     .flavor = "default",
                                     .nominal_cpu = absl::StrCat(quota)}),
                   MakeLocalQueue(kNamespace, kQueue, "team")});
        !s.ok()) {
      return s;
    }
    const std::string ctx = absl::StrCat(root, "/", w.name, ".ctx.yaml");
    std::ofstream(ctx) << "apiVersion: kq/v1\nkind: Config\ncurrent-context: "
                       << w.name << "\ncontexts:\n- name: " << w.name
                       << "\n  server: " << w.kqd->target() << "\n";
    absl::StrAppend(&clusters, "  - ", w.name, "\n");
    absl::StrAppend(&cluster_objects,
                    "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: "
                    "MultiKueueCluster\nmetadata: {name: ",
                    w.name,
                    "}\nspec:\n  clusterSource:\n    kubeConfig: "
                    "{locationType: Path, location: ",
                    ctx, "}\n");
  }
  if (absl::Status s = StartMember(context, root, "manager", fed->manager);
      !s.ok()) {
    return s;
  }
  const std::string manager_yaml = absl::StrCat(
      R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: )",
      quota, R"(}
  admissionChecksStrategy:
    admissionChecks:
    - name: multikueue
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: )",
      kNamespace, ", name: ", kQueue, R"(}
spec: {clusterQueue: team}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: multikueue}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: bench}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: bench}
spec:
  clusters:
)",
      clusters, cluster_objects);
  if (absl::Status s =
          Apply(*fed->manager.kqd->NewClient(), manager_yaml,
                {MakeNamespace(kNamespace), MakeFlavor("default")});
      !s.ok()) {
    return s;
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    absl::StatusOr<std::string> text = Scrape(fed->manager);
    if (!text.ok()) return text.status();
    if (Sum(*text, "kq_multikueue_cluster_connected", "") == workers) break;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the manager did not connect to its ", workers,
          " workers within 30 s; see ", fed->manager.kqd->log_path()));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return fed;
}

v1::SubmitWorkloadRequest SubmitRequest(const std::string& name) {
  WorkloadShape shape;
  shape.namespace_name = kNamespace;
  shape.name = name;
  shape.queue_name = kQueue;
  shape.cpu = "1";
  shape.with_template = true;
  shape.template_as_json = true;
  shape.labels = {{"app", "bench"}, {"team", "ml"}};
  v1::SubmitWorkloadRequest request;
  *request.mutable_workload() = MakeWorkload(shape);
  // This driver reads conditions only, never a template (as a MultiKueue
  // manager reads its copies).
  request.set_template_form(v1::TEMPLATE_FORM_NONE);
  return request;
}

// Workload `prefix`<i>'s index, or -1.
int64_t IndexOf(const std::string& name, const std::string& prefix,
                int64_t count) {
  if (!absl::StartsWith(name, prefix)) return -1;
  int64_t i = 0;
  if (!absl::SimpleAtoi(absl::string_view(name).substr(prefix.size()), &i) ||
      i < 0 || i >= count) {
    return -1;
  }
  return i;
}

// The steps of one workload's way to Admitted, as the benchmark's watches
// see them (kStepNames names the step that ends at each).
enum Step {
  kReserved,      // the manager's QuotaReserved
  kCopied,        // a copy on some worker
  kCopyAdmitted,  // a copy Admitted on some worker
  kWinner,        // the manager's status.clusterName
  kBound,         // the winner's copy bound
  kStepCount,
};
constexpr const char* kStepNames[kStepCount + 1] = {
    "submit -> QuotaReserved on the manager",
    "-> first copy on a worker (UpsertRemote)",
    "-> a copy Admitted on its worker",
    "-> clusterName committed on the manager",
    "-> the winner's copy bound (DeleteRemote of the others, BindRemote)",
    "-> Admitted on the manager (check Ready)",
};

struct RunResult {
  int64_t workloads = 0;
  int64_t finished = 0;
  bool timed_out = false;
  // From the first submission: the last acknowledged, the last Admitted
  // seen, the last Finished seen (the end to end time).
  double submitted_s = 0;
  double admitted_s = 0;
  double finished_s = 0;
  Percentiles latency_us;  // submission to the Admitted condition seen
  // The same latency cut at the steps seen on the way, in order (see
  // kSteps): the median and p99 of each step's share, microseconds.
  std::vector<Percentiles> steps_us;
  // The median latency of the first and of the last tenth submitted: a
  // paced run that does not keep up shows it growing.
  double first_tenth_p50_us = 0;
  double last_tenth_p50_us = 0;
  int64_t submit_errors = 0;
  int64_t finish_errors = 0;
  std::string first_error;
  // Workloads not bound on exactly one worker, or on another worker than
  // their clusterName; and the first such, described.
  int64_t misplaced = 0;
  std::string first_misplaced;
  std::map<std::string, int64_t> per_cluster;
  double copies_per_workload = 0;
  // Deltas over the run, through the copies' removal after the finishes.
  Counters cost;
  double drain_s = 0;  // from the last Finished until no copy is left
  int64_t copies_left = 0;
  absl::Duration cpu_manager, cpu_workers, cpu_bench;
};

// Submits `count` workloads `prefix`<i> (closed loop with `in_flight`
// calls out, or open loop at `rate`/s) and follows them to Finished.
absl::StatusOr<RunResult> Drive(Federation& fed, const std::string& prefix,
                                int64_t count, double rate, int in_flight,
                                absl::Duration timeout) {
  RunResult out;
  out.workloads = count;
  const int workers = static_cast<int>(fed.workers.size());
  absl::Mutex mu;
  std::vector<absl::Time> sent(count, absl::InfinitePast());
  std::vector<absl::Time> acked(count, absl::InfinitePast());
  std::vector<absl::Time> admitted(count, absl::InfinitePast());
  std::vector<absl::Time> finished(count, absl::InfinitePast());
  std::vector<std::string> cluster(count);
  std::vector<uint32_t> bound(count, 0);
  // When each step of kSteps was first seen, per workload.
  std::vector<std::array<absl::Time, kStepCount>> seen(count);
  for (auto& times : seen) times.fill(absl::InfinitePast());
  auto mark = [&](int64_t i, Step step, absl::Time now) {
    mu.AssertHeld();
    if (seen[i][step] == absl::InfinitePast()) seen[i][step] = now;
  };
  std::vector<uint32_t> copied(count, 0);
  int64_t finished_count = 0;
  // FinishWorkloadAsync calls not answered yet.
  int64_t finishing = 0;

  std::unique_ptr<client::Client> submitter = fed.manager.kqd->NewClient();
  std::unique_ptr<client::Client> finisher = fed.manager.kqd->NewClient();
  std::unique_ptr<client::Client> watcher = fed.manager.kqd->NewClient();
  std::vector<std::unique_ptr<client::Client>> worker_clients;
  for (const Member& w : fed.workers) {
    worker_clients.push_back(w.kqd->NewClient());
  }
  std::vector<absl::Status> watch_status(workers + 1);

  // The agent: a Watch on the manager finishes what is Admitted.
  v1::ListWorkloadsRequest list;
  list.set_namespace_(kNamespace);
  absl::StatusOr<v1::ListWorkloadsResponse> listed =
      watcher->ListWorkloads(list);
  if (!listed.ok()) return listed.status();
  v1::WatchRequest manager_watch;
  manager_watch.set_from_revision(listed->revision());
  manager_watch.add_kinds("Workload");
  manager_watch.set_namespace_(kNamespace);
  manager_watch.set_template_form(v1::TEMPLATE_FORM_NONE);
  auto on_manager = [&](const v1::WatchEvent& ev) {
    if (!ev.has_workload()) return true;
    const v1::Workload& wl = ev.workload();
    const int64_t i = IndexOf(wl.metadata().name(), prefix, count);
    if (i < 0) return true;
    const bool is_admitted = proto_util::IsConditionTrue(wl, "Admitted");
    const bool is_finished = proto_util::IsConditionTrue(wl, "Finished");
    const absl::Time now = absl::Now();
    bool finish = false;
    {
      absl::MutexLock lock(&mu);
      if (proto_util::IsConditionTrue(wl, "QuotaReserved")) {
        mark(i, kReserved, now);
      }
      if (wl.status().has_cluster_name() && cluster[i].empty()) {
        cluster[i] = wl.status().cluster_name();
        mark(i, kWinner, now);
      }
      if ((is_admitted || is_finished) && admitted[i] == absl::InfinitePast()) {
        admitted[i] = now;
        finish = !is_finished;
        if (finish) ++finishing;
      }
      if (is_finished && finished[i] == absl::InfinitePast()) {
        finished[i] = now;
        ++finished_count;
      }
    }
    if (finish) {
      v1::FinishWorkloadRequest request;
      request.set_namespace_(kNamespace);
      request.set_name(wl.metadata().name());
      request.set_succeeded(true);
      request.set_message("done");
      request.set_template_form(v1::TEMPLATE_FORM_NONE);
      finisher->FinishWorkloadAsync(std::move(request),
                                    [&](absl::StatusOr<v1::Workload> r) {
                                      absl::MutexLock lock(&mu);
                                      --finishing;
                                      if (!r.ok() && out.finish_errors++ == 0 &&
                                          out.first_error.empty()) {
                                        out.first_error = r.status().ToString();
                                      }
                                    });
    }
    return true;
  };
  // Declared after all that the watches use: ended first.
  struct Watches {
    std::stop_source stop;
    std::vector<std::thread> threads;
    void End() {
      stop.request_stop();
      for (std::thread& t : threads) {
        if (t.joinable()) t.join();
      }
    }
    ~Watches() { End(); }
  } watches;
  std::stop_source& stop = watches.stop;
  watches.threads.emplace_back([&] {
    watch_status[0] =
        watcher->Watch(manager_watch, on_manager, stop.get_token());
  });
  // The workers' copies, by origin: which were made and which bound.
  for (int w = 0; w < workers; ++w) {
    v1::ListWorkloadsRequest copies;
    copies.set_namespace_(kNamespace);
    copies.set_origin(kOrigin);
    absl::StatusOr<v1::ListWorkloadsResponse> have =
        worker_clients[w]->ListWorkloads(copies);
    if (!have.ok()) return have.status();
    v1::WatchRequest request;
    request.set_from_revision(have->revision());
    request.add_kinds("Workload");
    request.set_namespace_(kNamespace);
    request.set_origin(kOrigin);
    request.set_template_form(v1::TEMPLATE_FORM_NONE);
    watches.threads.emplace_back([&, w, request] {
      watch_status[w + 1] = worker_clients[w]->Watch(
          request,
          [&, w](const v1::WatchEvent& ev) {
            if (!ev.has_workload()) return true;
            const v1::Workload& wl = ev.workload();
            const int64_t i = IndexOf(wl.metadata().name(), prefix, count);
            if (i < 0) return true;
            const absl::Time now = absl::Now();
            absl::MutexLock lock(&mu);
            copied[i] |= 1u << w;
            mark(i, kCopied, now);
            if (proto_util::IsConditionTrue(wl, "Admitted")) {
              mark(i, kCopyAdmitted, now);
            }
            if (wl.status().remote().bound()) {
              bound[i] |= 1u << w;
              mark(i, kBound, now);
            }
            return true;
          },
          stop.get_token());
    });
  }

  absl::StatusOr<Counters> before = ReadCounters(fed);
  if (!before.ok()) return before.status();
  absl::Duration cpu_manager = CpuTime(fed.manager.kqd->pid());
  absl::Duration cpu_workers;
  for (const Member& w : fed.workers) cpu_workers += CpuTime(w.kqd->pid());
  const absl::Duration cpu_bench = CpuTime();

  const absl::Time start = absl::Now();
  SubmitPaced(
      *submitter, count, rate, in_flight, start, absl::InfiniteFuture(),
      [&](int64_t i) { return SubmitRequest(absl::StrCat(prefix, i)); },
      [&](int64_t i, absl::Time at,
          absl::StatusOr<v1::SubmitWorkloadResponse> r) {
        absl::MutexLock lock(&mu);
        sent[i] = at;
        acked[i] = absl::Now();
        if (!r.ok() && out.submit_errors++ == 0 && out.first_error.empty()) {
          out.first_error = r.status().ToString();
        }
      });
  const absl::Time deadline = start + timeout;
  {
    absl::MutexLock lock(&mu);
    auto done = [&] { return finished_count >= count; };
    mu.AwaitWithDeadline(absl::Condition(&done), deadline);
    out.timed_out = !done();
    out.finished = finished_count;
  }
  const absl::Time end = absl::Now();
  out.cpu_manager = CpuTime(fed.manager.kqd->pid()) - cpu_manager;
  for (const Member& w : fed.workers) out.cpu_workers += CpuTime(w.kqd->pid());
  out.cpu_workers -= cpu_workers;
  out.cpu_bench = CpuTime() - cpu_bench;

  // The finished workloads' copies are deleted by the manager: wait for the
  // workers to hold none, so that the costs include their removal.
  absl::Time last_finished = start;
  {
    absl::MutexLock lock(&mu);
    for (absl::Time t : finished) last_finished = std::max(last_finished, t);
  }
  const absl::Time drain_deadline = end + absl::Seconds(30);
  while (true) {
    out.copies_left = 0;
    for (int w = 0; w < workers; ++w) {
      v1::ListWorkloadsRequest copies;
      copies.set_namespace_(kNamespace);
      copies.set_origin(kOrigin);
      copies.set_include_finished(true);
      absl::StatusOr<v1::ListWorkloadsResponse> have =
          worker_clients[w]->ListWorkloads(copies);
      if (!have.ok()) return have.status();
      for (const v1::Workload& wl : have->workloads()) {
        if (IndexOf(wl.metadata().name(), prefix, count) >= 0) {
          ++out.copies_left;
        }
      }
    }
    if (out.copies_left == 0 || absl::Now() > drain_deadline) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  out.drain_s = absl::ToDoubleSeconds(absl::Now() - last_finished);
  watches.End();
  {
    // Every answer is in before the state the callbacks write goes.
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int64_t* n) { return *n == 0; }, &finishing));
  }
  absl::StatusOr<Counters> after = ReadCounters(fed);
  if (!after.ok()) return after.status();
  out.cost.manager_commits = after->manager_commits - before->manager_commits;
  out.cost.manager_commands =
      after->manager_commands - before->manager_commands;
  out.cost.worker_commits = after->worker_commits - before->worker_commits;
  for (const auto& [method, n] : after->worker_calls) {
    auto was = before->worker_calls.find(method);
    out.cost.worker_calls[method] =
        n - (was == before->worker_calls.end() ? 0 : was->second);
  }
  for (const auto& [method, n] : after->worker_call_seconds) {
    auto was = before->worker_call_seconds.find(method);
    out.cost.worker_call_seconds[method] =
        n - (was == before->worker_call_seconds.end() ? 0 : was->second);
  }

  absl::MutexLock lock(&mu);
  std::vector<double> latencies;
  std::vector<std::vector<double>> steps(kStepCount + 1);
  int64_t copies = 0;
  for (int64_t i = 0; i < count; ++i) {
    out.submitted_s =
        std::max(out.submitted_s, absl::ToDoubleSeconds(acked[i] - start));
    if (admitted[i] != absl::InfinitePast()) {
      out.admitted_s =
          std::max(out.admitted_s, absl::ToDoubleSeconds(admitted[i] - start));
      latencies.push_back(absl::ToDoubleMicroseconds(admitted[i] - sent[i]));
      // A step seen out of order (a watch behind another) counts as 0.
      absl::Time before = sent[i];
      for (int step = 0; step <= kStepCount; ++step) {
        const absl::Time at = step == kStepCount ? admitted[i] : seen[i][step];
        if (at == absl::InfinitePast()) continue;
        steps[step].push_back(
            std::max(0.0, absl::ToDoubleMicroseconds(at - before)));
        before = std::max(before, at);
      }
    }
    if (finished[i] != absl::InfinitePast()) {
      out.finished_s =
          std::max(out.finished_s, absl::ToDoubleSeconds(finished[i] - start));
    }
    copies += std::popcount(copied[i]);
    std::string where = "none";
    if (std::popcount(bound[i]) == 1) {
      where = fed.workers[std::countr_zero(bound[i])].name;
    } else if (bound[i] != 0) {
      where = "several";
    }
    ++out.per_cluster[cluster[i].empty() ? "(none)" : cluster[i]];
    if (where != cluster[i]) {
      if (out.misplaced++ == 0) {
        out.first_misplaced =
            absl::StrFormat("%s%d: clusterName \"%s\", bound on %s", prefix, i,
                            cluster[i], where);
      }
    }
  }
  out.copies_per_workload = static_cast<double>(copies) / count;
  {
    std::vector<double> first, last;
    const int64_t tenth = std::max<int64_t>(1, count / 10);
    for (int64_t i = 0; i < count; ++i) {
      if (admitted[i] == absl::InfinitePast()) continue;
      const double us = absl::ToDoubleMicroseconds(admitted[i] - sent[i]);
      if (i < tenth) first.push_back(us);
      if (i >= count - tenth) last.push_back(us);
    }
    out.first_tenth_p50_us = ComputePercentiles(first).p50;
    out.last_tenth_p50_us = ComputePercentiles(last).p50;
  }
  out.latency_us = ComputePercentiles(latencies);
  for (std::vector<double>& v : steps) {
    out.steps_us.push_back(ComputePercentiles(v));
  }
  for (size_t w = 0; w < watch_status.size(); ++w) {
    const absl::Status& s = watch_status[w];
    if (!s.ok() && s.code() != absl::StatusCode::kCancelled &&
        out.first_error.empty()) {
      out.first_error = absl::StrCat("watch: ", s.ToString());
    }
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Rate(const RunResult& r) {
  return r.finished_s > 0 ? r.finished / r.finished_s : 0;
}

// The median of `f` over `runs`, and its range when there are several.
template <typename F>
std::string MedianOf(const std::vector<RunResult>& runs, F f,
                     const std::function<std::string(double)>& format) {
  std::vector<double> v;
  for (const RunResult& r : runs) v.push_back(f(r));
  std::string text = format(Median(v));
  if (v.size() > 1) {
    absl::StrAppend(&text, " (", format(*std::min_element(v.begin(), v.end())),
                    "-", format(*std::max_element(v.begin(), v.end())), ")");
  }
  return text;
}

std::string Seconds(double s) { return absl::StrFormat("%.2f s", s); }

// One run of `count` workloads on a fresh federation after a warm-up.
absl::StatusOr<RunResult> RunOnce(const FederationOptions& options,
                                  const Context& context, double rate) {
  absl::StatusOr<std::unique_ptr<Federation>> fed = StartFederation(
      context, options.workers, options.workloads + options.warmup + 1000);
  if (!fed.ok()) return fed.status();
  if (options.warmup > 0) {
    absl::StatusOr<RunResult> warm =
        Drive(**fed, "warm-", options.warmup, 0, options.in_flight,
              absl::Seconds(60));
    if (!warm.ok()) return warm.status();
    if (warm->timed_out) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the warm-up's ", options.warmup,
          " workloads did not finish within 60 s (", warm->finished, " did; ",
          warm->first_error, "); see ", (*fed)->manager.kqd->log_path()));
    }
  }
  return Drive(**fed, "f-", options.workloads, rate, options.in_flight,
               options.timeout);
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunFederation(
    const FederationOptions& options, const Context& context) {
  std::vector<RunResult> full;
  std::vector<RunResult> paced;
  for (int r = 0; r < options.repeats; ++r) {
    std::fprintf(
        stderr, "federation: %lld workloads, full rate, run %d/%d...\n",
        static_cast<long long>(options.workloads), r + 1, options.repeats);
    absl::StatusOr<RunResult> m = RunOnce(options, context, 0);
    if (!m.ok()) return m.status();
    full.push_back(*std::move(m));
  }
  std::vector<double> full_rates;
  for (const RunResult& r : full) full_rates.push_back(Rate(r));
  const double rate =
      options.paced_rate > 0 ? options.paced_rate : Median(full_rates) / 2;
  if (rate > 0) {
    for (int r = 0; r < options.repeats; ++r) {
      std::fprintf(stderr, "federation: paced at %.0f/s, run %d/%d...\n", rate,
                   r + 1, options.repeats);
      absl::StatusOr<RunResult> m = RunOnce(options, context, rate);
      if (!m.ok()) return m.status();
      paced.push_back(*std::move(m));
    }
  }

  const std::string workers = absl::StrCat(options.workers);
  Table table;
  table.title = absl::StrFormat(
      "federation: MultiKueue, one manager and %d worker kqds on loopback "
      "(AllAtOnce), %s workloads submitted to the manager",
      options.workers, FormatCount(options.workloads));
  table.header = {"run",
                  "end to end workloads/s",
                  "submitted by",
                  "all admitted by",
                  "all finished by",
                  "submit to Admitted p50",
                  "p99",
                  "p99.9",
                  "issue 31's target",
                  "CPU manager / workers / bench"};
  auto fmt_count = [](double v) { return FormatCount(v); };
  auto fmt_us = [](double v) { return FormatMicros(v); };
  // A process's CPU time over the end to end time, in percent of a core.
  auto cpu_share = [](const std::vector<RunResult>& runs,
                      absl::Duration RunResult::*cpu) {
    return MedianOf(
        runs,
        [cpu](const RunResult& r) {
          return 100 * absl::ToDoubleSeconds(r.*cpu) / r.finished_s;
        },
        [](double v) { return absl::StrFormat("%.0f%%", v); });
  };
  auto row = [&](const std::string& name, const std::vector<RunResult>& runs,
                 const std::string& target) {
    table.rows.push_back(
        {name, MedianOf(runs, Rate, fmt_count),
         MedianOf(
             runs, [](const RunResult& r) { return r.submitted_s; }, Seconds),
         MedianOf(
             runs, [](const RunResult& r) { return r.admitted_s; }, Seconds),
         MedianOf(
             runs, [](const RunResult& r) { return r.finished_s; }, Seconds),
         MedianOf(
             runs, [](const RunResult& r) { return r.latency_us.p50; }, fmt_us),
         MedianOf(
             runs, [](const RunResult& r) { return r.latency_us.p99; }, fmt_us),
         MedianOf(
             runs, [](const RunResult& r) { return r.latency_us.p999; },
             fmt_us),
         target,
         absl::StrCat(cpu_share(runs, &RunResult::cpu_manager), " / ",
                      cpu_share(runs, &RunResult::cpu_workers), " / ",
                      cpu_share(runs, &RunResult::cpu_bench))});
  };
  const double full_rate = Median(full_rates);
  row(absl::StrCat("full rate (", options.in_flight, " submits in flight)"),
      full, absl::StrFormat(">= 2,000/s: %.0f%%", 100 * full_rate / 2000));
  if (!paced.empty()) {
    std::vector<double> p99;
    for (const RunResult& r : paced) p99.push_back(r.latency_us.p99);
    row(absl::StrFormat("paced at %s/s (%s)", FormatCount(rate),
                        options.paced_rate > 0 ? "given" : "half"),
        paced, absl::StrFormat("p99 < 100 ms: %s", FormatMicros(Median(p99))));
  }
  table.notes.push_back(absl::StrFormat(
      "Medians of %d runs (range in brackets), each on a fresh manager and "
      "workers after %d warm-up workloads. Times are from the first "
      "submission. Each workload (1 cpu, a Job-like pod template) goes "
      "through the manager's ClusterQueue (MultiKueue check, the default "
      "AllAtOnce dispatcher) to copies on every worker; the first copy "
      "Admitted wins, the others are deleted, the winner is bound, the "
      "check turns Ready and the manager admits it. An agent watching the "
      "manager calls FinishWorkload on each Admitted workload (async, "
      "as SubmitWorkloadAsync); end to end is submissions to the last "
      "Finished seen.",
      options.repeats, options.warmup));
  table.notes.push_back(
      "Latency: from sending SubmitWorkload to the manager's Watch event "
      "that shows the workload Admitted (its MultiKueue check Ready), on "
      "this process's clock. At full rate it is mostly queueing behind the "
      "burst.");
  {
    std::vector<std::string> tenths;
    auto tenth = [&](const std::string& name,
                     const std::vector<RunResult>& runs) {
      if (runs.empty()) return;
      tenths.push_back(absl::StrCat(
          name, " ",
          MedianOf(
              runs, [](const RunResult& r) { return r.first_tenth_p50_us; },
              fmt_us),
          " -> ",
          MedianOf(
              runs, [](const RunResult& r) { return r.last_tenth_p50_us; },
              fmt_us)));
    };
    tenth("full rate", full);
    tenth("paced", paced);
    table.notes.push_back(absl::StrCat(
        "Median latency of the first tenth submitted -> the last tenth: ",
        absl::StrJoin(tenths, "; "),
        " (a paced run whose latency grows did not keep up with its "
        "rate)."));
  }
  table.notes.push_back(absl::StrFormat(
      "CPU: each process's CPU time over the end to end time, in percent of "
      "one core (%d cores shared by the %d kqds and this process).",
      std::thread::hardware_concurrency(), options.workers + 1));
  std::vector<RunResult> all = full;
  all.insert(all.end(), paced.begin(), paced.end());
  int64_t misplaced = 0, errors = 0, timed_out = 0, left = 0;
  std::string first_misplaced, first_error;
  std::map<std::string, int64_t> per_cluster;
  for (const RunResult& r : all) {
    misplaced += r.misplaced;
    errors += r.submit_errors + r.finish_errors;
    timed_out += r.timed_out ? 1 : 0;
    left += r.copies_left;
    if (first_misplaced.empty()) first_misplaced = r.first_misplaced;
    if (first_error.empty()) first_error = r.first_error;
    for (const auto& [c, n] : r.per_cluster) per_cluster[c] += n;
  }
  std::vector<std::string> placed;
  for (const auto& [c, n] : per_cluster) {
    placed.push_back(absl::StrCat(c, " ", FormatCount(n)));
  }
  table.notes.push_back(absl::StrCat(
      "Placement, all runs: every workload's clusterName against the "
      "worker whose copy was bound (watches by origin on each worker): ",
      misplaced == 0
          ? "each on exactly one worker, the one named"
          : absl::StrCat(misplaced, " NOT (first: ", first_misplaced, ")"),
      "; by cluster: ", absl::StrJoin(placed, ", "),
      ". Copies left on the "
      "workers after the finishes: ",
      left, " (median removal ",
      MedianOf(
          all, [](const RunResult& r) { return r.drain_s; }, Seconds),
      " after the last Finished)."));
  if (errors > 0 || timed_out > 0 || !first_error.empty()) {
    table.notes.push_back(absl::StrFormat(
        "%d call errors, %d runs out of time (%s); first error: %s", errors,
        timed_out, absl::FormatDuration(options.timeout), first_error));
  }

  // Costs per workload, from /metrics.
  Table cost;
  cost.title = "federation: cost per workload (full-rate runs, medians)";
  cost.header = {"figure", "kq", "Kueue (published, #8564)"};
  std::map<std::string, std::vector<double>> by_method;
  std::map<std::string, std::vector<double>> mean_ms;
  std::vector<double> calls, commits, commands, worker_commits, copies;
  std::vector<double> calls_per_s, commits_per_s;
  std::vector<double> cpu_manager, cpu_workers, cpu_bench;
  for (const RunResult& r : full) {
    double sum = 0;
    for (const auto& [method, n] : r.cost.worker_calls) {
      by_method[method].push_back(n / r.workloads);
      sum += n;
      auto seconds = r.cost.worker_call_seconds.find(method);
      if (n > 0 && seconds != r.cost.worker_call_seconds.end()) {
        mean_ms[method].push_back(1000 * seconds->second / n);
      }
    }
    calls.push_back(sum / r.workloads);
    calls_per_s.push_back(sum / r.finished_s);
    commits.push_back(r.cost.manager_commits / r.workloads);
    commits_per_s.push_back(r.cost.manager_commits / r.finished_s);
    commands.push_back(r.cost.manager_commands / r.workloads);
    worker_commits.push_back(r.cost.worker_commits / r.workloads);
    copies.push_back(r.copies_per_workload);
    cpu_manager.push_back(absl::ToDoubleMicroseconds(r.cpu_manager) /
                          r.workloads);
    cpu_workers.push_back(absl::ToDoubleMicroseconds(r.cpu_workers) /
                          r.workloads);
    cpu_bench.push_back(absl::ToDoubleMicroseconds(r.cpu_bench) / r.workloads);
  }
  std::vector<std::string> methods;
  for (const auto& [method, v] : by_method) {
    methods.push_back(absl::StrFormat("%s %.3f (%.1f ms each on the worker)",
                                      method, Median(v),
                                      Median(mean_ms[method])));
  }
  cost.rows.push_back(
      {"manager's RPCs to the workers (FederationService calls, all workers)",
       FormatFixed(Median(calls), 3),
       "about 3.8 remote API requests (client-go tokens) on the busiest Kind "
       "alone"});
  cost.rows.push_back({"manager commits (engine batches that stored)",
                       FormatFixed(Median(commits), 3),
                       "about 7.9 manager API requests (client-go tokens)"});
  cost.rows.push_back(
      {"manager engine commands", FormatFixed(Median(commands), 2), ""});
  cost.rows.push_back(
      {absl::StrCat("worker commits (", workers, " workers together)"),
       FormatFixed(Median(worker_commits), 3), ""});
  cost.rows.push_back({"CPU: manager / workers (together) / this process",
                       absl::StrCat(FormatMicros(Median(cpu_manager)), " / ",
                                    FormatMicros(Median(cpu_workers)), " / ",
                                    FormatMicros(Median(cpu_bench))),
                       ""});
  cost.rows.push_back({"copies made (dispatch fan-out)",
                       FormatFixed(Median(copies), 2),
                       absl::StrCat("AllAtOnce copies to all ", workers)});
  cost.notes.push_back(absl::StrCat(
      "RPCs by method: ", absl::StrJoin(methods, ", "),
      ". Counted on the workers (kq_grpc_requests_total of "
      "kq.v1.FederationService; the manager's list and watch per link are "
      "left out), from before the first submission until the workers hold "
      "no copy; each RPC carries up to 2,000 calls of one kind "
      "(worker_link.cc)."));
  auto bracketed = [](const std::string& fraction) {
    return fraction.empty() ? fraction : absl::StrCat(" (", fraction, ")");
  };
  cost.notes.push_back(absl::StrFormat(
      "At full rate the manager sent %s RPCs/s to its workers%s and "
      "committed %s times a second%s. Kueue's figures are API requests "
      "through client-go's rate limiters, kq's are RPCs and SQLite commits, "
      "each carrying many workloads.",
      FormatCount(Median(calls_per_s)),
      bracketed(Fraction(Median(calls_per_s),
                         context.limits.grpc_calls_per_second.count(1) > 0
                             ? context.limits.grpc_calls_per_second.at(1)
                             : 0,
                         "no-op gRPC at 1 in flight")),
      FormatCount(Median(commits_per_s)),
      bracketed(Fraction(Median(commits_per_s),
                         context.limits.sqlite_commits_per_second,
                         "the disk's durable commits/s"))));

  Table kueue;
  kueue.title = "federation: beside Kueue's published MultiKueue throughput";
  kueue.header = {"setup", "workloads/s", "kq's full rate / it"};
  auto versus = [&](const std::string& setup, double value,
                    const std::string& text) {
    kueue.rows.push_back(
        {setup, text, absl::StrFormat("%.0fx", full_rate / value)});
  };
  kueue.rows.push_back(
      {absl::StrFormat("kq, %s workloads, %d workers, %d "
                       "cores shared",
                       FormatCount(options.workloads), options.workers,
                       std::thread::hardware_concurrency()),
       FormatCount(full_rate), "1x"});
  versus(
      "Kueue, client-go defaults (5 QPS per worker per Kind), 3 envtest "
      "workers, 32 cores (#8564)",
      1.31, "1.31");
  versus("Kueue, remote QPS 300, manager QPS 300 (#8564)", 38.0, "38.0");
  versus("Kueue, remote QPS 300, manager QPS 3000 (#8564)", 95.3, "95.3");
  versus(
      "Kueue's MultiKueue perf test, 1,000 workloads at 1,000 QPS "
      "(#13936)",
      100, "97.0-102.4");
  versus(
      "Kueue user report: 1,000 workloads over 10 workers in ~15 min "
      "(#14973)",
      1000.0 / 900, "~1.1");
  kueue.notes.push_back(
      "Kueue's figures are from its issues and benchmark (federation.md "
      "§3), on other machines: orders of magnitude, not a like-for-like "
      "comparison. Kueue's bounds in #13936: at least 75 workloads/s, "
      "admission p95 under 15 s.");
  Table steps;
  steps.title =
      "federation: where the submit-to-Admitted latency goes (each step's "
      "share, medians over the runs)";
  steps.header = {"step", "full rate p50", "p99", "paced p50", "p99"};
  for (int step = 0; step <= kStepCount; ++step) {
    auto p50 = [step](const RunResult& r) {
      return step < static_cast<int>(r.steps_us.size()) ? r.steps_us[step].p50
                                                        : 0;
    };
    auto p99 = [step](const RunResult& r) {
      return step < static_cast<int>(r.steps_us.size()) ? r.steps_us[step].p99
                                                        : 0;
    };
    std::vector<double> a, b, c, d;
    for (const RunResult& r : full) {
      a.push_back(p50(r));
      b.push_back(p99(r));
    }
    for (const RunResult& r : paced) {
      c.push_back(p50(r));
      d.push_back(p99(r));
    }
    steps.rows.push_back({kStepNames[step], FormatMicros(Median(a)),
                          FormatMicros(Median(b)),
                          paced.empty() ? "" : FormatMicros(Median(c)),
                          paced.empty() ? "" : FormatMicros(Median(d))});
  }
  steps.notes.push_back(
      "Each step ends when this process first saw it: the manager's Watch "
      "for QuotaReserved, clusterName and Admitted; the workers' Watches by "
      "origin for the copies. Percentiles are per step, so they do not add "
      "up to the end to end ones.");
  return std::vector<Table>{table, steps, cost, kueue};
}

}  // namespace kq::bench
