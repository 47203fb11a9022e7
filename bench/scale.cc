// The admission core at scale, in this process (no gRPC): many pending
// workloads in many ClusterQueues, with churn — finish some admitted
// workloads, submit as many, run the scheduling passes — timed pass by
// pass; then the same churn with every step's changes committed to SQLite
// as the engine commits a batch.

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "bench/bench.h"
#include "bench/objects.h"
#include "server/admission/state.h"
#include "server/codec/codec.h"
#include "server/store/sqlite/sqlite_store.h"

namespace kq::bench {
namespace {

// Kueue's perf mix (configs/baseline): per 10 workloads, 7 small (1 cpu,
// priority 50), 2 medium (5 cpu, 100), 1 large (20 cpu, 200).
v1::Workload MixWorkload(int64_t i, int cluster_queues) {
  WorkloadShape shape;
  const int cq = static_cast<int>(i % cluster_queues);
  shape.namespace_name = PerfQueueName(cq);
  shape.queue_name = PerfQueueName(cq);
  shape.name = absl::StrCat("wl-", i);
  const int kind = static_cast<int>((i / cluster_queues) % 10);
  shape.cpu = kind == 0 ? "20" : kind <= 2 ? "5" : "1";
  shape.priority = kind == 0 ? 200 : kind <= 2 ? 100 : 50;
  shape.with_template = true;
  return MakeWorkload(shape);
}

// A workload as kqd's state holds it: converted, its template detached
// (kqd writes it to disk; this in-process benchmark has no store).
absl::StatusOr<Workload> HeldWorkload(int64_t i, int cluster_queues) {
  absl::StatusOr<Workload> wl =
      codec::FromClientProto(MixWorkload(i, cluster_queues));
  if (!wl.ok()) return wl;
  // Shaped as kqd's uids (a random UUID, 36 characters), which its
  // workloads hold; a shorter one would fit in the string itself.
  wl->meta.uid = absl::StrFormat("%08x-0000-4000-8000-%012x",
                                 static_cast<uint32_t>(i >> 16), i);
  store::DetachPodTemplates(*wl);
  return wl;
}

// Kueue's perf configs' ClusterQueues; with `preemption` false, they never
// preempt (reclaimWithinCohort and withinClusterQueue Never).
absl::Status LoadQueues(admission::AdmissionState& state, int cluster_queues,
                        int cohorts, absl::Time now, bool preemption) {
  const std::vector<v1::ConfigObject> protos =
      MakePerfQueues(cluster_queues, cohorts, preemption);
  int64_t uid = 0;
  for (const v1::ConfigObject& proto : protos) {
    absl::StatusOr<ConfigObject> object = codec::FromProto(proto);
    if (!object.ok()) return object.status();
    MutableMetaOf(*object).uid = absl::StrCat("obj-", uid++);
    MutableMetaOf(*object).creation_timestamp = now;
    state.LoadObject(*std::move(object));
  }
  state.Rebuild(now);
  return absl::OkStatus();
}

store::Event::Type EventTypeOf(admission::Change change) {
  switch (change) {
    case admission::Change::kAdded:
      return store::Event::Type::kAdded;
    case admission::Change::kModified:
      return store::Event::Type::kModified;
    case admission::Change::kDeleted:
      return store::Event::Type::kDeleted;
  }
  return store::Event::Type::kModified;
}

// What Engine::CommitBatch writes for one batch's changes: every changed
// workload (finished ones from the changes) with an event each.
store::WriteBatch BatchOf(admission::AdmissionState& state,
                          admission::Changes& changes, int64_t revision) {
  store::WriteBatch batch;
  batch.revision = revision;
  for (const auto& [key, change] : changes.workloads) {
    Workload wl;
    if (const Workload* live = state.FindWorkload(key)) {
      state.StampRevision(key, revision);
      wl = *live;
    } else {
      auto finished = changes.finished_workloads.find(key);
      if (finished == changes.finished_workloads.end()) continue;
      wl = finished->second;
      wl.meta.revision = revision;
    }
    batch.upserted_workloads.push_back(std::move(wl));
    batch.upserted_workload_events.push_back(EventTypeOf(change));
  }
  return batch;
}

struct ChurnResult {
  // Open loop only: finishes that arrived, and each step's wall time.
  int64_t offered = 0;
  std::vector<double> step_us;
  int64_t steps = 0;
  int64_t admissions = 0;
  int64_t finished = 0;
  int64_t submitted = 0;
  double seconds = 0;
  std::vector<double> cycle_us;  // all passes of one step
  std::vector<double> pass_us;   // one RunPasses(max_passes = 1)
  std::vector<double> commit_us;
  double passes_total = 0;
  double churn_us = 0;  // FinishWorkload + AddWorkload
  double passes_us = 0;
  double changes_us = 0;  // TakeChanges + bookkeeping + WriteBatch
  double commit_total_us = 0;
  int64_t rows_written = 0;
};

class Churner {
 public:
  Churner(admission::AdmissionState& state, int cluster_queues, int64_t next)
      : state_(state), cluster_queues_(cluster_queues), next_(next) {}

  // Runs passes one at a time until the state needs none; returns passes.
  int Cycle(absl::Time now, ChurnResult* result) {
    int passes = 0;
    const absl::Time start = absl::Now();
    do {
      const absl::Time pass_start = absl::Now();
      if (state_.RunPasses(now, {.max_passes = 1}) == 0) break;
      ++passes;
      if (result != nullptr) {
        result->pass_us.push_back(
            absl::ToDoubleMicroseconds(absl::Now() - pass_start));
      }
    } while (state_.needs_scheduling());
    if (result != nullptr) {
      const double us = absl::ToDoubleMicroseconds(absl::Now() - start);
      result->cycle_us.push_back(us);
      result->passes_us += us;
      result->passes_total += passes;
    }
    return passes;
  }

  // Notes the workloads that came to hold quota in `changes`; returns how
  // many.
  int64_t Collect(const admission::Changes& changes) {
    int64_t admitted = 0;
    for (const auto& [key, change] : changes.workloads) {
      const Workload* wl = state_.FindWorkload(key);
      if (wl == nullptr || !HoldsQuota(*wl)) continue;
      if (holding_.insert(key).second) {
        admitted_.push_back(key);
        ++admitted;
      }
    }
    return admitted;
  }

  void CollectAll() {
    for (const Workload& wl : state_.workloads()) {
      if (HoldsQuota(wl) && holding_.insert(KeyOf(wl)).second) {
        admitted_.push_back(KeyOf(wl));
      }
    }
  }

  // One step: finish the `step` longest-admitted workloads, submit as many
  // new ones, run the passes, take the changes (and commit them).
  absl::Status Step(int step, store::Store* store, ChurnResult& result) {
    const absl::Time now = absl::Now();
    absl::Time t = absl::Now();
    int finished = 0;
    while (finished < step && !admitted_.empty()) {
      NamespacedName key = admitted_.front();
      admitted_.pop_front();
      holding_.erase(key);
      const Workload* wl = state_.FindWorkload(key);
      if (wl == nullptr || !HoldsQuota(*wl)) continue;  // preempted since
      absl::StatusOr<Workload> done =
          state_.FinishWorkload(key, "Succeeded", "", now);
      if (!done.ok()) return done.status();
      ++finished;
    }
    // As many new as finished: the number of workloads stays the same, so
    // the pending count holds steady over the churn.
    for (int i = 0; i < finished; ++i) {
      absl::StatusOr<Workload> wl = HeldWorkload(next_, cluster_queues_);
      if (!wl.ok()) return wl.status();
      const Uid uid = wl->meta.uid;
      state_.AddWorkload(*std::move(wl), uid, now);
      ++next_;
    }
    result.churn_us += absl::ToDoubleMicroseconds(absl::Now() - t);
    Cycle(now, &result);
    t = absl::Now();
    admission::Changes changes = state_.TakeChanges();
    result.admissions += Collect(changes);
    result.finished += finished;
    result.submitted += finished;
    ++result.steps;
    if (store != nullptr) {
      store::WriteBatch batch = BatchOf(state_, changes, ++revision_);
      result.changes_us += absl::ToDoubleMicroseconds(absl::Now() - t);
      t = absl::Now();
      absl::Status committed = store->Commit(batch);
      if (!committed.ok()) return committed;
      const double us = absl::ToDoubleMicroseconds(absl::Now() - t);
      result.commit_us.push_back(us);
      result.commit_total_us += us;
      result.rows_written += batch.upserted_workloads.size();
    } else {
      result.changes_us += absl::ToDoubleMicroseconds(absl::Now() - t);
    }
    return absl::OkStatus();
  }

  size_t holding() const { return holding_.size(); }

 private:
  admission::AdmissionState& state_;
  const int cluster_queues_;
  int64_t next_;
  int64_t revision_ = 0;
  std::deque<NamespacedName> admitted_;
  std::set<NamespacedName> holding_;
};

absl::StatusOr<ChurnResult> Churn(Churner& churner, int step,
                                  absl::Duration duration,
                                  store::Store* store) {
  ChurnResult result;
  const absl::Time start = absl::Now();
  while (absl::Now() - start < duration) {
    if (absl::Status s = churner.Step(step, store, result); !s.ok()) return s;
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

// Open loop: finishes arrive at `offered_rate` per second, and each step
// finishes those that arrived while the step before ran (with the workloads
// submitted in their place), as kqd's engine takes into one batch every
// command that queued during its last one. A rate the core cannot sustain
// shows as fewer finished than offered, and as steps that keep growing.
absl::StatusOr<ChurnResult> ChurnAtRate(Churner& churner, double offered_rate,
                                        absl::Duration duration,
                                        store::Store* store) {
  ChurnResult result;
  const absl::Time start = absl::Now();
  absl::Time arrived_until = start;
  double owed = 0;
  while (absl::Now() - start < duration) {
    const absl::Time now = absl::Now();
    owed += offered_rate * absl::ToDoubleSeconds(now - arrived_until);
    arrived_until = now;
    const int step = static_cast<int>(owed);
    if (step == 0) continue;
    owed -= step;
    result.offered += step;
    if (absl::Status s = churner.Step(step, store, result); !s.ok()) return s;
    result.step_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - now));
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

// Adds options.pending workloads of the mix, in engine-sized batches.
absl::Status AddPending(admission::AdmissionState& state,
                        const ScaleOptions& options, absl::Time start) {
  for (int64_t i = 0; i < options.pending; ++i) {
    absl::StatusOr<Workload> wl = HeldWorkload(i, options.cluster_queues);
    if (!wl.ok()) return wl.status();
    const Uid uid = wl->meta.uid;
    state.AddWorkload(*std::move(wl), uid, start + absl::Microseconds(i));
    // Each engine batch (at most 4,096 commands) ends as kqd's does: it
    // asks for its next wakeup (which indexes the batch's marked
    // workloads) and takes the changes. Ending it once for all would count
    // a batch's bookkeeping for 100,000 workloads, which kqd never holds.
    if (i % 4096 == 4095) {
      state.NextWakeup();
      state.TakeChanges();
    }
  }
  state.NextWakeup();
  state.TakeChanges();
  return absl::OkStatus();
}

// A fresh database in `dir`, synchronous=FULL as kqd's default.
absl::StatusOr<std::unique_ptr<store::SqliteStore>> OpenDurableStore(
    const TempDir& dir) {
  store::SqliteOptions options;
  options.synchronous_full = true;
  return store::SqliteStore::Open(dir.path() + "/kq.db", options);
}

void AddChurnRows(Table& table, const std::string& label, ChurnResult& r,
                  const Context& context, bool durable) {
  Percentiles cycle = ComputePercentiles(r.cycle_us);
  Percentiles pass = ComputePercentiles(r.pass_us);
  const double rate = r.admissions / r.seconds;
  table.rows.push_back(
      {label + ": cycle (all passes of a step) p50 / p99",
       absl::StrCat(FormatMicros(cycle.p50), " / ", FormatMicros(cycle.p99)),
       absl::StrFormat("%.1f passes per cycle, %d cycles",
                       r.passes_total / std::max<int64_t>(1, r.steps),
                       r.steps)});
  table.rows.push_back(
      {label + ": pass (RunPasses max_passes=1) p50 / p99 / max",
       absl::StrCat(FormatMicros(pass.p50), " / ", FormatMicros(pass.p99),
                    " / ", FormatMicros(pass.max)),
       ""});
  if (durable) {
    Percentiles commit = ComputePercentiles(r.commit_us);
    table.rows.push_back({label + ": commit of a step p50 / p99",
                          absl::StrCat(FormatMicros(commit.p50), " / ",
                                       FormatMicros(commit.p99)),
                          absl::StrFormat("%.0f rows per commit",
                                          1.0 * r.rows_written /
                                              std::max<int64_t>(1, r.steps))});
  }
  table.rows.push_back(
      {label + ": sustained admissions/s",
       absl::StrCat(FormatCount(rate), " (", FormatCount(r.admissions), " in ",
                    FormatFixed(r.seconds, 1), " s)"),
       durable ? Fraction(r.rows_written / r.seconds,
                          context.limits.sqlite_rows_per_second,
                          "SQLite group-commit rows/s (rows written)")
               : ""});
  if (!r.step_us.empty()) {
    Percentiles step = ComputePercentiles(r.step_us);
    table.rows.push_back(
        {label + ": finished of offered",
         absl::StrFormat("%s of %s (%.1f%%)", FormatCount(r.finished),
                         FormatCount(r.offered),
                         100.0 * r.finished / std::max<int64_t>(1, r.offered)),
         absl::StrFormat("%.0f finished per step",
                         1.0 * r.finished / std::max<int64_t>(1, r.steps))});
    table.rows.push_back(
        {label + ": step (finish, submit, passes, commit) p50 / p99",
         absl::StrCat(FormatMicros(step.p50), " / ", FormatMicros(step.p99)),
         "a finish waits up to one step to be taken, then its step"});
  }
  const double total = r.seconds * 1e6;
  table.notes.push_back(absl::StrFormat(
      "%s: of the churn's wall time, scheduling passes %.0f%%, finishing and "
      "adding workloads (incl. proto conversion) %.0f%%, taking changes%s "
      "%.0f%%%s.",
      label, 100 * r.passes_us / total, 100 * r.churn_us / total,
      durable ? " and building the write batch" : "",
      100 * r.changes_us / total,
      durable ? absl::StrFormat(", SQLite commit %.0f%%",
                                100 * r.commit_total_us / total)
              : ""));
}

}  // namespace

absl::StatusOr<std::vector<Table>> RunScale(const ScaleOptions& options,
                                            const Context& context) {
  admission::AdmissionState state;
  const absl::Time start = absl::Now();
  if (absl::Status s = LoadQueues(state, options.cluster_queues,
                                  options.cohorts, start, /*preemption=*/true);
      !s.ok()) {
    return s;
  }
  std::fprintf(stderr, "scale: adding %d pending workloads...\n",
               options.pending);
  const int64_t rss_before = RssBytes();
  absl::Time t = absl::Now();
  if (absl::Status s = AddPending(state, options, start); !s.ok()) return s;
  const double add_seconds = absl::ToDoubleSeconds(absl::Now() - t);
  const int64_t rss_after = RssBytes();
  const double per_pending =
      1.0 * (rss_after - rss_before) / std::max(1, options.pending);

  std::fprintf(stderr, "scale: first cycle...\n");
  Churner churner(state, options.cluster_queues, options.pending);
  ChurnResult fill;
  t = absl::Now();
  churner.Cycle(absl::Now(), &fill);
  const double fill_seconds = absl::ToDoubleSeconds(absl::Now() - t);
  state.TakeChanges();
  // Once every head was tried, each pending workload also holds its
  // QuotaReserved=False condition (reason and message), as in Kueue.
  const int64_t rss_cycled = RssBytes();
  churner.CollectAll();
  const size_t admitted_first = churner.holding();

  std::fprintf(stderr, "scale: churn...\n");
  absl::StatusOr<ChurnResult> pure =
      Churn(churner, options.step, options.churn, nullptr);
  if (!pure.ok()) return pure.status();

  std::optional<ChurnResult> durable;
  TempDir dir("kq-bench-scale");
  if (options.durable) {
    std::fprintf(stderr, "scale: durable churn...\n");
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        OpenDurableStore(dir);
    if (!store.ok()) return store.status();
    absl::StatusOr<ChurnResult> r =
        Churn(churner, options.step, options.churn, store->get());
    if (!r.ok()) return r.status();
    durable = *std::move(r);
  }

  std::optional<ChurnResult> offered;
  TempDir offered_dir("kq-bench-scale-offered");
  if (options.offered_rate > 0) {
    std::fprintf(stderr, "scale: durable churn at %.0f finishes/s...\n",
                 options.offered_rate);
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        OpenDurableStore(offered_dir);
    if (!store.ok()) return store.status();
    absl::StatusOr<ChurnResult> r =
        ChurnAtRate(churner, options.offered_rate, options.churn, store->get());
    if (!r.ok()) return r.status();
    offered = *std::move(r);
  }

  int64_t pending_at_end = 0;
  for (const Workload& wl : state.workloads()) {
    if (!HoldsQuota(wl)) ++pending_at_end;
  }

  // The same open loop on ClusterQueues that never preempt, each rate on a
  // fresh state and database.
  std::vector<std::pair<double, ChurnResult>> unpreempting;
  for (double rate : options.no_preemption_rates) {
    if (rate <= 0) continue;
    std::fprintf(stderr,
                 "scale: durable churn at %.0f finishes/s, no preemption...\n",
                 rate);
    admission::AdmissionState fresh;
    const absl::Time fresh_start = absl::Now();
    if (absl::Status s =
            LoadQueues(fresh, options.cluster_queues, options.cohorts,
                       fresh_start, /*preemption=*/false);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = AddPending(fresh, options, fresh_start); !s.ok()) {
      return s;
    }
    Churner fresh_churner(fresh, options.cluster_queues, options.pending);
    fresh_churner.Cycle(absl::Now(), nullptr);
    fresh.TakeChanges();
    fresh_churner.CollectAll();
    TempDir fresh_dir("kq-bench-scale-unpreempting");
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> store =
        OpenDurableStore(fresh_dir);
    if (!store.ok()) return store.status();
    absl::StatusOr<ChurnResult> r =
        ChurnAtRate(fresh_churner, rate, options.churn, store->get());
    if (!r.ok()) return r.status();
    unpreempting.emplace_back(rate, *std::move(r));
  }

  Table table;
  table.title = absl::StrFormat(
      "scale: %s pending workloads, %d ClusterQueues in %d cohorts "
      "(in-process AdmissionState)",
      FormatCount(options.pending), options.cluster_queues, options.cohorts);
  table.header = {"metric", "value", "notes"};
  table.rows.push_back(
      {"RSS per pending workload", absl::StrFormat("%.0f bytes", per_pending),
       absl::StrFormat("VmRSS %.0f -> %.0f MiB over AddWorkload of all",
                       rss_before / 1048576.0, rss_after / 1048576.0)});
  table.rows.push_back(
      {"  after the first cycle",
       absl::StrFormat("%.0f bytes", 1.0 * (rss_cycled - rss_before) /
                                         std::max(1, options.pending)),
       absl::StrFormat("VmRSS %.0f MiB; each pending workload now holds its "
                       "QuotaReserved=False condition",
                       rss_cycled / 1048576.0)});
  table.rows.push_back(
      {"AddWorkload (proto conversion included)",
       absl::StrCat(FormatCount(options.pending / add_seconds), "/s"), ""});
  Percentiles fill_pass = ComputePercentiles(fill.pass_us);
  table.rows.push_back(
      {"first cycle over all pending", absl::StrFormat("%.2f s", fill_seconds),
       absl::StrFormat("%.0f passes (p50 %s, max %s), %s admitted",
                       fill.passes_total, FormatMicros(fill_pass.p50),
                       FormatMicros(fill_pass.max),
                       FormatCount(admitted_first))});
  AddChurnRows(table, "churn", *pure, context, false);
  if (durable.has_value()) {
    AddChurnRows(table, "durable churn", *durable, context, true);
  }
  const std::string offered_label =
      absl::StrFormat("durable churn, %s finishes/s offered",
                      FormatCount(options.offered_rate));
  if (offered.has_value()) {
    AddChurnRows(table, offered_label, *offered, context, true);
  }
  for (auto& [rate, r] : unpreempting) {
    AddChurnRows(
        table,
        absl::StrFormat("durable churn, no preemption, %s finishes/s offered",
                        FormatCount(rate)),
        r, context, true);
  }
  table.notes.insert(
      table.notes.begin(),
      absl::StrFormat(
          "Churn step: finish the %d longest-admitted workloads, submit as "
          "many new ones, then RunPasses(max_passes=1) until no pass is needed "
          "(one engine batch). Workload mix per 10: 7 x 1 cpu (priority "
          "50), 2 x 5 cpu (100), 1 x 20 cpu (200), each with a Job-like pod "
          "template; ClusterQueues nominal 20 cpu, borrowingLimit 100, "
          "reclaimWithinCohort Any, withinClusterQueue LowerPriority "
          "(Kueue's perf configs).",
          options.step));
  table.notes.push_back(
      absl::StrFormat("Pending at the end of the churn: %s; holding quota: %s.",
                      FormatCount(pending_at_end),
                      FormatCount(state.workloads().size() - pending_at_end)));
  if (durable.has_value()) {
    table.notes.push_back(
        "Durable churn: each step's changed workloads and their events "
        "committed through SqliteStore (synchronous=FULL) in one "
        "transaction, as Engine::CommitBatch does; the database starts "
        "empty (the pending workloads were not written first).");
  }
  if (offered.has_value()) {
    table.notes.push_back(absl::StrFormat(
        "%s: open loop, durable. Finishes arrive at that rate and each step "
        "takes those that arrived while the step before ran (kqd's engine "
        "takes every command that queued during its last batch into the "
        "next), submitting as many new workloads; the rows above instead "
        "finish a fixed %d per step and then walk every pending workload "
        "again, so their rate is the step size over that walk.",
        offered_label, options.step));
  }
  if (!unpreempting.empty()) {
    table.notes.push_back(
        "durable churn, no preemption: finishes arriving at that rate, each "
        "step committed, as in the open loop above, on a fresh state "
        "and database whose ClusterQueues never preempt "
        "(reclaimWithinCohort and withinClusterQueue Never; the mix, quotas "
        "and pending count as above). With Kueue's perf configs most "
        "admissions need a preemption, and Kueue lets one through per "
        "cohort per pass (an entry whose targets overlap an earlier one's, "
        "or that no longer fits after it, is skipped): these rows show how "
        "many admissions the core sustains when that rule does not bound "
        "them.");
  }
  return std::vector<Table>{table};
}

}  // namespace kq::bench
