// The workload-group rules (server/federation/group.h), ported from Kueue's
// pkg/controller/admissionchecks/multikueue/workload_test.go:
// TestWlReconcile, TestOrphanedRemoteWorkloadCleanedAfterReconnect,
// TestMultiKueueWorkloadAdmittedMetricIncrementedOnceOnAdmission,
// TestMultiKueueWorkloadAdmittedMetricNotIncrementedOnRetryOrRejected,
// TestNominateAndSynchronizeWorkers_MoreCases and
// TestReconcileGroup_SyncDeferred_ShortRequeue, plus kq's own cases for the
// epoch fence and the bind ordering (named "kq: ..."). Fixture as Kueue's:
// workload wl1 with check ac1, workers worker1 and (optionally) worker2,
// workerLostTimeout 5m (the package default the unit tests use).
//
// A case checks one decision, or, with `converge`, a run to steady state: a
// small pure harness (World, Apply) applies each decision's remote ops to
// fake worker copies and its update to the local workload, then decides
// again, until nothing is left to do. Kueue's "objects on each worker" are
// the copies left after the ops were applied once (or at the end of the
// run).
//
// Where kq differs from Kueue by design:
//   - kq has no Job: Kueue's "the Job is created on worker1" is kq's Bind to
//     worker1, sent only once no other copy is on a connected worker; the
//     check turns Ready (with its event and admitted metric) once worker1
//     reports the copy bound. "remote wl admitted - other workers deleted"
//     therefore converges over three decisions (delete the loser and record
//     clusterName; Bind; Ready).
//   - Kueue rewrites the Ready state and repeats its event on every
//     reconcile while Ready; kq writes and announces it once, so that a
//     converged group decides nothing ("admitting remote is kept when
//     another worker's remote is out of sync" has no event here).
//   - Kueue's errors from a worker (a failed Get, Create or Delete) are the
//     runtime's: the decision lists the ops, and the harness makes them
//     fail.
//
// TestWlReconcile cases not ported, and why:
//   unmanaged wl (no parent) is rejected
//   unmanaged wl (owned by pod) is rejected
//   unmanaged wl (job not managed by multikueue) is rejected
//       Job adapters and owners (R0a): kq's own workloads have no owner Job.
//       GroupInput::owner_rejection keeps the rule for a future owner; kq's
//       case "kq: an owner rejection rejects the check" covers it.
//   failing to read from a worker
//       a read error on a worker is the runtime's (it does not call the
//       rules without the worker's state).
//   remote wl is finished, but the remote controller object must be owned
//       before SyncJob
//       remote Job ownership; kq's counterpart is the origin-uid fence
//       ("kq: a finished copy of another incarnation is deleted, not
//       copied").
//   elastic job finished local workload via replacement is ignored
//   elastic job local workload without quota reservation
//   elastic job local scaled-up workload slice without quota reservation
//   elastic job local workload out-of-sync other than scaled-down
//       elastic workloads (ElasticJobsViaWorkloadSlices) have no kq
//       counterpart.
//   creating remote workloads with preemption gates
//   opening preemption gate for first workload requiring preemption
//   opening preemption gate for the second workload requiring preemption if
//       timeout elapsed
//   not opening preemption gate for the second workload if timeout did not
//       elapse
//   not opening preemption gate for the second workload if timeout elapsed
//       but it does not require preemption
//       orchestrated preemption (R7) needs the alpha gate
//       MultiKueueOrchestratedPreemption, off by default; kq does not model
//       it.
// Every case runs once, not once per WorkloadRequestUseMergePatch value
// (how Kueue patches status; nothing to model in kq).
//
// Other tests of the file not ported: TestConfigHandlerUpdate,
// TestAdmissionCheckHandlerCreate, TestAdmissionCheckHandlerUpdate and
// TestConfigHandlerDelete (which workloads an object change requeues: the
// runtime's watch wiring, not a decision).

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/conditions.h"
#include "server/core/objects.h"
#include "server/federation/group.h"
#include "tests/server/federation/kueue_names.h"
#include "tests/testing/builders.h"

namespace kq::federation {
namespace {

using ::kq::testing::WorkloadBuilder;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
// Kueue's defaultWorkerLostTimeout in mk/workload_test.go.
constexpr absl::Duration kWorkerLostTimeout = absl::Minutes(5);
constexpr char kUid[] = "uid-wl1";

Admission Q1() { return Admission{.cluster_queue = "q1"}; }

WorkloadBuilder Local() { return WorkloadBuilder("wl1").Uid(kUid); }

// What a worker reports of its copy.
class CopyBuilder {
 public:
  explicit CopyBuilder(int64_t epoch = 1) {
    copy_.origin_uid = kUid;
    copy_.epoch = epoch;
  }
  CopyBuilder& OriginUid(std::string uid) {
    copy_.origin_uid = std::move(uid);
    return *this;
  }
  CopyBuilder& Reserved(absl::Time time = kNow) {
    copy_.status.admission = Q1();
    return Set(kConditionQuotaReserved, "QuotaReserved", "", time);
  }
  CopyBuilder& Admitted(absl::Time time = kNow) {
    Reserved(time);
    return Set(kConditionAdmitted, "Admitted", "", time);
  }
  CopyBuilder& Evicted(std::string reason, std::string message) {
    return Set(kConditionEvicted, std::move(reason), std::move(message), kNow);
  }
  CopyBuilder& Finished(std::string reason, std::string message) {
    return Set(kConditionFinished, std::move(reason), std::move(message), kNow);
  }
  CopyBuilder& Bound() {
    copy_.bound = true;
    return *this;
  }
  CopyBuilder& OutOfSync() {
    copy_.spec_matches = false;
    return *this;
  }
  RemoteCopy Build() const { return copy_; }

 private:
  CopyBuilder& Set(const char* type, std::string reason, std::string message,
                   absl::Time time) {
    SetCondition(&copy_.status.conditions,
                 Condition{.type = type,
                           .status = kConditionTrue,
                           .reason = std::move(reason),
                           .message = std::move(message),
                           .last_transition_time = time});
    return *this;
  }
  RemoteCopy copy_;
};

// A worker as the harness keeps it: its copy its own, changed as ops land.
struct TestWorker {
  std::string name;
  bool connected = false;
  std::optional<absl::Time> lost_since;
  std::optional<RemoteCopy> copy;
};

std::vector<WorkerView> Views(const std::vector<TestWorker>& workers) {
  std::vector<WorkerView> views;
  for (const TestWorker& w : workers) {
    views.push_back(WorkerView{
        .name = w.name,
        .connected = w.connected,
        .lost_since = w.lost_since,
        .copy = w.copy.has_value() ? std::make_shared<const RemoteCopy>(*w.copy)
                                   : nullptr});
  }
  return views;
}

TestWorker Worker(std::string name,
                  std::optional<RemoteCopy> copy = std::nullopt) {
  return TestWorker{
      .name = std::move(name), .connected = true, .copy = std::move(copy)};
}

TestWorker Reconnecting(std::string name, absl::Time lost_since,
                        std::optional<RemoteCopy> copy = std::nullopt) {
  return TestWorker{.name = std::move(name),
                    .connected = false,
                    .lost_since = lost_since,
                    .copy = std::move(copy)};
}

std::string OpString(const RemoteOp& op) {
  std::string out =
      absl::StrCat(RemoteOpKindName(op.kind), " ", op.worker, "@", op.epoch);
  if (!op.message.empty()) absl::StrAppend(&out, ": ", op.message);
  return out;
}

std::string EventString(const Event& e) {
  return absl::StrCat(e.type == EventType::kNormal ? "Normal" : "Warning", ": ",
                      e.message);
}

std::string MetricString(const MetricIncrement& m) {
  return absl::StrCat(m.cluster_queue, "/", m.cluster);
}

// A copy as the want_workers maps name it: "@<epoch>", then " bound" and
// " evicted" when so; "" for none.
std::string CopyString(const std::optional<RemoteCopy>& copy) {
  if (!copy.has_value()) return "";
  std::string out = absl::StrCat("@", copy->epoch);
  if (copy->origin_uid != Uid(kUid)) absl::StrAppend(&out, " foreign");
  if (copy->bound) absl::StrAppend(&out, " bound");
  if (IsConditionTrue(copy->status.conditions, kConditionEvicted)) {
    absl::StrAppend(&out, " evicted");
  }
  return out;
}

// ---------------------------------------------------------------------------
// The harness: the local workload, its manager state and the workers, to
// which decisions are applied.

struct World {
  Workload local;
  bool deleted = false;
  ManagerState state;
  std::vector<TestWorker> workers;
  std::set<std::string> failing_upserts;
  std::set<std::string> failing_deletes;
  std::string dispatcher = kDispatcherAllAtOnce;
  std::string owner_rejection;

  GroupInput Input() const {
    return GroupInput{.local = &local,
                      .deleted = deleted,
                      .state = state,
                      .check_name = "ac1",
                      .owner_rejection = owner_rejection,
                      .workers = Views(workers),
                      .settings = {.dispatcher_name = dispatcher,
                                   .worker_lost_timeout = kWorkerLostTimeout},
                      .now = kNow};
  }

  TestWorker* FindWorker(const std::string& name) {
    for (TestWorker& w : workers) {
      if (w.name == name) return &w;
    }
    return nullptr;
  }

  // Sends the ops to the workers, as a kq worker applies them: an op to a
  // worker out of reach (or one the case makes fail) does nothing.
  void ApplyOps(const std::vector<RemoteOp>& ops) {
    for (const RemoteOp& op : ops) {
      TestWorker* w = FindWorker(op.worker);
      if (w == nullptr || !w->connected) continue;
      std::optional<RemoteCopy>& copy = w->copy;
      switch (op.kind) {
        case RemoteOpKind::kUpsert:
          if (failing_upserts.count(op.worker) > 0) break;
          if (!copy.has_value() || copy->origin_uid != local.meta.uid ||
              copy->epoch < op.epoch) {
            copy = CopyBuilder(op.epoch).Build();
          }
          break;
        case RemoteOpKind::kDelete:
          if (failing_deletes.count(op.worker) > 0) break;
          if (copy.has_value() && copy->epoch == op.epoch) copy.reset();
          break;
        case RemoteOpKind::kBind:
          if (copy.has_value() && copy->epoch == op.epoch &&
              IsConditionTrue(copy->status.conditions, kConditionAdmitted)) {
            copy->bound = true;
          }
          break;
        case RemoteOpKind::kDeactivate:
          if (copy.has_value() && copy->epoch == op.epoch) {
            SetCondition(
                &copy->status.conditions,
                Condition{
                    .type = kConditionEvicted,
                    .status = kConditionTrue,
                    .reason = "DeactivatedDueToEvictedOnManagerCluster",
                    .message = absl::StrCat(
                        "The workload is deactivated due to ", op.message),
                    .last_transition_time = kNow});
          }
          break;
      }
    }
  }

  void ApplyUpdate(const LocalUpdate& u) {
    if (u.check.has_value()) {
      for (AdmissionCheckState& check : local.admission_checks) {
        if (check.name == u.check->name) check = *u.check;
      }
    }
    if (u.nominated_cluster_names.has_value()) {
      state.nominated_cluster_names = *u.nominated_cluster_names;
    }
    if (u.cluster_name.has_value()) state.cluster_name = *u.cluster_name;
    if (u.epoch.has_value()) state.epoch = *u.epoch;
    if (u.round_start.has_value()) state.round_start = *u.round_start;
    if (u.finish.has_value()) {
      SetCondition(&local.conditions, Condition{.type = kConditionFinished,
                                                .status = kConditionTrue,
                                                .reason = u.finish->reason,
                                                .message = u.finish->message,
                                                .last_transition_time = kNow});
    }
  }

  std::map<std::string, std::string> Copies() const {
    std::map<std::string, std::string> out;
    for (const TestWorker& w : workers) out[w.name] = CopyString(w.copy);
    return out;
  }

  const AdmissionCheckState* Check() const {
    for (const AdmissionCheckState& check : local.admission_checks) {
      if (check.name == "ac1") return &check;
    }
    return nullptr;
  }
};

// What a run of decisions did, in order.
struct Trace {
  std::vector<std::string> ops;
  std::vector<std::string> events;
  std::vector<std::string> dispatched;
  std::vector<std::string> admitted;
  GroupDecision last;
  int runs = 0;
};

void Record(const GroupDecision& d, Trace* t) {
  for (const RemoteOp& op : d.ops) t->ops.push_back(OpString(op));
  for (const Event& e : d.events) t->events.push_back(EventString(e));
  for (const MetricIncrement& m : d.dispatched) {
    t->dispatched.push_back(MetricString(m));
  }
  for (const MetricIncrement& m : d.admitted) {
    t->admitted.push_back(MetricString(m));
  }
  t->last = d;
  ++t->runs;
}

// kq's safety rule, checked on every decision a test makes: a Bind goes
// out only when no other copy is on a connected worker (the decision's own
// deletions do not count: they may not have landed).
void ExpectBindIsAlone(const World& world, const GroupDecision& d) {
  for (const RemoteOp& op : d.ops) {
    if (op.kind != RemoteOpKind::kBind) continue;
    for (const TestWorker& w : world.workers) {
      if (w.name != op.worker && w.connected && w.copy.has_value()) {
        ADD_FAILURE() << "Bind to " << op.worker << " while " << w.name
                      << " holds a copy";
      }
    }
  }
}

// Decides and applies until a decision has nothing to do, or max_runs.
Trace Converge(World& world, int max_runs = 10) {
  Trace trace;
  for (int i = 0; i < max_runs; ++i) {
    const GroupDecision d = ReconcileGroup(world.Input());
    ExpectBindIsAlone(world, d);
    Record(d, &trace);
    if (d.steady()) break;
    world.ApplyOps(d.ops);
    world.ApplyUpdate(d.update);
  }
  return trace;
}

// ---------------------------------------------------------------------------
// TestWlReconcile.

struct GroupCase {
  std::string name;  // Kueue's, or "kq: ..."
  // Unset: the workload is unknown (Kueue's "missing workload").
  std::optional<Workload> local;
  bool deleted = false;
  ManagerState state = {.epoch = 1};
  std::vector<TestWorker> workers;
  std::string dispatcher = kDispatcherAllAtOnce;
  std::string owner_rejection;
  std::set<std::string> failing_upserts;
  std::set<std::string> failing_deletes;
  // Run to steady state (at most max_runs decisions) instead of one.
  bool converge = false;
  int max_runs = 10;

  // The ops (all of the run's, in order).
  std::vector<std::string> want_ops;
  // "<state>: <message>" of the check at the end; unset: not updated.
  std::optional<std::string> want_check;
  std::optional<std::vector<std::string>> want_nominated;
  std::optional<std::string> want_cluster_name;
  std::optional<int64_t> want_epoch;
  std::optional<Finish> want_finish;
  std::vector<std::string> want_events;
  // Of the (last) decision.
  absl::Duration want_requeue = absl::ZeroDuration();
  absl::StatusCode want_code = absl::StatusCode::kOk;
  std::vector<std::string> want_dispatched;
  std::vector<std::string> want_admitted;
  // Worker -> its copy (CopyString) once the ops were applied; empty: not
  // checked.
  std::map<std::string, std::string> want_workers;
};

void PrintTo(const GroupCase& c, std::ostream* os) { *os << c.name; }

class WlReconcileTest : public ::testing::TestWithParam<GroupCase> {};

TEST_P(WlReconcileTest, WlReconcile) {
  const GroupCase& tc = GetParam();
  if (!tc.local.has_value()) {
    GroupInput in{.check_name = "ac1", .now = kNow};
    const GroupDecision d = ReconcileGroup(in);
    EXPECT_TRUE(d.steady());
    EXPECT_TRUE(d.status.ok());
    EXPECT_EQ(d.requeue_after, absl::ZeroDuration());
    return;
  }
  World world{.local = *tc.local,
              .deleted = tc.deleted,
              .state = tc.state,
              .workers = tc.workers,
              .failing_upserts = tc.failing_upserts,
              .failing_deletes = tc.failing_deletes,
              .dispatcher = tc.dispatcher,
              .owner_rejection = tc.owner_rejection};
  const ManagerState before = world.state;
  const std::optional<AdmissionCheckState> check_before =
      world.Check() != nullptr
          ? std::optional<AdmissionCheckState>(*world.Check())
          : std::nullopt;

  Trace trace;
  if (tc.converge) {
    trace = Converge(world, tc.max_runs);
  } else {
    const GroupDecision d = ReconcileGroup(world.Input());
    ExpectBindIsAlone(world, d);
    Record(d, &trace);
    // Each update field is checked against the single decision.
    EXPECT_EQ(d.update.nominated_cluster_names, tc.want_nominated);
    EXPECT_EQ(d.update.cluster_name, tc.want_cluster_name);
    EXPECT_EQ(d.update.epoch, tc.want_epoch);
    EXPECT_EQ(d.update.finish, tc.want_finish);
    EXPECT_FALSE(d.update.round_start.has_value());
    EXPECT_EQ(d.update.check.has_value(), tc.want_check.has_value());
    if (d.update.check.has_value()) {
      EXPECT_EQ(d.update.check->last_transition_time, kNow);
    }
    world.ApplyOps(d.ops);
    world.ApplyUpdate(d.update);
  }
  const GroupDecision& last = trace.last;

  EXPECT_THAT(trace.ops, ElementsAreArray(tc.want_ops));
  EXPECT_THAT(trace.events, ElementsAreArray(tc.want_events));
  EXPECT_EQ(last.requeue_after, tc.want_requeue);
  EXPECT_EQ(last.status.code(), tc.want_code) << last.status;
  EXPECT_THAT(trace.dispatched, ElementsAreArray(tc.want_dispatched));
  EXPECT_THAT(trace.admitted, ElementsAreArray(tc.want_admitted));

  const AdmissionCheckState* check = world.Check();
  if (tc.want_check.has_value()) {
    ASSERT_NE(check, nullptr);
    EXPECT_EQ(absl::StrCat(check->state, ": ", check->message), *tc.want_check);
  } else if (check_before.has_value()) {
    ASSERT_NE(check, nullptr);
    EXPECT_EQ(*check, *check_before) << "the check changed";
  }
  if (tc.converge) {
    // The end state, against what the case wants changed.
    EXPECT_EQ(world.state.nominated_cluster_names,
              tc.want_nominated.value_or(before.nominated_cluster_names));
    EXPECT_EQ(world.state.cluster_name,
              tc.want_cluster_name.value_or(before.cluster_name));
    EXPECT_EQ(world.state.epoch, tc.want_epoch.value_or(before.epoch));
  }
  if (!tc.want_workers.empty()) {
    EXPECT_EQ(world.Copies(), tc.want_workers);
  }
}

std::vector<GroupCase> WlReconcileCases() {
  const std::string admitted_on_w1 =
      R"(The workload was admitted on "worker1")";
  const Workload pending =
      Local().AdmissionCheck("ac1", kCheckStatePending).Build();
  const Workload pending_reserved =
      Local()
          .AdmissionCheck("ac1", kCheckStatePending)
          .ReserveQuota(Q1(), kNow)
          .Build();
  const Workload ready_on_w1 =
      Local()
          .AdmissionCheck("ac1", kCheckStateReady, admitted_on_w1)
          .ReserveQuota(Q1(), kNow)
          .Build();
  const ManagerState on_w1{.cluster_name = "worker1", .epoch = 1};

  return {
      {.name = "deleted regular workload is removed from the cache",
       .local = Local().Build(),
       .deleted = true,
       .workers = {Worker("worker1")}},
      {.name = "deleted MultiKueue workload is deleted from cache - the "
               "worker will be deleted by GC",
       .local = Local().AdmissionCheck("ac1", kCheckStateRejected).Build(),
       .deleted = true,
       .workers = {Worker("worker1", CopyBuilder().Build())},
       .want_workers = {{"worker1", "@1"}}},
      {.name = "missing workload"},
      {.name = "missing workload (in deleted workload cache)",
       .local = pending_reserved,
       .deleted = true,
       .workers = {Worker("worker1", CopyBuilder().Reserved().Build())},
       .want_ops = {"Delete worker1@1"},
       .want_workers = {{"worker1", ""}}},
      {.name = "missing workload (in deleted workload cache), reconnecting "
               "worker, GC handles cleanup",
       .local = pending_reserved,
       .deleted = true,
       .workers = {Worker("worker1", CopyBuilder().Reserved().Build()),
                   Reconnecting("worker2", kNow)},
       .want_ops = {"Delete worker1@1"},
       .want_workers = {{"worker1", ""}, {"worker2", ""}}},
      {.name = "missing workload (in deleted workload cache), no remote "
               "objects",
       .local = pending_reserved,
       .deleted = true,
       .workers = {Worker("worker1")}},
      {.name = "unmanaged wl (no ac) is ignored",
       .local = Local().Build(),
       .workers = {Worker("worker1")}},
      {.name = "reconnecting clients are skipped",
       .local = pending,
       .workers = {Worker("worker1"), Reconnecting("worker2", kNow)},
       .want_requeue = kWorkerLostTimeout},
      {.name = "wl without reservation, reconnecting worker with remote "
               "workload, requeues for cleanup",
       .local = pending,
       .workers = {Worker("worker1"),
                   Reconnecting("worker2", kNow, CopyBuilder().Build())},
       .want_requeue = kWorkerLostTimeout,
       .want_workers = {{"worker1", ""}, {"worker2", "@1"}}},
      {.name = "wl without reservation, clears the workload objects",
       .local = pending,
       .workers = {Worker("worker1", CopyBuilder().Build())},
       .want_ops = {"Delete worker1@1"},
       .want_workers = {{"worker1", ""}}},
      {.name = "wl with reservation, creates remote workloads, worker2 fails",
       .local = pending_reserved,
       .state = {},
       .workers = {Worker("worker1"), Worker("worker2")},
       .failing_upserts = {"worker2"},
       .want_ops = {"Upsert worker1@1", "Upsert worker2@1"},
       .want_nominated = std::vector<std::string>{"worker1", "worker2"},
       .want_epoch = 1,
       .want_dispatched = {"q1/worker1", "q1/worker2"},
       .want_workers = {{"worker1", "@1"}, {"worker2", ""}}},
      {.name = "wl with reservation, creates missing workloads",
       .local = pending_reserved,
       .workers = {Worker("worker1", CopyBuilder().Build()), Worker("worker2")},
       .want_ops = {"Upsert worker2@1"},
       .want_nominated = std::vector<std::string>{"worker1", "worker2"},
       .want_dispatched = {"q1/worker2"},
       .want_workers = {{"worker1", "@1"}, {"worker2", "@1"}}},
      {.name = "remote wl with reservation but not admitted - other workers "
               "not deleted",
       .local = pending_reserved,
       .workers = {Worker("worker1", CopyBuilder().Reserved().Build()),
                   Worker("worker2", CopyBuilder().Build())},
       .want_nominated = std::vector<std::string>{"worker1", "worker2"},
       .want_workers = {{"worker1", "@1"}, {"worker2", "@1"}}},
      // kq: Kueue's one reconcile (delete worker2, create the Job on
      // worker1, Ready) is kq's three: delete the loser and record
      // clusterName; Bind once the loser is gone; Ready once worker1
      // reports the bind.
      {.name = "remote wl admitted - other workers deleted",
       .local = pending_reserved,
       .state = {.nominated_cluster_names = {"worker1", "worker2"}, .epoch = 1},
       .workers = {Worker("worker1", CopyBuilder().Admitted().Build()),
                   Worker("worker2", CopyBuilder().Build())},
       .converge = true,
       .want_ops = {"Delete worker2@1", "Bind worker1@1"},
       .want_check = "Ready: " + admitted_on_w1,
       .want_nominated = std::vector<std::string>{},
       .want_cluster_name = "worker1",
       .want_events = {"Normal: " + admitted_on_w1},
       .want_requeue = kWorkerLostTimeout,
       .want_admitted = {"q1/worker1"},
       .want_workers = {{"worker1", "@1 bound"}, {"worker2", ""}}},
      {.name = "admitting remote is kept when another worker's remote is out "
               "of sync",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Worker("worker1", CopyBuilder().Admitted().Bound().Build()),
                   Worker("worker2", CopyBuilder().OutOfSync().Build())},
       .converge = true,
       .want_ops = {"Delete worker2@1"},
       .want_requeue = kWorkerLostTimeout,
       .want_workers = {{"worker1", "@1 bound"}, {"worker2", ""}}},
      {.name = "worker-lost grace applies when the admitting worker is "
               "unreachable even if another worker's remote is out of sync",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateReady, admitted_on_w1,
                                    kNow - kWorkerLostTimeout * 3 / 2)
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .state = on_w1,
       .workers = {Reconnecting("worker1", kNow),
                   Worker("worker2", CopyBuilder().OutOfSync().Build())},
       .want_ops = {"Delete worker2@1"},
       .want_requeue = kWorkerLostTimeout,
       .want_workers = {{"worker1", ""}, {"worker2", ""}}},
      {.name = "handle workload evicted on manager cluster",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateReady, admitted_on_w1)
                    .ReserveQuota(Q1(), kNow)
                    .Condition(kConditionEvicted, kConditionTrue, "ByTest",
                               "Evicted by test", kNow)
                    .Build(),
       .state = on_w1,
       .workers = {Worker(
                       "worker1",
                       CopyBuilder()
                           .Reserved()
                           .Bound()
                           .Evicted("DeactivatedDueToEvictedOnManagerCluster",
                                    "Evicted on manager: Evicted by test")
                           .Build()),
                   Worker("worker2", CopyBuilder().Build())},
       .want_workers = {{"worker1", "@1 bound evicted"}, {"worker2", "@1"}}},
      {.name = "handle workload evicted on worker cluster",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Worker("worker1", CopyBuilder()
                                         .Reserved()
                                         .Bound()
                                         .Evicted("ByTest", "Evicted by test")
                                         .Build()),
                   Worker("worker2", CopyBuilder().Build())},
       .want_check = R"(Retry: Workload evicted on worker cluster: "worker1", )"
                     R"(resetting for re-admission. Previously: "Ready")",
       .want_events = {R"(Normal: Workload evicted on worker cluster: )"
                       R"("worker1", resetting for re-admission. )"
                       R"(Previously: "Ready")"},
       .want_workers = {{"worker1", "@1 bound evicted"}, {"worker2", "@1"}}},
      {.name = "remote wl finished OutOfSync: reset admission check to Retry "
               "instead of finishing the local workload",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Worker(
           "worker1",
           CopyBuilder()
               .Reserved()
               .Bound()
               .Finished(kFinishedReasonOutOfSync,
                         "The prebuilt workload is out of sync with its user "
                         "job")
               .Build())},
       .want_check = R"(Retry: Remote workload on worker cluster "worker1" is )"
                     R"(out of sync with its user job, resetting for )"
                     R"(re-dispatch, Previously: "Ready")",
       .want_events = {R"(Warning: Remote workload on worker cluster )"
                       R"("worker1" is out of sync with its user job, )"
                       R"(resetting for re-dispatch, Previously: "Ready")"}},
      {.name = "remote wl finished OutOfSync but admission check already "
               "Retry: intercept without finishing (idempotent re-reconcile)",
       .local = Local()
                    .AdmissionCheck(
                        "ac1", kCheckStateRetry,
                        R"(Remote workload on worker cluster "worker1" is out )"
                        R"(of sync with its user job, resetting for )"
                        R"(re-dispatch, Previously: "Ready")")
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .state = on_w1,
       .workers = {Worker(
           "worker1",
           CopyBuilder()
               .Reserved()
               .Bound()
               .Finished(kFinishedReasonOutOfSync,
                         "The prebuilt workload is out of sync with its user "
                         "job")
               .Build())}},
      {.name = "remote wl is finished, the local workload and Job are marked "
               "completed ",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateReady, admitted_on_w1)
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .workers = {Worker("worker1", CopyBuilder()
                                         .Reserved()
                                         .Bound()
                                         .Finished("ByTest", "by test")
                                         .Build())},
       .want_finish = Finish{.reason = "ByTest", .message = "by test"},
       .want_workers = {{"worker1", "@1 bound"}}},
      {.name = "the local Job is marked finished, the remote objects are "
               "removed",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStatePending, admitted_on_w1)
                    .ReserveQuota(Q1(), kNow)
                    .Condition(kConditionFinished, kConditionTrue, "ByTest",
                               "by test", kNow)
                    .Build(),
       .workers = {Worker("worker1", CopyBuilder()
                                         .Reserved()
                                         .Bound()
                                         .Finished("ByTest", "by test")
                                         .Build())},
       .want_ops = {"Delete worker1@1"},
       .want_workers = {{"worker1", ""}}},
      {.name = "the local workload admission check stays Ready if the "
               "reservation was lost less than WorkerLostTimeout ago",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Reconnecting("worker1", kNow - kWorkerLostTimeout / 2)},
       .want_requeue = kWorkerLostTimeout / 2},
      {.name = "the local workload's admission check is set to Retry if the "
               "reservation was lost more than WorkerLostTimeout ago",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Reconnecting("worker1", kNow - kWorkerLostTimeout * 3 / 2)},
       .want_check = R"(Retry: Admitting remote lost, Previously: "Ready")"},
      {.name = "the local workload is NOT evicted when the admitting cluster "
               "is only reconnecting, even if the admission check transition "
               "time is old",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateReady, admitted_on_w1,
                                    kNow - kWorkerLostTimeout * 3 / 2)
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .state = on_w1,
       .workers = {Reconnecting("worker1", kNow)},
       .want_requeue = kWorkerLostTimeout},
      {.name = "the local workload IS retried when the reservation stays lost "
               "past the WorkerLostTimeout",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Reconnecting("worker1", kNow - kWorkerLostTimeout * 3 / 2)},
       .want_check = R"(Retry: Admitting remote lost, Previously: "Ready")"},
      {.name = "the local workload is retried immediately when the admitting "
               "cluster is reachable but its remote workload is gone",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Worker("worker1")},
       .want_check =
           R"(Retry: Admitting remote no longer exists, Previously: "Ready")"},
      {.name = "the local workload is retried when the admission check is "
               "Ready but no admitting cluster is recorded",
       .local = ready_on_w1,
       .workers = {Worker("worker1")},
       .want_check = "Retry: Admission check is Ready but no admitting cluster "
                     "is recorded; this is unexpected, please report it, "
                     R"(Previously: "Ready")"},
      {.name = "worker reconnects after the local workload is requeued, "
               "remote objects are deleted",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStatePending, "Requeued")
                    .Build(),
       .workers = {Worker("worker1", CopyBuilder().Reserved().Build())},
       .want_ops = {"Delete worker1@1"},
       .want_workers = {{"worker1", ""}}},

      // kq's own cases.
      {.name = "kq: an owner rejection rejects the check",
       .local = pending_reserved,
       .workers = {Worker("worker1")},
       .owner_rejection = "No multikueue adapter found",
       .want_check =
           R"(Rejected: No multikueue adapter found, Previously: "Pending")"},
      {.name = "kq: a copy of an older epoch is deleted and never a winner",
       .local = pending_reserved,
       .state = {.nominated_cluster_names = {"worker1", "worker2"}, .epoch = 2},
       .workers = {Worker("worker1", CopyBuilder(1).Admitted().Build()),
                   Worker("worker2", CopyBuilder(2).Reserved().Build())},
       .want_ops = {"Delete worker1@1", "Upsert worker1@2"},
       .want_dispatched = {"q1/worker1"},
       .want_workers = {{"worker1", "@2"}, {"worker2", "@2"}}},
      {.name = "kq: a stale copy that is admitted and bound is deleted, the "
               "winner stays",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateReady,
                                    R"(The workload was admitted on "worker2")")
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .state = {.cluster_name = "worker2", .epoch = 2},
       .workers =
           {Worker(
                "worker1",
                CopyBuilder(1).Admitted(kNow - absl::Hours(1)).Bound().Build()),
            Worker("worker2", CopyBuilder(2).Admitted().Bound().Build())},
       .converge = true,
       .want_ops = {"Delete worker1@1"},
       .want_requeue = kWorkerLostTimeout,
       .want_workers = {{"worker1", ""}, {"worker2", "@2 bound"}}},
      {.name = "kq: a finished copy of another incarnation is deleted, not "
               "copied",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Worker("worker1", CopyBuilder()
                                         .OriginUid("uid-old")
                                         .Reserved()
                                         .Finished("ByTest", "by test")
                                         .Build())},
       .want_ops = {"Delete worker1@1"},
       .want_check =
           R"(Retry: Admitting remote no longer exists, Previously: "Ready")"},
      // Found by the e2e scenario 9a: the manager restarted after
      // copying, nominated only the workers connected at once (none), and
      // the copy it had made was admitted when its worker reconnected.
      {.name = "kq: a winner missing from the nominations is nominated "
               "before clusterName is set",
       .local = pending_reserved,
       .state = {.epoch = 1},
       .workers = {Worker("worker1", CopyBuilder().Admitted().Build()),
                   Worker("worker2")},
       .want_nominated = std::vector<std::string>{"worker1"},
       .want_requeue = kSyncDeferredRequeueAfter,
       .want_workers = {{"worker1", "@1"}, {"worker2", ""}}},
      {.name = "kq: no Bind while a loser copy exists on a connected worker",
       .local = pending_reserved,
       .workers = {Worker("worker1", CopyBuilder().Admitted().Build()),
                   Worker("worker2", CopyBuilder().Reserved().Build())},
       .failing_deletes = {"worker2"},
       .converge = true,
       .max_runs = 3,
       .want_ops = {"Delete worker2@1", "Delete worker2@1", "Delete worker2@1"},
       .want_cluster_name = "worker1",
       .want_requeue = kSyncDeferredRequeueAfter,
       .want_workers = {{"worker1", "@1"}, {"worker2", "@1"}}},
      {.name = "kq: losers on disconnected workers do not block the Bind",
       .local = pending_reserved,
       .workers = {Worker("worker1", CopyBuilder().Admitted().Build()),
                   Reconnecting("worker2", kNow - absl::Minutes(1),
                                CopyBuilder().Reserved().Build())},
       .converge = true,
       .want_ops = {"Bind worker1@1"},
       .want_check = "Ready: " + admitted_on_w1,
       .want_cluster_name = "worker1",
       .want_events = {"Normal: " + admitted_on_w1},
       .want_requeue = kWorkerLostTimeout,
       .want_admitted = {"q1/worker1"},
       .want_workers = {{"worker1", "@1 bound"}, {"worker2", "@1"}}},
      {.name = "kq: the earliest admitted copy wins",
       .local = pending_reserved,
       .state = {.nominated_cluster_names = {"worker1", "worker2"}, .epoch = 1},
       .workers =
           {Worker("worker1", CopyBuilder().Admitted(kNow).Build()),
            Worker("worker2",
                   CopyBuilder().Admitted(kNow - absl::Seconds(1)).Build())},
       .want_ops = {"Delete worker1@1"},
       .want_nominated = std::vector<std::string>{},
       .want_cluster_name = "worker2",
       .want_requeue = kSyncDeferredRequeueAfter},
      {.name = "kq: the check stays Pending until the winner reports the bind",
       .local = pending_reserved,
       .state = {.cluster_name = "worker1", .epoch = 1},
       .workers = {Worker("worker1", CopyBuilder().Admitted().Build())},
       .want_ops = {"Bind worker1@1"},
       .want_requeue = kSyncDeferredRequeueAfter,
       .want_workers = {{"worker1", "@1 bound"}}},
      {.name = "kq: manager eviction deactivates the winner",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateReady, admitted_on_w1)
                    .ReserveQuota(Q1(), kNow)
                    .Condition(kConditionEvicted, kConditionTrue, "Preempted",
                               "Preempted by test", kNow)
                    .Build(),
       .state = on_w1,
       .workers = {Worker("worker1", CopyBuilder().Admitted().Bound().Build())},
       .converge = true,
       .want_ops = {"Deactivate worker1@1: Evicted on manager: Preempted by "
                    "test"},
       .want_workers = {{"worker1", "@1 bound evicted"}}},
      {.name = "kq: a recorded cluster whose copy is gone before the bind is "
               "retried",
       .local = pending_reserved,
       .state = {.cluster_name = "worker1", .epoch = 1},
       .workers = {Worker("worker1"), Worker("worker2")},
       .want_check = R"(Retry: Admitting remote no longer exists, )"
                     R"(Previously: "Pending")"},
      {.name = "kq: an admitted copy elsewhere does not replace the recorded "
               "cluster",
       .local = ready_on_w1,
       .state = on_w1,
       .workers = {Worker("worker1", CopyBuilder().Reserved().Build()),
                   Worker("worker2", CopyBuilder().Admitted().Build())},
       .want_check =
           R"(Retry: Admitting remote no longer exists, Previously: "Ready")"},
      {.name = "kq: a Retry check does not bind an admitted copy",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStateRetry, "Requeued")
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .workers = {Worker("worker1", CopyBuilder().Admitted().Build())},
       .want_requeue = kWorkerLostTimeout},
      {.name = "kq: a new dispatch raises the epoch; a disconnected worker's "
               "old copy is left to the fence",
       .local = pending_reserved,
       .state = {.epoch = 1},
       .workers = {Reconnecting("worker1", kNow - absl::Minutes(20),
                                CopyBuilder(1).Admitted().Bound().Build()),
                   Worker("worker2")},
       .want_ops = {"Upsert worker2@2"},
       .want_nominated = std::vector<std::string>{"worker2"},
       .want_epoch = 2,
       .want_dispatched = {"q1/worker2"},
       .want_workers = {{"worker1", "@1 bound"}, {"worker2", "@2"}}},
      {.name = "kq: other admission checks not Ready hold the dispatch",
       .local = Local()
                    .AdmissionCheck("ac1", kCheckStatePending)
                    .AdmissionCheck("prov", kCheckStatePending)
                    .ReserveQuota(Q1(), kNow)
                    .Build(),
       .state = {},
       .workers = {Worker("worker1")}},
      {.name = "kq: External dispatcher copies to exactly the nominations",
       .local = pending_reserved,
       .state = {.nominated_cluster_names = {"worker2"}, .epoch = 1},
       .workers = {Worker("worker1", CopyBuilder().Build()), Worker("worker2")},
       .dispatcher = "example.com/pin",
       .want_ops = {"Delete worker1@1", "Upsert worker2@2"},
       .want_epoch = 2,
       .want_dispatched = {"q1/worker2"},
       .want_workers = {{"worker1", ""}, {"worker2", "@2"}}},
      {.name = "kq: Incremental dispatcher copies to the nominations only",
       .local = pending_reserved,
       .state = {.nominated_cluster_names = {"worker1"}},
       .workers = {Worker("worker1"), Worker("worker2")},
       .dispatcher = kDispatcherIncremental,
       .want_ops = {"Upsert worker1@1"},
       .want_epoch = 1,
       .want_dispatched = {"q1/worker1"},
       .want_workers = {{"worker1", "@1"}, {"worker2", ""}}},
      {.name = "kq: AllAtOnce dispatch is steady once the copies exist",
       .local = pending_reserved,
       .state = {},
       .workers = {Worker("worker1"), Worker("worker2")},
       .converge = true,
       .want_ops = {"Upsert worker1@1", "Upsert worker2@1"},
       .want_nominated = std::vector<std::string>{"worker1", "worker2"},
       .want_epoch = 1,
       .want_dispatched = {"q1/worker1", "q1/worker2"},
       .want_workers = {{"worker1", "@1"}, {"worker2", "@1"}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Kueue, WlReconcileTest,
                         ::testing::ValuesIn(WlReconcileCases()),
                         [](const ::testing::TestParamInfo<GroupCase>& info) {
                           return SnakeCase(info.param.name);
                         });

// ---------------------------------------------------------------------------
// TestOrphanedRemoteWorkloadCleanedAfterReconnect.

TEST(WlReconcileKueueTest, OrphanedRemoteWorkloadCleanedAfterReconnect) {
  World world{
      .local = Local().AdmissionCheck("ac1", kCheckStatePending).Build(),
      .state = {.epoch = 1},
      .workers = {Worker("worker1"),
                  Reconnecting("worker2", kNow, CopyBuilder().Build())}};

  // Step 1: worker2 is reconnecting; requeue, and keep worker2's copy.
  GroupDecision d = ReconcileGroup(world.Input());
  EXPECT_TRUE(d.status.ok());
  EXPECT_EQ(d.requeue_after, kWorkerLostTimeout);
  EXPECT_THAT(d.ops, IsEmpty());

  // Step 2: worker2 reconnected; the orphaned copy is deleted.
  world.FindWorker("worker2")->connected = true;
  world.FindWorker("worker2")->lost_since.reset();
  d = ReconcileGroup(world.Input());
  EXPECT_TRUE(d.status.ok());
  EXPECT_EQ(d.requeue_after, absl::ZeroDuration());
  ASSERT_EQ(d.ops.size(), 1u);
  EXPECT_EQ(OpString(d.ops[0]), "Delete worker2@1");
  world.ApplyOps(d.ops);
  EXPECT_FALSE(world.FindWorker("worker2")->copy.has_value());
}

// ---------------------------------------------------------------------------
// The admitted metric.

World AdmittedMetricWorld(const char* check_state) {
  return World{
      .local = Local()
                   .AdmissionCheck("ac1", check_state)
                   .ReserveQuota(Q1(), kNow)
                   .Build(),
      .state = {.epoch = 1},
      .workers = {Worker("worker1", CopyBuilder().Admitted().Build())}};
}

TEST(WlReconcileKueueTest,
     MultiKueueWorkloadAdmittedMetricIncrementedOnceOnAdmission) {
  World world = AdmittedMetricWorld(kCheckStatePending);
  // kq: Pending -> Ready takes the bind first; the counter moves once.
  Trace trace = Converge(world);
  EXPECT_THAT(trace.admitted, ElementsAreArray({"q1/worker1"}));
  ASSERT_NE(world.Check(), nullptr);
  EXPECT_EQ(world.Check()->state, kCheckStateReady);

  // Another reconcile: the check is already Ready, the counter stays.
  const GroupDecision again = ReconcileGroup(world.Input());
  EXPECT_THAT(again.admitted, IsEmpty());
  EXPECT_TRUE(again.steady());
}

TEST(WlReconcileKueueTest,
     MultiKueueWorkloadAdmittedMetricNotIncrementedOnRetryOrRejected) {
  for (const char* state : {kCheckStateRetry, kCheckStateRejected}) {
    SCOPED_TRACE(state);
    World world = AdmittedMetricWorld(state);
    for (int i = 0; i < 2; ++i) {
      const GroupDecision d = ReconcileGroup(world.Input());
      EXPECT_THAT(d.admitted, IsEmpty()) << "reconcile " << i + 1;
      EXPECT_FALSE(d.update.check.has_value());
      for (const RemoteOp& op : d.ops) {
        EXPECT_NE(op.kind, RemoteOpKind::kBind);
      }
      world.ApplyOps(d.ops);
      world.ApplyUpdate(d.update);
    }
    EXPECT_EQ(world.Check()->state, state);
  }
}

// ---------------------------------------------------------------------------
// TestReconcileGroup_SyncDeferred_ShortRequeue. Kueue's deferred Job sync
// is kq's wait for the winner's bind report: the short requeue, not
// workerLostTimeout.

TEST(WlReconcileKueueTest, ReconcileGroupSyncDeferredShortRequeue) {
  const World world{
      .local = Local()
                   .AdmissionCheck("ac1", kCheckStateReady, "", kNow)
                   .ReserveQuota(Q1(), kNow)
                   .Build(),
      .state = {.cluster_name = "worker1", .epoch = 1},
      .workers = {Worker("worker1", CopyBuilder().Admitted().Build())}};
  const GroupDecision d = ReconcileGroup(world.Input());
  EXPECT_TRUE(d.status.ok());
  EXPECT_EQ(d.requeue_after, kSyncDeferredRequeueAfter);
  ASSERT_EQ(d.ops.size(), 1u);
  EXPECT_EQ(OpString(d.ops[0]), "Bind worker1@1");
  EXPECT_FALSE(d.update.check.has_value());
}

// ---------------------------------------------------------------------------
// TestNominateAndSynchronizeWorkers_MoreCases.

struct NominateCase {
  std::string name;  // Kueue's
  std::string dispatcher;
  // Connected workers, and whether each has a copy already.
  std::map<std::string, bool> remotes;
  std::vector<std::string> nominated;
  std::string cluster_name;
  std::vector<std::string> want_created;
  bool want_err = false;
  // If set, the nominations after the call.
  std::optional<std::vector<std::string>> want_nominated;
};

void PrintTo(const NominateCase& c, std::ostream* os) { *os << c.name; }

class NominateAndSynchronizeWorkersTest
    : public ::testing::TestWithParam<NominateCase> {};

TEST_P(NominateAndSynchronizeWorkersTest, MoreCases) {
  const NominateCase& tc = GetParam();
  World world{.local = WorkloadBuilder("wl").Uid(kUid).Build(),
              .state = {.nominated_cluster_names = tc.nominated,
                        .cluster_name = tc.cluster_name,
                        .epoch = 1},
              .dispatcher = tc.dispatcher};
  for (const auto& [name, has_copy] : tc.remotes) {
    world.workers.push_back(
        Worker(name, has_copy ? std::optional<RemoteCopy>(CopyBuilder().Build())
                              : std::nullopt));
  }
  const GroupDecision d = NominateAndSynchronizeWorkers(world.Input());
  EXPECT_EQ(!d.status.ok(), tc.want_err) << d.status;
  std::vector<std::string> created;
  for (const RemoteOp& op : d.ops) {
    EXPECT_EQ(op.kind, RemoteOpKind::kUpsert) << OpString(op);
    created.push_back(op.worker);
  }
  EXPECT_THAT(created, UnorderedElementsAreArray(tc.want_created));
  if (tc.want_nominated.has_value()) {
    world.ApplyUpdate(d.update);
    EXPECT_EQ(world.state.nominated_cluster_names, *tc.want_nominated);
  }
}

std::vector<NominateCase> NominateCases() {
  constexpr char kExternal[] = "external.com/mk-dispatcher";
  std::vector<std::string> names;
  std::map<std::string, bool> nine;
  for (int i = 1; i <= 9; ++i) {
    names.push_back(absl::StrCat("remote", i));
    nine[names.back()] = false;
  }
  return {
      {.name = "AllClusters: clone to all remotes, nominates all",
       .dispatcher = kDispatcherAllAtOnce,
       .remotes = {{"remote1", false}, {"remote2", false}},
       .want_created = {"remote1", "remote2"},
       .want_nominated = std::vector<std::string>{"remote1", "remote2"}},
      {.name = "AllClusters: workloads already created on remotes, do not "
               "create again",
       .dispatcher = kDispatcherAllAtOnce,
       .remotes = {{"remote1", true}, {"remote2", true}}},
      {.name = "AllClusters: nominate all workers when called directly with "
               "ClusterName set",
       .dispatcher = kDispatcherAllAtOnce,
       .remotes = {{"remote1", false}, {"remote2", false}},
       .cluster_name = "remote1",
       .want_created = {"remote1", "remote2"},
       .want_nominated = std::vector<std::string>{"remote1", "remote2"}},
      {.name = "AllClusters: same set in reversed order does not trigger "
               "unnecessary patch",
       .dispatcher = kDispatcherAllAtOnce,
       .remotes = {{"remote1", true}, {"remote2", true}},
       .nominated = {"remote2", "remote1"},
       .want_nominated = std::vector<std::string>{"remote2", "remote1"}},
      {.name = "External controller: no nominated workers, nothing created",
       .dispatcher = kExternal,
       .remotes = nine},
      {.name = "External controller: nominate remote1 and remote6",
       .dispatcher = kExternal,
       .remotes = nine,
       .nominated = {"remote1", "remote6"},
       .want_created = {"remote1", "remote6"}},
      {.name = "External controller: nominate all remotes at once",
       .dispatcher = kExternal,
       .remotes = nine,
       .nominated = names,
       .want_created = names},
      {.name = "External controller: nominated worker cluster not yet "
               "connected",
       .dispatcher = kExternal,
       .remotes = {{"remote1", false}},
       .nominated = {"remote1", "remote2"},
       .want_created = {"remote1"},
       .want_err = true,
       .want_nominated = std::vector<std::string>{"remote1", "remote2"}},
  };
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, NominateAndSynchronizeWorkersTest,
    ::testing::ValuesIn(NominateCases()),
    [](const ::testing::TestParamInfo<NominateCase>& info) {
      return SnakeCase(info.param.name);
    });

// The error names the cluster, as Kueue's errors.Join of
// ErrNoRemoteClientForNominatedCluster does.
TEST(NominateErrorTest, NotConnectedErrorNamesTheCluster) {
  World world{.local = WorkloadBuilder("wl").Uid(kUid).Build(),
              .state = {.nominated_cluster_names = {"remote1", "remote2"}},
              .workers = {Worker("remote1"), Reconnecting("remote2", kNow)},
              .dispatcher = "external.com/mk-dispatcher"};
  const GroupDecision d = NominateAndSynchronizeWorkers(world.Input());
  EXPECT_EQ(d.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(d.status.message(),
            "cluster remote2: no remote client for nominated cluster");
}

// ---------------------------------------------------------------------------
// Message truncation (Kueue's api.Truncate*Message).

TEST(TruncateTest, ConditionAndEventLimits) {
  EXPECT_EQ(TruncateEventMessage("short"), "short");
  const std::string long_event(2000, 'x');
  const std::string cut = TruncateEventMessage(long_event);
  EXPECT_EQ(cut.size(), 1024u);
  EXPECT_EQ(cut.substr(1020), " ...");
  const std::string exact(32 * 1024, 'y');
  EXPECT_EQ(TruncateConditionMessage(exact), exact);
  EXPECT_EQ(TruncateConditionMessage(exact + "z").size(), 32u * 1024);
}

// updateACS truncates the message after appending ", Previously: ...", so a
// long message loses its suffix to " ...".
TEST(TruncateTest, CheckMessageIsTruncatedWithItsSuffix) {
  World world{.local = Local()
                           .AdmissionCheck("ac1", kCheckStatePending)
                           .ReserveQuota(Q1(), kNow)
                           .Build(),
              .workers = {Worker("worker1")},
              .owner_rejection = std::string(40 * 1024, 'r')};
  const GroupDecision d = ReconcileGroup(world.Input());
  ASSERT_TRUE(d.update.check.has_value());
  EXPECT_EQ(d.update.check->state, kCheckStateRejected);
  EXPECT_EQ(d.update.check->message.size(), 32u * 1024);
  EXPECT_EQ(d.update.check->message.substr(32 * 1024 - 8), "rrrr ...");
}

// Idempotency: the same input gives the same decision.
TEST(GroupIdempotencyTest, SameInputSameDecision) {
  for (const GroupCase& tc : WlReconcileCases()) {
    if (!tc.local.has_value()) continue;
    SCOPED_TRACE(tc.name);
    World world{.local = *tc.local,
                .deleted = tc.deleted,
                .state = tc.state,
                .workers = tc.workers,
                .dispatcher = tc.dispatcher,
                .owner_rejection = tc.owner_rejection};
    const GroupDecision a = ReconcileGroup(world.Input());
    const GroupDecision b = ReconcileGroup(world.Input());
    EXPECT_EQ(a.ops, b.ops);
    EXPECT_EQ(a.update, b.update);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.requeue_after, b.requeue_after);
  }
}

}  // namespace
}  // namespace kq::federation
