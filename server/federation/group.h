#pragma once

// The MultiKueue manager's decision for one workload group: the local
// workload and its copies on the worker kqds. This is Kueue's wlReconciler
// (pkg/controller/admissionchecks/multikueue/workload.go, Reconcile and
// reconcileGroup) as one pure function: the caller reads the local workload,
// what each worker reports and the connection states; ReconcileGroup returns
// the remote operations to send, the one update to make to the local
// workload, the events, the requeue time and the metric deltas. No I/O,
// threads or clock reads: `now` is an input.
//
// kq has no Job objects. Where Kueue creates or syncs the remote Job on the
// winning worker, kq binds the winning copy (RemoteOpKind::kBind): a copy on
// a worker is inert (its agents never see it) until it is bound. The bind
// comes only after every other copy on a connected worker is gone, and the
// admission check turns Ready only once the winner reports the bind. Copies
// carry the dispatch epoch; a copy of another epoch (or another incarnation
// of the workload) is stale: it is deleted on sight, never bound and never
// a winner.
//
// The runtime calls ReconcileGroup again after it applied a decision, so
// the function is idempotent: the same input gives the same decision, and a
// decision whose operations and update were applied leads, run after run, to
// one with nothing left to do (only a requeue).
//
// Example:
//   GroupInput in{.local = &wl, .state = status, .check_name = "mk",
//                 .workers = workers, .settings = settings, .now = now};
//   GroupDecision d = ReconcileGroup(in);
//   // commit d.update (and the outbox of d.ops) in one transaction, then
//   // send d.ops in order; retry with backoff when !d.status.ok().

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "server/core/objects.h"

namespace kq::federation {

// Kueue's dispatcherName values; any other name is an external dispatcher
// (an outside controller writes the nominations).
inline constexpr char kDispatcherAllAtOnce[] =
    "kueue.x-k8s.io/multikueue-dispatcher-all-at-once";
inline constexpr char kDispatcherIncremental[] =
    "kueue.x-k8s.io/multikueue-dispatcher-incremental";

// Reason (and action) of every event the rules emit.
inline constexpr char kEventReason[] = "MultiKueue";
// Kueue's WorkloadFinishedReasonOutOfSync: a worker finished its copy because
// the copy no longer matched its user job; a sync failure, not a completion.
inline constexpr char kFinishedReasonOutOfSync[] = "OutOfSync";
// Kueue's syncDeferredRequeueAfter. kq uses it while it waits for a worker to
// act on this decision (a loser's delete before the bind, the winner's bind
// report before Ready), where Kueue uses it while a Job status sync is
// deferred.
inline constexpr absl::Duration kSyncDeferredRequeueAfter = absl::Seconds(2);

// The MultiKueue part of the manager's configuration that the rules read
// (Kueue's Configuration.multiKueue). The lead maps kq's MultiKueueSettings
// onto it.
struct Settings {
  std::string dispatcher_name = kDispatcherAllAtOnce;
  // incrementalDispatcherConfig.stepSize; values below 1 mean Kueue's
  // DefaultStepSize, 3.
  int32_t incremental_step_size = 3;
  // A kq extension: Kueue's round is fixed at 5 minutes
  // (incrementalDispatcherRoundTimeout).
  absl::Duration incremental_round_timeout = absl::Minutes(5);
  // multiKueue.workerLostTimeout (Kueue's Configuration default).
  absl::Duration worker_lost_timeout = absl::Minutes(15);
  // The gate MultiKueueIncrementalDispatcherRespectConfigOrder (Beta, on):
  // the Incremental dispatcher nominates in config order; off, in
  // alphabetical order.
  bool respect_config_order = true;
};

// The manager-side MultiKueue status of the local workload, persisted with
// it: Kueue's status.nominatedClusterNames and status.clusterName, kq's
// dispatch epoch, and the Incremental round start (kept in memory by Kueue).
struct ManagerState {
  std::vector<std::string> nominated_cluster_names;
  // Empty while unset; immutable once set (until an eviction clears it).
  std::string cluster_name;
  // Raised, before any copy is made, each time a new dispatch starts; every
  // copy carries the epoch it was made for.
  int64_t epoch = 0;
  std::optional<absl::Time> round_start;

  friend bool operator==(const ManagerState&, const ManagerState&) = default;
};

// What a worker reports of its copy of the local workload.
struct RemoteCopy {
  // The uid of the manager's workload the copy was made from.
  Uid origin_uid;
  int64_t epoch = 0;
  // Whether the manager's Bind reached the worker (its agents may run it).
  bool bound = false;
  // False when the copy's spec differs from the local one (the runtime
  // compares them; Kueue's isRemoteSpecOutOfSync).
  bool spec_matches = true;
  // The copy's status as the worker reports it: conditions QuotaReserved,
  // Admitted, Evicted and Finished with their reasons, messages and the
  // worker's lastTransitionTime, and its admission. Other fields are unused.
  Workload status;
};

// One MultiKueueCluster of the config, and what is known of it now.
struct WorkerView {
  std::string name;
  // Every watch of the worker is up (Kueue's connectionState.connected).
  bool connected = false;
  // When the connection first dropped (kept across failed reconnects);
  // unset while connected. A disconnected worker without it counts as lost
  // since `now`, as Kueue's admittingWorkerLostSince does.
  std::optional<absl::Time> lost_since;
  // The worker's copy, if it has one. Read only from connected workers, as
  // Kueue reads only connected clusters: a disconnected worker's copy is
  // left alone (it is unbound, so inert, or will be fenced by its epoch).
  // Shared: the runtime's mirror of the worker holds it.
  std::shared_ptr<const RemoteCopy> copy;
};

struct GroupInput {
  // The local workload, or the last state of a deleted one (with
  // `deleted`). Null means it is unknown: nothing to do.
  const Workload* local = nullptr;
  bool deleted = false;
  ManagerState state;
  // The name of the local workload's MultiKueue admission check.
  std::string check_name;
  // Kueue's rule R0a for workloads with an owner (a Job adapter): when set,
  // the check is Rejected with this message (for example "No multikueue
  // adapter found"). kq's own workloads have no owner and leave it empty.
  std::string owner_rejection;
  // The config's clusters, in config order.
  std::vector<WorkerView> workers;
  Settings settings;
  absl::Time now;
};

enum class RemoteOpKind {
  kUpsert,      // create the copy at `epoch` (a retry of an existing one is a
                // no-op; an older epoch is replaced)
  kDelete,      // delete the copy of `epoch` (gone already counts as done)
  kBind,        // let the worker's agents run the Admitted copy of `epoch`
  kDeactivate,  // Kueue's DeactivationTarget, reason EvictedOnManagerCluster
};

const char* RemoteOpKindName(RemoteOpKind kind);  // "Upsert", ...

struct RemoteOp {
  std::string worker;
  RemoteOpKind kind = RemoteOpKind::kUpsert;
  // For kUpsert and kBind the local epoch; for kDelete and kDeactivate the
  // epoch of the copy acted on.
  int64_t epoch = 0;
  // kDeactivate only: "Evicted on manager: <the local Evicted message>".
  std::string message;

  friend bool operator==(const RemoteOp&, const RemoteOp&) = default;
};

// The local workload's Finished condition, copied from the worker's copy.
struct Finish {
  std::string reason;
  std::string message;
  friend bool operator==(const Finish&, const Finish&) = default;
};

// The one update to make to the local workload; an unset field is left as
// it is.
struct LocalUpdate {
  // The MultiKueue check's new state, message and lastTransitionTime, the
  // rest of the check as it was.
  std::optional<AdmissionCheckState> check;
  std::optional<std::vector<std::string>> nominated_cluster_names;
  std::optional<std::string> cluster_name;
  std::optional<int64_t> epoch;
  // Set (a time) or cleared (nullopt inside); the Incremental dispatcher's.
  std::optional<std::optional<absl::Time>> round_start;
  std::optional<Finish> finish;

  bool empty() const;
  friend bool operator==(const LocalUpdate&, const LocalUpdate&) = default;
};

enum class EventType { kNormal, kWarning };

// An event on the local workload (reason and action kEventReason).
struct Event {
  EventType type = EventType::kNormal;
  std::string message;
  friend bool operator==(const Event&, const Event&) = default;
};

// A metric increment: multikueue_workloads_dispatched_total or
// multikueue_workloads_admitted_total{cluster_queue, cluster} by one.
struct MetricIncrement {
  std::string cluster_queue;
  std::string cluster;
  friend bool operator==(const MetricIncrement&,
                         const MetricIncrement&) = default;
};

struct GroupDecision {
  // In the order to send them: every Delete before a Bind to the same group.
  std::vector<RemoteOp> ops;
  LocalUpdate update;
  std::vector<Event> events;
  // Zero: no timed requeue.
  absl::Duration requeue_after = absl::ZeroDuration();
  // One per Upsert; the runtime counts those that succeed.
  std::vector<MetricIncrement> dispatched;
  // One when the check turns Ready from another state.
  std::vector<MetricIncrement> admitted;
  // Kueue's error returns that are the rules' own (a nominated cluster that
  // is not connected: kUnavailable, "cluster <c>: no remote client for
  // nominated cluster"). The ops and update are still to be applied; the
  // runtime retries with backoff. Errors of the remote calls are the
  // runtime's.
  absl::Status status;

  // No operation and no update: what a converged group returns.
  bool steady() const { return ops.empty() && update.empty(); }
};

// Kueue's wlReconciler.Reconcile for one workload group, rules R0-R8 of
// federation.md §1.4 in Kueue's order, with the AllAtOnce, Incremental and
// External dispatch of §1.5 (the Incremental dispatcher's nominations are
// IncrementalReconcile's; this function copies to them). Never fails as a
// call: Kueue's error returns are in `status`.
GroupDecision ReconcileGroup(const GroupInput& input);

// Kueue's nominateAndSynchronizeWorkers alone (rule R8 without its skip
// conditions), as Kueue's TestNominateAndSynchronizeWorkers_MoreCases calls
// it: nominate (AllAtOnce) or read the nominations, and create or delete the
// copies to match. Stale copies are deleted first, as in ReconcileGroup.
GroupDecision NominateAndSynchronizeWorkers(const GroupInput& input);

// Kueue's api.TruncateConditionMessage (32 KiB) and TruncateEventMessage
// (1 KiB): longer messages are cut and end with " ...".
std::string TruncateConditionMessage(std::string message);
std::string TruncateEventMessage(std::string message);

}  // namespace kq::federation
