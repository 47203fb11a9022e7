// Kueue's scheduler performance test (test/performance/scheduler) against a
// real kqd: the objects of configs/<name>/generator.yaml created as Kueue's
// runner/generator does, workloads created on its schedule, and runners
// that finish each workload runtimeMs after they see it admitted (Kueue's
// runner/controller). Reports what checker/checker_test.go compares with
// rangespec.yaml, beside Kueue's calibrated figures and a lower bound no
// scheduler can beat.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

#include "bench/bench.h"
#include "bench/objects.h"
#include "bench/worker_pool.h"
#include "proto/util/workload.h"

namespace kq::bench {
namespace {

// Kueue's generator labels (runner/generator/generator.go).
constexpr char kRunningTimeLabel[] =
    "kueue.x-k8s.io/performance-scheduler-running-ms";
constexpr char kClassLabel[] = "kueue.x-k8s.io/performance-scheduler-class";
constexpr char kCleanupLabel[] = "kueue.x-k8s.io/performance-scheduler-cleanup";

// One workloadsSet of generator.yaml with its one workload template.
struct WorkloadClass {
  std::string name;
  int count = 0;
  int creation_interval_ms = 0;
  int runtime_ms = 0;
  int priority = 0;
  int cpu = 0;
};

// A figure of Kueue's rangespec.yaml: the calibrated mean and the bound the
// checker enforces.
struct KueueFigure {
  double mean = 0;
  double threshold = 0;
};

struct PerfConfig {
  std::string name;
  int cohorts = 0;
  int queues_per_cohort = 0;
  int nominal_cpu = 20;
  int borrowing_limit_cpu = 100;
  std::vector<WorkloadClass> classes;
  KueueFigure wall_ms;
  KueueFigure min_usage_percent;
  std::map<std::string, KueueFigure> time_to_admission_ms;
  // Workloads of the unscaled config (what Kueue's figures are for).
  int64_t full_workloads = 0;
};

// configs/baseline/{generator,rangespec}.yaml.
PerfConfig Baseline() {
  PerfConfig c;
  c.name = "baseline";
  c.cohorts = 5;
  c.queues_per_cohort = 6;
  c.classes = {{"small", 350, 100, 200, 50, 1},
               {"medium", 100, 500, 500, 100, 5},
               {"large", 50, 1200, 1000, 200, 20}};
  c.wall_ms = {351116.4, 425000};
  c.min_usage_percent = {55.9, 50};
  c.time_to_admission_ms = {{"large", {16501, 23000}},
                            {"medium", {76768, 90000}},
                            {"small", {215468, 260000}}};
  return c;
}

// configs/large-scale/{generator,rangespec}.yaml.
PerfConfig LargeScale() {
  PerfConfig c;
  c.name = "large-scale";
  c.cohorts = 10;
  c.queues_per_cohort = 100;
  c.classes = {{"small", 35, 60, 150, 50, 1},
               {"medium", 11, 300, 350, 100, 5},
               {"large", 4, 700, 700, 200, 20}};
  c.wall_ms = {1179411, 1416000};
  c.min_usage_percent = {38.64, 31.6};
  c.time_to_admission_ms = {{"large", {105604, 128000}},
                            {"medium", {256413, 308000}},
                            {"small", {700379, 841000}}};
  return c;
}

// Names as Kueue's generator makes them: ClusterQueue
// "<class>-<queueSetIdx>-<queueIdx>-<cohort>", its namespace and LocalQueue
// of the same name; workload "<class>-<wlSetIdx>-<si>-<templateIdx>".
std::string CohortName(int cohort) { return absl::StrCat("cohort-", cohort); }
std::string QueueName(const PerfConfig& c, int cq) {
  return absl::StrCat("cq-0-", cq % c.queues_per_cohort, "-",
                      CohortName(cq / c.queues_per_cohort));
}

// The quota-packing lower bound on the wall time, measured from the start
// of workload creation. Within a cohort, running workloads can never use
// more cpu than the sum of its ClusterQueues' nominal quotas (borrowing
// only moves quota between the cohort's queues; borrowingLimit further caps
// one queue at nominal + limit). A workload cannot start before it is
// created. So whatever the scheduler does, the work (cpu x runtime) of the
// workloads created at or after time t still has to run after t:
//   wall >= t + work(created >= t) / capacity      for every creation time t,
// for the cohort (capacity = sum of nominal) and for each ClusterQueue
// (capacity = min(cohort's, nominal + borrowingLimit)); and
//   wall >= creation time + runtime                for every workload.
// The bound is the largest of these. It treats cpu as fluid (a 20-cpu
// workload may use any 20 free cpus at once) and admission as instant, so
// only a perfect scheduler with zero latency reaches it. Every cohort is
// alike, so one cohort's schedule decides it.
struct Bound {
  double wall_ms = 0;
  double creation_ms = 0;   // last creation
  double work_cpu_ms = 0;   // all cohorts
  double capacity_cpu = 0;  // all cohorts
};
Bound PackingBound(const PerfConfig& c) {
  struct Release {
    double at_ms;
    double work;  // cpu x ms
  };
  std::vector<Release> releases;  // of one ClusterQueue
  Bound bound;
  for (const WorkloadClass& cls : c.classes) {
    for (int i = 0; i < cls.count; ++i) {
      const double at = (i + 1.0) * cls.creation_interval_ms;
      releases.push_back({at, 1.0 * cls.cpu * cls.runtime_ms});
      bound.creation_ms = std::max(bound.creation_ms, at);
      bound.wall_ms = std::max(bound.wall_ms, at + cls.runtime_ms);
    }
  }
  std::sort(
      releases.begin(), releases.end(),
      [](const Release& a, const Release& b) { return a.at_ms < b.at_ms; });
  const double cohort_capacity = 1.0 * c.nominal_cpu * c.queues_per_cohort;
  const double queue_capacity =
      std::min(cohort_capacity, 1.0 * c.nominal_cpu + c.borrowing_limit_cpu);
  double after = 0;  // work of one queue created at or after releases[i]
  for (size_t i = releases.size(); i-- > 0;) {
    after += releases[i].work;
    if (i > 0 && releases[i - 1].at_ms == releases[i].at_ms) continue;
    const double t = releases[i].at_ms;
    bound.wall_ms = std::max({bound.wall_ms,
                              t + after * c.queues_per_cohort / cohort_capacity,
                              t + after / queue_capacity});
  }
  bound.work_cpu_ms = after * c.queues_per_cohort * c.cohorts;
  bound.capacity_cpu = cohort_capacity * c.cohorts;
  return bound;
}

// One workload to create: ClusterQueue index, class index, index in its
// set, and when (from the start of creation). Kueue's generator waits
// creationIntervalMs before each creation.
struct Planned {
  absl::Duration at;
  int cq = 0;
  int cls = 0;
  int index = 0;
};

// What the runner knows of one workload.
struct Track {
  int cls = 0;
  int64_t cpu_milli = 0;
  absl::Duration runtime;
  std::string namespace_name;
  std::string name;
  bool submitted = false;
  bool holding = false;  // admitted and not finished
  bool finished = false;
  int generation = 0;  // admissions so far; a timer of an older one is void
  int evictions = 0;
  absl::Time created = absl::InfinitePast();
  absl::Time admitted = absl::InfinitePast();
  double time_to_admission_ms = -1;
  // Admitted to Finished of the run that finished (quota held).
  double held_ms = -1;
};

absl::Time TimeOf(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

class PerfRun {
 public:
  PerfRun(const PerfConfig& config, const KueuePerfOptions& options,
          client::Client& client, pid_t kqd_pid)
      : config_(config),
        options_(options),
        client_(client),
        kqd_pid_(kqd_pid),
        submit_pool_(options.submitters),
        finish_pool_(options.finishers) {}

  ~PerfRun() {
    StopTimer();
    submit_pool_.Join();
    finish_pool_.Join();
  }

  absl::Status CreateQueues() {
    v1::ApplyRequest request;
    v1::ConfigObject rf = MakeFlavor("rf");
    (*rf.mutable_resource_flavor()
          ->mutable_metadata()
          ->mutable_labels())[kCleanupLabel] = "true";
    *request.add_objects() = rf;
    const int queues = config_.cohorts * config_.queues_per_cohort;
    for (int q = 0; q < queues; ++q) {
      const std::string name = QueueName(config_, q);
      ClusterQueueShape shape;
      shape.name = name;
      shape.cohort = CohortName(q / config_.queues_per_cohort);
      shape.flavor = "rf";
      shape.nominal_cpu = absl::StrCat(config_.nominal_cpu);
      shape.borrowing_limit_cpu = absl::StrCat(config_.borrowing_limit_cpu);
      shape.reclaim_within_cohort = "Any";
      shape.within_cluster_queue = "LowerPriority";
      shape.labels = {{kClassLabel, "cq"}, {kCleanupLabel, "true"}};
      *request.add_objects() = MakeClusterQueue(shape);
      v1::ConfigObject ns = MakeNamespace(name);
      (*ns.mutable_namespace_()
            ->mutable_metadata()
            ->mutable_labels())[kCleanupLabel] = "true";
      *request.add_objects() = ns;
      *request.add_objects() = MakeLocalQueue(name, name, name);
    }
    absl::StatusOr<v1::ApplyResponse> applied = client_.Apply(request);
    return applied.status();
  }

  // Lays out every workload and its creation time.
  void Plan() {
    const int queues = config_.cohorts * config_.queues_per_cohort;
    for (int q = 0; q < queues; ++q) {
      for (size_t c = 0; c < config_.classes.size(); ++c) {
        const WorkloadClass& cls = config_.classes[c];
        for (int i = 0; i < cls.count; ++i) {
          plan_.push_back(
              {absl::Milliseconds((i + 1) * cls.creation_interval_ms), q,
               static_cast<int>(c), i});
        }
      }
    }
    std::stable_sort(
        plan_.begin(), plan_.end(),
        [](const Planned& a, const Planned& b) { return a.at < b.at; });
    tracks_.resize(plan_.size());
    for (size_t id = 0; id < plan_.size(); ++id) {
      const Planned& p = plan_[id];
      const WorkloadClass& cls = config_.classes[p.cls];
      Track& t = tracks_[id];
      t.cls = p.cls;
      t.cpu_milli = 1000LL * cls.cpu;
      t.runtime = absl::Milliseconds(cls.runtime_ms);
      t.namespace_name = QueueName(config_, p.cq);
      t.name = absl::StrCat(cls.name, "-", p.cls, "-", p.index, "-0");
      by_key_[t.namespace_name + "/" + t.name] = id;
    }
    expected_ = static_cast<int64_t>(plan_.size());
  }

  v1::Workload WorkloadOf(size_t id) const {
    const Track& t = tracks_[id];
    const WorkloadClass& cls = config_.classes[t.cls];
    WorkloadShape shape;
    shape.namespace_name = t.namespace_name;
    shape.name = t.name;
    shape.queue_name = t.namespace_name;
    shape.cpu = absl::StrCat(cls.cpu);
    shape.priority = cls.priority;
    shape.labels = {{kRunningTimeLabel, absl::StrCat(cls.runtime_ms)},
                    {kClassLabel, cls.name}};
    return MakeWorkload(shape);
  }

  // Runs the whole test; returns false on timeout.
  absl::StatusOr<bool> Run() {
    absl::StatusOr<v1::ListWorkloadsResponse> listed =
        client_.ListWorkloads(v1::ListWorkloadsRequest());
    if (!listed.ok()) return listed.status();
    int64_t from = listed->revision();
    kqd_cpu_before_ = CpuTime(kqd_pid_);
    self_cpu_before_ = CpuTime();
    start_ = absl::Now();
    std::thread watcher([this, from] { WatchLoop(from); });
    timer_thread_ = std::thread([this] { TimerLoop(); });
    std::thread dispatcher([this] { Dispatch(); });
    bool completed = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      completed = done_cv_.wait_until(
          lock, absl::ToChronoTime(start_ + options_.timeout),
          [this] { return finished_ >= expected_ && dispatched_all_; });
      aborting_ = !completed;
    }
    done_at_ = absl::Now();
    kqd_cpu_ = CpuTime(kqd_pid_) - kqd_cpu_before_;
    self_cpu_ = CpuTime() - self_cpu_before_;
    kqd_rss_ = RssBytes(kqd_pid_);
    dispatcher.join();
    if (!completed) {
      submit_pool_.Discard();
      finish_pool_.Discard();
    }
    StopTimer();
    // The watch ends at the event that completes the run; after a timeout
    // the caller stops kqd, which ends it.
    watcher_ = std::move(watcher);
    return completed;
  }

  void JoinWatcher() {
    if (watcher_.joinable()) watcher_.join();
  }

  Table Report(const Bound& bound, const Context& context, bool completed,
               double scale) const;

 private:
  void Dispatch() {
    const bool batched = options_.submit_mode == "apply";
    size_t next = 0;
    while (next < plan_.size()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (aborting_) break;
      }
      const absl::Time due = start_ + plan_[next].at;
      const absl::Duration wait = due - absl::Now();
      if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
      // Everything due now: one task each, or Apply batches of 100.
      const absl::Time now = absl::Now();
      std::vector<size_t> ready;
      while (next < plan_.size() && start_ + plan_[next].at <= now) {
        ready.push_back(next++);
      }
      if (!batched) {
        for (size_t id : ready) {
          submit_pool_.Post([this, id] { SubmitOne(id); });
        }
        continue;
      }
      for (size_t i = 0; i < ready.size(); i += 100) {
        std::vector<size_t> chunk(
            ready.begin() + i, ready.begin() + std::min(ready.size(), i + 100));
        submit_pool_.Post([this, chunk] { SubmitBatch(chunk); });
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    dispatched_all_ = true;
    done_cv_.notify_all();
  }

  void SubmitOne(size_t id) {
    const absl::Time sent = absl::Now();
    absl::StatusOr<v1::SubmitWorkloadResponse> r =
        client_.SubmitWorkload(WorkloadOf(id));
    const absl::Time acked = absl::Now();
    std::lock_guard<std::mutex> lock(mu_);
    creation_lag_ms_.push_back(
        absl::ToDoubleMilliseconds(sent - (start_ + plan_[id].at)));
    submit_latency_us_.push_back(absl::ToDoubleMicroseconds(acked - sent));
    last_ack_ = std::max(last_ack_, acked);
    if (r.ok()) {
      tracks_[id].submitted = true;
    } else {
      FailSubmit(r.status());
    }
  }

  void SubmitBatch(const std::vector<size_t>& ids) {
    v1::ApplyRequest request;
    for (size_t id : ids) *request.add_workloads() = WorkloadOf(id);
    const absl::Time sent = absl::Now();
    absl::StatusOr<v1::ApplyResponse> r = client_.Apply(request);
    const absl::Time acked = absl::Now();
    std::lock_guard<std::mutex> lock(mu_);
    submit_latency_us_.push_back(absl::ToDoubleMicroseconds(acked - sent));
    last_ack_ = std::max(last_ack_, acked);
    for (size_t id : ids) {
      creation_lag_ms_.push_back(
          absl::ToDoubleMilliseconds(sent - (start_ + plan_[id].at)));
      if (r.ok()) {
        tracks_[id].submitted = true;
      } else {
        FailSubmit(r.status());
      }
    }
  }

  // mu_ held. A workload that was never created never finishes.
  void FailSubmit(const absl::Status& status) {
    // Calls cut short by stopping kqd at the timeout are not failures.
    if (aborting_) return;
    if (submit_errors_++ == 0) first_error_ = status.ToString();
    --expected_;
    done_cv_.notify_all();
  }

  void WatchLoop(int64_t from) {
    int64_t last = from;
    while (true) {
      v1::WatchRequest request;
      request.set_from_revision(last);
      request.add_kinds("Workload");
      absl::Status status =
          client_.Watch(request, [&](const v1::WatchEvent& ev) {
            // Resuming repeats the last revision's events (handling is
            // idempotent), so never resume from a revision half delivered.
            last = std::max(last, ev.revision() - 1);
            return Handle(ev.workload(), absl::Now());
          });
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (aborting_ || (finished_ >= expected_ && dispatched_all_)) return;
        ++watch_restarts_;
        watch_error_ = status.ToString();
      }
      if (status.code() == absl::StatusCode::kUnavailable) return;  // kqd gone
      // Fell out of kqd's event log: list everything and go on from there.
      v1::ListWorkloadsRequest list;
      list.set_include_finished(true);
      absl::StatusOr<v1::ListWorkloadsResponse> listed =
          client_.ListWorkloads(list);
      if (!listed.ok()) return;
      for (const v1::Workload& wl : listed->workloads()) {
        Handle(wl, absl::Now());
      }
      last = listed->revision();
    }
  }

  // Returns false once every workload finished (ends the watch).
  bool Handle(const v1::Workload& wl, absl::Time received) {
    auto it =
        by_key_.find(wl.metadata().namespace_() + "/" + wl.metadata().name());
    std::lock_guard<std::mutex> lock(mu_);
    ++watch_events_;
    if (it == by_key_.end()) return true;
    const size_t id = it->second;
    Track& t = tracks_[id];
    if (t.finished) return !(finished_ >= expected_ && dispatched_all_);
    if (t.created == absl::InfinitePast()) {
      t.created = TimeOf(wl.metadata().creation_timestamp());
    }
    const v1::Condition* admitted = proto_util::FindCondition(wl, "Admitted");
    const v1::Condition* finished = proto_util::FindCondition(wl, "Finished");
    const bool is_finished = proto_util::IsFinished(wl);
    const bool is_admitted = proto_util::IsAdmitted(wl);
    const bool holding = is_admitted && !is_finished;
    const absl::Time admitted_at =
        admitted != nullptr ? TimeOf(admitted->last_transition_time())
                            : received;
    // Evicted and admitted again between two events: both transitions.
    if (holding && t.holding && admitted_at != t.admitted) {
      Release(t, admitted_at, /*finished=*/false);
    }
    if (holding && !t.holding) {
      t.holding = true;
      t.admitted = admitted_at;
      // Kueue's recorder: creation to the Admitted condition's time, the
      // last admission counting after an eviction.
      t.time_to_admission_ms =
          absl::ToDoubleMilliseconds(admitted_at - t.created);
      ++t.generation;
      usage_.push_back({admitted_at, t.cpu_milli});
      watch_delay_ms_.push_back(
          absl::ToDoubleMilliseconds(received - admitted_at));
      ++admissions_;
      // Kueue's runner finishes runtimeMs after it saw the admission.
      {
        std::lock_guard<std::mutex> timer_lock(timer_mu_);
        timers_.push({received + t.runtime, id, t.generation});
      }
      timer_cv_.notify_one();
    } else if (!holding && t.holding) {
      absl::Time at = received;
      if (is_finished) {
        at = TimeOf(finished->last_transition_time());
      } else if (admitted != nullptr) {
        at = admitted_at;
      }
      Release(t, at, is_finished);
    } else if (is_finished) {
      t.finished = true;
      ++finished_;
    }
    if (finished_ >= expected_ && dispatched_all_) {
      done_cv_.notify_all();
      return false;
    }
    return true;
  }

  // mu_ held.
  void Release(Track& t, absl::Time at, bool finished) {
    t.holding = false;
    usage_.push_back({at, -t.cpu_milli});
    if (finished) {
      t.finished = true;
      t.held_ms = absl::ToDoubleMilliseconds(at - t.admitted);
      ++finished_;
      last_finish_ = std::max(last_finish_, at);
    } else {
      ++t.evictions;
      ++evictions_;
    }
  }

  struct Timer {
    absl::Time due;
    size_t id;
    int generation;
    bool operator>(const Timer& o) const { return due > o.due; }
  };

  void TimerLoop() {
    std::unique_lock<std::mutex> lock(timer_mu_);
    while (!timer_stop_) {
      if (timers_.empty()) {
        timer_cv_.wait(lock);
        continue;
      }
      const Timer next = timers_.top();
      if (absl::Now() < next.due) {
        timer_cv_.wait_until(lock, absl::ToChronoTime(next.due));
        continue;
      }
      timers_.pop();
      finish_pool_.Post([this, next] { FinishOne(next); });
    }
  }

  void StopTimer() {
    {
      std::lock_guard<std::mutex> lock(timer_mu_);
      timer_stop_ = true;
    }
    timer_cv_.notify_all();
    if (timer_thread_.joinable()) timer_thread_.join();
  }

  void FinishOne(const Timer& timer) {
    std::string ns, name;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const Track& t = tracks_[timer.id];
      // Evicted since (or finished): this admission's run is over.
      if (!t.holding || t.generation != timer.generation) return;
      ns = t.namespace_name;
      name = t.name;
    }
    const absl::Time sent = absl::Now();
    absl::StatusOr<v1::Workload> r =
        client_.FinishWorkload(ns, name, true, "By test runner");
    const absl::Time acked = absl::Now();
    std::lock_guard<std::mutex> lock(mu_);
    finish_latency_us_.push_back(absl::ToDoubleMicroseconds(acked - sent));
    if (!r.ok() && finish_refused_++ == 0) {
      first_refusal_ = r.status().ToString();
    }
  }

  const PerfConfig& config_;
  const KueuePerfOptions& options_;
  client::Client& client_;
  const pid_t kqd_pid_;

  std::vector<Planned> plan_;
  std::unordered_map<std::string, size_t> by_key_;

  mutable std::mutex mu_;
  std::condition_variable done_cv_;
  std::vector<Track> tracks_;
  std::vector<std::pair<absl::Time, int64_t>> usage_;
  std::vector<double> creation_lag_ms_;
  std::vector<double> submit_latency_us_;
  std::vector<double> finish_latency_us_;
  std::vector<double> watch_delay_ms_;
  int64_t expected_ = 0;
  int64_t finished_ = 0;
  int64_t admissions_ = 0;
  int64_t evictions_ = 0;
  int64_t finish_refused_ = 0;
  int64_t submit_errors_ = 0;
  int64_t watch_events_ = 0;
  int64_t watch_restarts_ = 0;
  std::string first_error_;
  std::string watch_error_;
  std::string first_refusal_;
  bool dispatched_all_ = false;
  bool aborting_ = false;
  absl::Time start_;
  absl::Time done_at_;
  absl::Time last_ack_ = absl::InfinitePast();
  absl::Time last_finish_ = absl::InfinitePast();
  absl::Duration kqd_cpu_before_, self_cpu_before_, kqd_cpu_, self_cpu_;
  int64_t kqd_rss_ = 0;

  std::mutex timer_mu_;
  std::condition_variable timer_cv_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  bool timer_stop_ = false;
  std::thread timer_thread_;
  std::thread watcher_;

  WorkerPool submit_pool_;
  WorkerPool finish_pool_;
};

std::string Seconds(double ms) {
  if (ms < 1000) return absl::StrFormat("%.0f ms", ms);
  return absl::StrFormat("%.1f s", ms / 1000);
}

Table PerfRun::Report(const Bound& bound, const Context& context,
                      bool completed, double scale) const {
  std::lock_guard<std::mutex> lock(mu_);
  const bool full = scale == 1.0;
  Table table;
  const int queues = config_.cohorts * config_.queues_per_cohort;
  table.title = absl::StrFormat(
      "kueue-perf %s: %d cohorts x %d ClusterQueues, %s workloads%s",
      config_.name, config_.cohorts, config_.queues_per_cohort,
      FormatCount(plan_.size()),
      full ? "" : absl::StrFormat(" (--scale %g)", scale));
  table.header = {"metric",
                  "kq",
                  "Kueue (mean)",
                  "Kueue rangespec",
                  "packing lower bound",
                  "kq / bound"};
  // Kueue's figures hold for the full config only: parenthesised otherwise.
  auto kueue = [&](const std::string& s) {
    return full ? s : absl::StrCat("(", s, ")");
  };
  // After a timeout the run ends at the timeout.
  const absl::Time end = !completed || last_finish_ == absl::InfinitePast()
                             ? done_at_
                             : last_finish_;
  const double wall_ms = absl::ToDoubleMilliseconds(end - start_);
  table.rows.push_back(
      {"wall time (creation start to last Finished)",
       completed ? Seconds(wall_ms)
                 : absl::StrFormat("> %s (timeout; %s of %s finished)",
                                   Seconds(wall_ms), FormatCount(finished_),
                                   FormatCount(expected_)),
       kueue(Seconds(config_.wall_ms.mean)),
       kueue("<= " + Seconds(config_.wall_ms.threshold)),
       Seconds(bound.wall_ms),
       absl::StrFormat("%s%.2fx", completed ? "" : "> ",
                       wall_ms / bound.wall_ms)});
  // Kueue's clusterQueueClassesMinUsage: cpu used (mcpu x ms, summed over
  // the queues) over nominal quota x monitoring time, in percent.
  std::vector<std::pair<absl::Time, int64_t>> usage = usage_;
  std::sort(usage.begin(), usage.end());
  double used = 0;  // mcpu x ms
  int64_t level = 0;
  absl::Time previous = start_;
  for (const auto& [at, delta] : usage) {
    const absl::Time t = std::clamp(at, start_, end);
    used += level * absl::ToDoubleMilliseconds(t - previous);
    previous = t;
    level += delta;
  }
  const double nominal_mcpu = 1000.0 * config_.nominal_cpu * queues;
  const double usage_percent = 100.0 * used / (nominal_mcpu * wall_ms);
  const double bound_usage =
      100.0 * bound.work_cpu_ms / (bound.capacity_cpu * bound.wall_ms);
  table.rows.push_back(
      {"ClusterQueue usage (cpu used / nominal, avg over the run)",
       absl::StrFormat("%.1f%%", usage_percent),
       kueue(absl::StrFormat("%.2f%%", config_.min_usage_percent.mean)),
       kueue(absl::StrFormat(">= %.1f%%", config_.min_usage_percent.threshold)),
       absl::StrFormat("%.1f%% (at the bound)", bound_usage), ""});
  std::vector<std::string> held_notes;
  for (size_t c = config_.classes.size(); c-- > 0;) {
    const WorkloadClass& cls = config_.classes[c];
    double sum = 0;
    int n = 0;
    for (const Track& t : tracks_) {
      if (t.cls != static_cast<int>(c) || t.time_to_admission_ms < 0) continue;
      sum += t.time_to_admission_ms;
      ++n;
    }
    double held = 0;
    int held_n = 0;
    for (const Track& t : tracks_) {
      if (t.cls != static_cast<int>(c) || t.held_ms < 0) continue;
      held += t.held_ms;
      ++held_n;
    }
    if (held_n > 0) {
      held_notes.push_back(absl::StrFormat("%s %s for a %s runtime", cls.name,
                                           Seconds(held / held_n),
                                           Seconds(cls.runtime_ms)));
    }
    const KueueFigure& k = config_.time_to_admission_ms.at(cls.name);
    table.rows.push_back(
        {absl::StrFormat("avg time to admission, %s (%d cpu, p%d)", cls.name,
                         cls.cpu, cls.priority),
         n > 0 ? Seconds(sum / n) : "-", kueue(Seconds(k.mean)),
         kueue("<= " + Seconds(k.threshold)), "", ""});
  }
  const double rate = plan_.size() / (wall_ms / 1000);
  table.rows.push_back(
      {"workloads per second (created, admitted, finished)",
       FormatFixed(rate, 1),
       kueue(FormatFixed(config_.full_workloads / (config_.wall_ms.mean / 1000),
                         1)),
       "", FormatFixed(plan_.size() / (bound.wall_ms / 1000), 1), ""});

  std::vector<double> lag = creation_lag_ms_, submit = submit_latency_us_,
                      finish = finish_latency_us_, watch = watch_delay_ms_;
  Percentiles lag_p = ComputePercentiles(lag);
  Percentiles submit_p = ComputePercentiles(submit);
  Percentiles finish_p = ComputePercentiles(finish);
  Percentiles watch_p = ComputePercentiles(watch);
  table.notes.push_back(absl::StrFormat(
      "Creation schedule (Kueue's generator.yaml): the last workload is due "
      "%s after the start; kq acknowledged the last creation at %s. "
      "Creation lag behind schedule p50 %.1f ms, p99 %.1f ms, max %.1f ms "
      "(%s, %d threads).",
      Seconds(bound.creation_ms),
      last_ack_ == absl::InfinitePast()
          ? "-"
          : Seconds(absl::ToDoubleMilliseconds(last_ack_ - start_)),
      lag_p.p50, lag_p.p99, lag_p.max,
      options_.submit_mode == "apply" ? "Apply batches of up to 100"
                                      : "one SubmitWorkload per workload",
      options_.submitters));
  table.notes.push_back(absl::StrFormat(
      "Client-side latencies: %s p50 %s, p99 %s; FinishWorkload p50 %s, "
      "p99 %s; Watch delivery after the Admitted condition's time p50 "
      "%.1f ms, p99 %.1f ms.",
      options_.submit_mode == "apply" ? "Apply" : "SubmitWorkload",
      FormatMicros(submit_p.p50), FormatMicros(submit_p.p99),
      FormatMicros(finish_p.p50), FormatMicros(finish_p.p99), watch_p.p50,
      watch_p.p99));
  table.notes.push_back(absl::StrCat(
      "Quota held per run (Admitted to Finished condition times, avg): ",
      absl::StrJoin(held_notes, "; "),
      ". The excess over the runtime is the Watch delivery plus the "
      "FinishWorkload call: it counts as usage, as in Kueue's test."));
  const double run_s = absl::ToDoubleSeconds(done_at_ - start_);
  table.notes.push_back(absl::StrFormat(
      "CPU over the run (%.1f s): kqd %.1f s (%.0f%% of one core), this "
      "client %.1f s; %s admissions (%s preemptions), %s watch events, "
      "kqd RSS at the end %.0f MiB.",
      run_s, absl::ToDoubleSeconds(kqd_cpu_),
      100 * absl::ToDoubleSeconds(kqd_cpu_) / run_s,
      absl::ToDoubleSeconds(self_cpu_), FormatCount(admissions_),
      FormatCount(evictions_), FormatCount(watch_events_),
      kqd_rss_ / 1048576.0));
  if (submit_errors_ > 0) {
    table.notes.push_back(absl::StrFormat("%d creations failed (first: %s).",
                                          submit_errors_, first_error_));
  }
  if (finish_refused_ > 0) {
    table.notes.push_back(absl::StrFormat(
        "%d FinishWorkload calls refused (first: %s): the workload was "
        "preempted after the runner saw it admitted; it finishes after its "
        "next admission.",
        finish_refused_, first_refusal_));
  }
  if (watch_restarts_ > 0) {
    table.notes.push_back(absl::StrFormat("%d watch restarts (last: %s).",
                                          watch_restarts_, watch_error_));
  }
  table.notes.push_back(
      "Packing lower bound: per cohort, work created at or after t (cpu x "
      "runtime) cannot run before t on more cpu than the cohort's nominal "
      "quota (per ClusterQueue: nominal + borrowingLimit); the bound is the "
      "largest t + remaining work / capacity, or creation + runtime; cpu "
      "treated as fluid and admission as instant (bench/kueue_perf.cc, "
      "PackingBound).");
  if (!full) {
    table.notes.push_back(
        "Kueue's figures (in parentheses) are for the full config, not this "
        "scale.");
  }
  table.notes.push_back(
      "Kueue's wall time is minimalkueue's process wall time on envtest, "
      "from its rangespec.yaml (calibrated means of its CI runs); kq's "
      "starts when the first workload's creation interval starts.");
  const double unary_limit = context.limits.grpc_calls_per_second.count(64)
                                 ? context.limits.grpc_calls_per_second.at(64)
                                 : 0;
  std::string fraction =
      Fraction(rate, unary_limit, "no-op gRPC calls/s at 64 in flight");
  if (!fraction.empty()) {
    table.notes.push_back(absl::StrCat(
        "Workloads per second as a fraction of the machine: ", fraction,
        " (each workload takes 2 unary calls and ~3 watch events)."));
  }
  return table;
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunKueuePerf(const KueuePerfOptions& options,
                                                const Context& context) {
  PerfConfig config;
  if (options.config == "baseline") {
    config = Baseline();
  } else if (options.config == "large-scale") {
    config = LargeScale();
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--config: ", options.config, " (want baseline or large-scale)"));
  }
  for (const WorkloadClass& cls : config.classes) {
    config.full_workloads +=
        int64_t{cls.count} * config.cohorts * config.queues_per_cohort;
  }
  for (WorkloadClass& cls : config.classes) {
    cls.count =
        std::max(1, static_cast<int>(std::lround(cls.count * options.scale)));
  }
  const Bound bound = PackingBound(config);

  TempDir dir("kq-bench-perf");
  Kqd kqd(context.kqd_path, dir.path());
  if (absl::Status s = kqd.Start(); !s.ok()) return s;
  std::unique_ptr<client::Client> client = kqd.NewClient();
  PerfRun run(config, options, *client, kqd.pid());
  const absl::Time setup_start = absl::Now();
  if (absl::Status s = run.CreateQueues(); !s.ok()) return s;
  const absl::Duration setup = absl::Now() - setup_start;
  run.Plan();
  std::fprintf(stderr, "kueue-perf %s: running (bound %.1f s)...\n",
               config.name.c_str(), bound.wall_ms / 1000);
  absl::StatusOr<bool> completed = run.Run();
  if (!completed.ok()) return completed.status();
  if (!*completed) kqd.Kill();
  std::fprintf(stderr, "kueue-perf %s: %s; joining the watch\n",
               config.name.c_str(), *completed ? "done" : "timed out");
  run.JoinWatcher();
  std::fprintf(stderr, "kueue-perf %s: stopping kqd\n", config.name.c_str());
  Table table = run.Report(bound, context, *completed, options.scale);
  table.notes.insert(
      table.notes.begin(),
      absl::StrFormat(
          "kqd started in %.0f ms (fresh data dir); the %d "
          "ClusterQueues, namespaces and LocalQueues were applied "
          "in one Apply in %.0f ms.",
          absl::ToDoubleMilliseconds(kqd.serving_at() - kqd.started_at()),
          config.cohorts * config.queues_per_cohort,
          absl::ToDoubleMilliseconds(setup)));
  if (*completed) {
    const absl::Duration shutdown = kqd.Stop();
    table.notes.push_back(
        absl::StrFormat("kqd shutdown (SIGTERM to exit) took %.0f ms.",
                        absl::ToDoubleMilliseconds(shutdown)));
  } else {
    table.notes.push_back(
        "kqd was killed at the timeout; the figures above cover the "
        "workloads seen admitted or finished by then.");
  }
  return std::vector<Table>{table};
}

}  // namespace kq::bench
