#pragma once

// Everything admission decides on, in memory: the configuration objects,
// the unfinished workloads, the quota tree and the queues, with the
// operations that change them (apply, submit, finish, scheduling passes).
// Pure: no I/O, no threads, no clock reads (time is a parameter). The live
// server's engine owns one and adds durability, threads and events; `kq
// simulate` owns one and adds nothing, so both decide alike.

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/admission/change_log.h"
#include "server/admission/workload_table.h"
#include "server/cache/cache.h"
#include "server/core/config.h"
#include "server/core/objects.h"
#include "server/core/unadmitted.h"
#include "server/preemption/classical.h"
#include "server/preemption/holders.h"
#include "server/queue/manager.h"
#include "server/scheduler/flavor_assigner.h"
#include "server/scheduler/scheduler.h"

namespace kq::admission {

// Usage of one resource of one flavor, for queue status.
struct ResourceUsage {
  std::string name;
  Quantity total;
  Quantity borrowed;
};

struct FlavorUsage {
  std::string name;
  std::vector<ResourceUsage> resources;
};

// Computed status of a ClusterQueue or LocalQueue (Kueue's status fields).
struct QueueStatus {
  Conditions conditions;
  std::vector<FlavorUsage> flavors_reservation;
  std::vector<FlavorUsage> flavors_usage;
  int32_t pending_workloads = 0;
  int32_t reserving_workloads = 0;
  int32_t admitted_workloads = 0;
  // Kueue's status.fairSharing.weightedShare, set while fair sharing is on
  // (also for Cohorts, whose status has nothing else).
  std::optional<int64_t> weighted_share;
};

// A configuration object as read: the object plus computed status.
struct ObjectView {
  ConfigObject object;
  // Set for ClusterQueue and LocalQueue.
  std::optional<QueueStatus> status;
  // Set for AdmissionCheck and MultiKueueCluster: its Active condition.
  Conditions conditions;
};

// Where to run one flavor of an admitted pod set.
struct FlavorPlacement {
  std::string flavor;
  Labels node_labels;
  std::vector<Toleration> tolerations;
};

struct PodSetPlacement {
  std::string pod_set;
  std::vector<FlavorPlacement> flavors;
};

// A workload as read, with where to run it once admitted.
struct WorkloadView {
  Workload workload;
  std::vector<PodSetPlacement> placements;
  // 0-based position in its ClusterQueue while pending.
  std::optional<int64_t> position;
};

// Limits of one RunPasses call.
struct PassLimits {
  int max_passes = INT_MAX;
  // Checked after each pass; true stops (a time budget).
  std::function<bool()> out_of_time = [] { return false; };
  // Told after each pass how many quota reservations it made (Kueue's
  // admission attempt, "success" when any): the caller times the passes,
  // as the pure state reads no clock.
  std::function<void(int reserved)> after_pass;
};

// What a runner's Heartbeat learns.
struct HeartbeatResult {
  Workload workload;
  // The workload was evicted: stop it and confirm with stopped=true.
  bool stop = false;
};

// Names a MultiKueue copy on a worker: the workload and the manager
// workload it copies, at the manager's dispatch epoch.
struct RemoteRef {
  NamespacedName key;
  std::string origin;
  std::string origin_uid;
  int64_t epoch = 0;
};
// InvalidArgument naming the empty field (or a non-positive epoch).
absl::Status ValidateRemoteRef(const RemoteRef& ref);

// The runner a manager holds its bound copies with ("multikueue/<origin>"):
// the real runner attaches on the manager, which renews this lease while
// its own runner lives, so an eviction on the worker waits for that runner
// to stop before the worker's quota moves.
inline constexpr char kRelayRunnerPrefix[] = "multikueue/";
std::string RelayRunnerId(const std::string& origin);
bool IsRelayRunner(const std::string& runner_id);

// A MultiKueue manager's write to one of its workloads (server/federation
// decides it): made only if the workload is still at `revision` (the state
// the decision read), so that a decision never lands on a workload that
// changed under it.
struct MultiKueueChange {
  NamespacedName key;
  Uid uid;
  int64_t revision = 0;
  // The MultiKueue check's new state and message.
  std::optional<AdmissionCheckState> check_state;
  // The whole MultiKueue status as it is to be.
  std::optional<MultiKueueStatus> status;
  // Finishes the workload with the worker's reason and message.
  std::optional<std::pair<std::string, std::string>> finish;
};

// Kueue's webhook checks of status.reclaimablePods (validateReclaimablePods,
// and validateReclaimablePodsUpdate while `wl` holds quota) for `pods`
// replacing wl.reclaimable_pods. Returns them by pod set name, or
// InvalidArgument naming the field in Kueue's words: an unknown pod set
// ("status.reclaimablePods[x].name: Unsupported value ..."), a second entry
// for a pod set, a count below 0 or above the pod set's count, and, while
// quota is reserved, a count below the current one or a current entry left
// out.
absl::StatusOr<std::map<std::string, int32_t>> CheckReclaimablePods(
    const Workload& wl, const std::vector<ReclaimablePod>& pods);

// Thread-compatible: one owner thread.
class AdmissionState {
 public:
  AdmissionState() = default;
  AdmissionState(const AdmissionState&) = delete;
  AdmissionState& operator=(const AdmissionState&) = delete;

  // ---- Loading (no change recorded) ------------------------------------
  void Clear();
  void LoadObject(ConfigObject object);
  void LoadWorkload(Workload workload);

  // Gives loaded workloads that name a priority class but carry no
  // priority (0) the class's value, as Kueue does when it creates them.
  void ResolvePriorities();

  // ---- Configuration ---------------------------------------------------
  // The Kueue Configuration document's admission settings (fair sharing,
  // request transformations). Must be validated (ValidateConfiguration);
  // set before loading, it is not persisted: kqd reads it at start.
  void SetConfiguration(Configuration configuration);
  const Configuration& configuration() const { return configuration_; }

  const ConfigObject* FindObject(const ObjectKey& key) const;
  const std::map<ObjectKey, ConfigObject>& objects() const { return objects_; }
  const std::map<std::string, ClusterQueue>& cluster_queues() const {
    return cluster_queues_;
  }
  const std::map<std::string, ResourceFlavor>& flavors() const {
    return flavors_;
  }
  const std::map<NamespacedName, LocalQueue>& local_queues() const {
    return local_queues_;
  }
  const std::map<std::string, AdmissionCheck>& admission_checks() const {
    return admission_checks_;
  }
  const std::map<std::string, ProvisioningRequestConfig>&
  provisioning_request_configs() const {
    return provisioning_request_configs_;
  }
  const std::map<std::string, MultiKueueConfig>& multikueue_configs() const {
    return multikueue_configs_;
  }
  const std::map<std::string, MultiKueueCluster>& multikueue_clusters() const {
    return multikueue_clusters_;
  }
  // An AdmissionCheck's Active condition. kq runs no check controllers and
  // takes every check as active (reason Active), except those of two of
  // Kueue's controllers, which it judges as they do (their acReconciler):
  //  - provisioning (kProvisioningRequestControllerName): Active=False,
  //    reason BadParametersRef, while spec.parameters does not name an
  //    existing kueue.x-k8s.io ProvisioningRequestConfig, with Kueue's
  //    message ("missing parameters reference", "wrong kind \"X\", expecting
  //    \"ProvisioningRequestConfig\": bad parameters reference",
  //    "provisioningrequestconfigs.kueue.x-k8s.io \"name\" not found");
  //  - MultiKueue (kMultiKueueControllerName): False/BadConfig "Cannot load
  //    the AdmissionChecks parameters: <the same kind of message for a
  //    MultiKueueConfig>"; else by its clusters' Active conditions
  //    (MultiKueueClusterActiveCondition): all True -> True/Active "The
  //    admission check is active"; some missing or not True ->
  //    True/SomeActiveClusters; all -> False/NoUsableClusters, the message
  //    "Missing clusters: [a b], Inactive clusters: [c]" in config order.
  // A ClusterQueue using an inactive check is inactive (AdmissionCheckInactive)
  // and admits nothing, as in Kueue.
  Condition AdmissionCheckActiveCondition(const AdmissionCheck& check) const;

  // A MultiKueueCluster's Active condition as the federation runtime last
  // reported it (from its connection to the worker); in memory only, not
  // persisted. A change re-evaluates the MultiKueue checks and the
  // ClusterQueues using them at the next Rebuild (config_changed()). A
  // change to the cluster object (PutObject, RemoveObject) forgets the
  // report, which was about the old spec.
  void SetMultiKueueClusterActive(const std::string& name, Condition active);
  // The Active condition of `cluster`: the one reported, else, before any
  // report, False with reason BadKubeConfig for a Secret location (kq reads
  // no Secrets; the message says to use a Path) or ClientConnectionFailed
  // "not connected yet" otherwise.
  Condition MultiKueueClusterActiveCondition(
      const MultiKueueCluster& cluster) const;

  // Creates or replaces an already validated object. Returns "created",
  // "configured" or "unchanged" (then nothing changes). New objects get
  // `uid` and `now` as creation time; replaced ones keep theirs.
  std::string PutObject(ConfigObject object, const std::string& uid,
                        absl::Time now);
  // Removes an object. FailedPrecondition when a ResourceFlavor is used by
  // a ClusterQueue or a ClusterQueue still has workloads holding quota;
  // NotFound when absent.
  absl::Status RemoveObject(const ObjectKey& key);
  // Rebuilds the quota tree and the queues after configuration changed.
  // Usage is recomputed from the workloads holding quota.
  void Rebuild(absl::Time now);
  bool config_changed() const { return config_changed_; }

  // NotFound naming the field when the workload's priority class exists
  // neither here nor among `pending` objects.
  absl::Status CheckPriorityClass(
      const Workload& workload, const std::vector<ConfigObject>& pending) const;

  // ---- Workloads -------------------------------------------------------
  // In key order (namespace, name).
  const WorkloadSet& workloads() const { return workloads_.set(); }
  const Workload* FindWorkload(const NamespacedName& key) const;
  // A workload finished since the last TakeChanges(), or nullptr.
  const Workload* FindRecentlyFinished(const NamespacedName& key) const;
  // Adds a new, validated, named workload as pending (status cleared),
  // resolves its priority and queues it.
  const Workload& AddWorkload(Workload workload, const Uid& uid,
                              absl::Time now);
  // Finishes a workload with `reason` (Succeeded, Failed, Cancelled),
  // releasing its quota. NotFound when it is not among workloads().
  absl::StatusOr<Workload> FinishWorkload(const NamespacedName& key,
                                          const std::string& reason,
                                          const std::string& message,
                                          absl::Time now);

  // Records the state of admission check `check` of an unfinished workload
  // as its admission check controller reports it (Kueue's
  // SetAdmissionCheckState; `state` is Pending, Ready, Retry or Rejected),
  // then reacts as Kueue's workload controller does:
  //  - Ready/Pending: SyncAdmittedCondition (Admitted=True once every check
  //    is Ready while quota is reserved, False again otherwise);
  //  - Retry: check-based eviction (Evicted=True, reason AdmissionCheck),
  //    quota released, Requeued=False until `requeue_at` (the check's
  //    lastTransitionTime plus `requeue_after_seconds`, or at once) passes;
  //    a workload already evicted is only recorded;
  //  - Rejected: deactivation (spec.active=false, Evicted=True reason
  //    DeactivatedDueToAdmissionCheck), quota released, never queued again.
  // `pod_set_updates` replace the check's podSetUpdates, whatever the state
  // (Kueue's SetAdmissionCheckState copies them with the state; eviction
  // resets the check to Pending without them). They must pass Kueue's
  // workload webhook (ValidatePodSetUpdates), may not change while the check
  // stays Ready (validateImmutablePodSetUpdates) and may not conflict with
  // what the job's pods get anyway (CheckPodSetUpdateConflicts), which reads
  // the pod templates: of `with_templates` when given (the workload with
  // the text of its templates kept on disk), else of the workload here.
  // Returns the workload as changed. NotFound when the workload is not among
  // workloads() or has no such check in status.admissionChecks;
  // InvalidArgument for an unknown state, a negative requeue delay or
  // refused pod set updates (naming the workload and the field:
  // `Workload "ns/w": status.admissionChecks[0].podSetUpdates[0].name:
  // ...`); nothing changes then.
  absl::StatusOr<Workload> SetAdmissionCheckState(
      const NamespacedName& key, const std::string& check,
      const std::string& state, const std::string& message,
      std::optional<int32_t> requeue_after_seconds, absl::Time now,
      const std::vector<PodSetUpdate>& pod_set_updates = {},
      const Workload* with_templates = nullptr);
  // The earliest time something is due without a command: the end of an
  // admission check backoff, an evicting workload's stop deadline or its
  // runner's lease expiry. Nullopt when nothing waits; a caller with a
  // clock runs RunPasses() again once it passes. Not const: it brings the
  // index of timed workloads up to date, so that each change is looked at
  // once.
  std::optional<absl::Time> NextWakeup();

  // ---- Runners and operators -------------------------------------------
  // How long an evicted workload with a live runner keeps its quota while
  // waiting for the runner to confirm the stop. Default 30 s.
  void set_eviction_grace(absl::Duration grace) { eviction_grace_ = grace; }

  // The runner handshake. Attaches `runner_id` to an admitted workload or
  // renews its lease to now + `lease`; once the workload is evicted the
  // result says stop, and a call with `stopped` releases the quota (the
  // workload is requeued or not, as its eviction reason says).
  // FailedPrecondition when another runner holds a live lease, when the
  // workload holds no quota (the caller must stop), when it is not admitted
  // yet, or for `stopped` when it is not being evicted; NotFound when
  // unknown; InvalidArgument for an empty runner id or a lease <= 0.
  absl::StatusOr<HeartbeatResult> Heartbeat(const NamespacedName& key,
                                            const std::string& runner_id,
                                            absl::Duration lease, bool stopped,
                                            absl::Time now);
  // Operator eviction: Evicted=True, reason Preempted ("Preempted by
  // <actor>: <message>"), then requeued once stopped; with `deactivate`,
  // as SetActive(false) with the actor in the message.
  // FailedPrecondition when it holds no quota or is already being evicted
  // (or, with `deactivate`, is inactive already); NotFound when unknown.
  absl::StatusOr<Workload> Preempt(const NamespacedName& key,
                                   const std::string& message,
                                   const std::string& actor, bool deactivate,
                                   absl::Time now);
  // Kueue's spec.active. false: leaves its queue; Evicted=True reason
  // Deactivated, quota released once stopped (Requeued=False, Deactivated;
  // then QuotaReserved=False, Deactivated). true: Requeued=True
  // (Reactivated) and queued again (QuotaReserved=False, PendingEvaluation,
  // until the scheduler looks). NotFound when unknown.
  absl::StatusOr<Workload> SetActive(const NamespacedName& key, bool active,
                                     absl::Time now);

  // Kueue's status.reclaimablePods, as a job integration reports them:
  // `pods` replaces the workload's list (CheckReclaimablePods). A workload
  // holding quota swaps its usage in the quota tree, and its ClusterQueue's
  // admitted usage, for UsageOf() with the new counts; workloads parked as
  // inadmissible in its cohort tree are queued again (Kueue's workload
  // controller) and needs_scheduling() is set. A queued pending workload
  // is pushed back to its queue's heap to be tried with its smaller
  // requests. Returns the workload as changed (unchanged when the list is
  // the same). NotFound when unknown; InvalidArgument as
  // CheckReclaimablePods.
  absl::StatusOr<Workload> SetReclaimablePods(
      const NamespacedName& key, const std::vector<ReclaimablePod>& pods,
      absl::Time now);

  // ---- MultiKueue copies (the worker side of kq federation) ------------
  // Each is safe to repeat: a manager that lost an answer sends the call
  // again and gets the same answer. FailedPrecondition when the name holds
  // a workload that is not a copy of `ref`'s manager workload (the worker's
  // own, or another origin's or origin uid's, Kueue #12404), or a copy of
  // another epoch than the call needs; InvalidArgument for a bad ref.
  //
  // Creates `copy` (validated, named ref.key) as a pending, unbound copy,
  // labelled kueue.x-k8s.io/multikueue-origin=<origin>: it competes for
  // quota but no runner may attach to it. A repeat (same epoch) returns the
  // copy as it is. A copy of an older epoch must be deleted first, and one
  // of a newer epoch makes the call stale (FailedPrecondition).
  // `stored` is the finished workload of that name on disk, if any (the
  // state holds only unfinished ones).
  absl::StatusOr<Workload> UpsertRemote(Workload copy, const RemoteRef& ref,
                                        const Uid& uid, const Workload* stored,
                                        absl::Time now);
  // Removes the copy and its stored row, releasing any quota it holds at
  // once: the manager deletes a bound copy only after the runner it relays
  // stopped. Returns whether there was one (absent is success). A copy of a
  // newer epoch than ref's is not removed (FailedPrecondition).
  absl::StatusOr<bool> DeleteRemote(const RemoteRef& ref,
                                    const Workload* stored);
  // Binds the admitted copy of ref's epoch: the manager's relay runner
  // (RelayRunnerId) attaches with `lease`, and the copy may run. A repeat
  // renews the lease. FailedPrecondition when the copy is not admitted or
  // is being evicted.
  // With `fence` (lease mode), a lapse of the relay's lease makes the
  // worker evict and deactivate the copy itself (reason ManagerLost).
  absl::StatusOr<HeartbeatResult> BindRemote(const RemoteRef& ref,
                                             absl::Duration lease, bool fence,
                                             absl::Time now);
  // The relay runner's heartbeat on a bound copy: renews its lease, says
  // stop once the worker evicts it, and with `stopped` confirms the stop
  // (the runner the manager relays stopped), releasing the quota.
  absl::StatusOr<HeartbeatResult> RenewRemote(const RemoteRef& ref,
                                              absl::Duration lease,
                                              bool stopped, absl::Time now);
  // Kueue's DeactivationTarget with cause EvictedOnManagerCluster:
  // spec.active=false and Evicted=True with reason
  // DeactivatedDueToEvictedOnManagerCluster and message "The workload is
  // deactivated due to <message>" (the manager sends "Evicted on manager:
  // ..."). A repeat returns the copy unchanged.
  absl::StatusOr<Workload> DeactivateRemote(const RemoteRef& ref,
                                            const std::string& message,
                                            absl::Time now);

  // ---- MultiKueue (the manager side of kq federation) -------------------
  // Applies `change`: the status first, then the check state (through
  // SetAdmissionCheckState, so Ready admits, Retry evicts and requeues,
  // Rejected deactivates), or the finish alone. Aborted when the workload
  // is no longer at change.revision (or is another of the same name);
  // InvalidArgument for a status Kueue's Workload webhook refuses
  // (clusterName changed once set, set beside nominations, or set to a
  // cluster that was not nominated); NotFound when unknown or without the
  // check. Nothing changes on an error.
  absl::StatusOr<Workload> ApplyMultiKueueChange(const MultiKueueChange& change,
                                                 absl::Time now);
  // An external dispatcher's status.nominatedClusterNames (see
  // AdminService.SetNominatedClusters), with Kueue's validation: at most 20
  // names, none repeated, none empty or longer than 256 characters, and not
  // once clusterName is set. FailedPrecondition when the workload has no
  // MultiKueue check or the configuration's dispatcher is Kueue's own.
  absl::StatusOr<Workload> SetNominatedClusters(
      const NamespacedName& key, const std::vector<std::string>& names);

  // ---- Scheduling ------------------------------------------------------
  // Runs Kueue scheduling passes (at most one head per ClusterQueue each)
  // until a pass admits and parks nothing, or a limit is hit. Returns the
  // number of passes run.
  int RunPasses(absl::Time now, const PassLimits& limits = {});
  // Whether something happened that a scheduling pass should look at.
  bool needs_scheduling() const { return needs_scheduling_; }
  void set_needs_scheduling() { needs_scheduling_ = true; }

  // ---- Reads -----------------------------------------------------------
  ObjectView ViewOf(const ConfigObject& object) const;
  // `with_position`: also its position in its ClusterQueue (a walk of the
  // queue; answers that carry no position skip it). Takes the workload by
  // value: a caller with a copy of its own moves it in.
  WorkloadView ViewOf(Workload workload, bool with_position = true) const;
  // The ClusterQueue a workload is admitted to or would be queued in.
  std::string ClusterQueueForWorkload(const Workload& workload) const;
  // A LocalQueue's Active condition, as Kueue's LocalQueue reconciler
  // writes it.
  Condition LocalQueueActiveCondition(const LocalQueue& lq) const;

  // Kueue's kueue_unadmitted_workloads{cluster_queue, reason,
  // underlying_cause} gauge (pkg/cache/queue/unadmitted_workloads.go): per
  // ClusterQueue, how many workloads it counts under each UnadmittedReason
  // (core/unadmitted.h, UnadmittedReasonOf). The cluster_queue label is the
  // ClusterQueue the workload's LocalQueue points to, whether that
  // ClusterQueue exists or not; workloads whose LocalQueue does not exist
  // are left out (Kueue reports no series for an empty cluster_queue).
  // Walks every unfinished workload: O(n) in workloads(). The one-queue form
  // walks them all too; a scrape of every ClusterQueue should call the
  // other once.
  std::map<UnadmittedReason, int64_t> UnadmittedWorkloadCounts(
      const std::string& cluster_queue) const;
  std::map<std::string, std::map<UnadmittedReason, int64_t>>
  UnadmittedWorkloadCounts() const;

  // The pending queues, for tests that check which workloads are left in
  // a ClusterQueue's heap and which are parked as inadmissible.
  const queue::Manager& queues_for_test() const { return queues_; }
  const queue::Manager& queues() const { return queues_; }
  const std::map<std::string, Namespace>& namespaces() const {
    return namespaces_;
  }
  // The quota tree. Searches that try removals (the preemption oracle) use
  // the mutable form and restore it before returning.
  const cache::Cache& cache() const { return cache_; }
  cache::Cache& cache_for_search() { return cache_; }
  // The workloads holding quota by ClusterQueue (what the preemption
  // searches walk), kept with the quota tree.
  const preemption::HoldingQuota& holders() const { return holders_; }

  // ---- Changes ---------------------------------------------------------
  // Returns and forgets what changed since the last call.
  Changes TakeChanges();
  // What changed since the last TakeChanges(), without forgetting it. May
  // list a workload that TakeChanges drops: one whose pending condition
  // changed and changed back.
  const Changes& pending_changes() const { return change_log_.pending(); }
  // Quota reservations made since this state was created (a counter).
  int64_t reservations() const { return reservations_; }
  // Sets the revision of a changed object or workload still in memory. The
  // workload's returns it, or nullptr when it is no longer in memory.
  void StampRevision(const ObjectKey& key, int64_t revision);
  const Workload* StampRevision(const NamespacedName& key, int64_t revision);

 private:
  // A held workload, to change: anything but its name, which is its key in
  // workloads_.
  static Workload& Mutable(const Workload& wl) {
    return WorkloadTable::Mutable(wl);
  }

  // The held workload (or the finished one) under ref.key when it is ref's
  // manager workload's copy (of ref's epoch with `same_epoch`); nullptr for
  // none; FailedPrecondition when the name holds something else.
  absl::StatusOr<const Workload*> CheckOwnedCopy(const RemoteRef& ref,
                                                 const Workload* held,
                                                 bool same_epoch) const;
  // The unfinished copy of ref's epoch; NotFound when absent.
  absl::StatusOr<Workload*> FindOwnedCopy(const RemoteRef& ref);
  // Lease mode: evicts and deactivates `wl` if it is a fenced, bound copy
  // whose relay lease lapsed. Returns whether it did.
  bool FenceLapsedCopy(Workload& wl, absl::Time now);
  // Whether a lapse of `wl`'s relay lease would fence it.
  static bool IsFencedCopy(const Workload& wl);
  // Takes a workload out of the state, its quota released, with no
  // condition set (the first half of FinishWorkload).
  Workload TakeWorkload(const NamespacedName& key);
  void EnqueueOrBlock(Workload& workload, absl::Time now);
  void ReserveQuota(Workload& workload, Admission admission, absl::Time now);
  void ReleaseQuota(const Workload& workload);
  // Kueue's IssuePreemptions for `preemptor`, to be admitted to
  // `cluster_queue`: each victim still holding quota gets Evicted=True
  // (Preempted) and Preempted=True (the target's reason) with Kueue's
  // message, then its eviction completes (Requeued=True, quota released)
  // and it is queued again. Returns whether any victim was evicted.
  bool IssuePreemptions(const Workload& preemptor,
                        const std::string& cluster_queue,
                        const std::vector<scheduler::PreemptionTarget>& victims,
                        absl::Time now);
  void ApplyStopPolicies(absl::Time now);
  // Kueue's SyncAdmittedCondition for a workload holding quota: Admitted
  // follows whether every admission check is Ready, and the ClusterQueue's
  // admitted usage follows Admitted.
  void SyncAdmitted(Workload& workload, absl::Time now);
  // Workloads evicted by an admission check whose backoff is over get
  // Requeued=True (BackoffFinished) and are queued again.
  void RequeueBackedOff(absl::Time now);
  // Kueue's eviction: Evicted=True with `reason`; admission checks reset
  // to Pending. The quota is still held.
  void Evict(Workload& workload, const std::string& reason,
             const std::string& message, absl::Time now);
  // What Kueue's job reconciler does once an evicted job stopped: Requeued
  // (True only after preemption or node failures), quota released,
  // QuotaReserved=False (PendingEvaluation), admission cleared. Called when
  // the workload's runner confirmed the stop, its lease lapsed or the
  // eviction grace ended, and at once for a workload without a runner
  // (StopOrRelease).
  void CompleteEviction(Workload& workload, absl::Time now);
  // After Evict(): with a runner holding a live lease, sets the stop
  // deadline and waits for it; otherwise ReleaseEvicted() at once.
  void StopOrRelease(Workload& workload, absl::Time now);
  // CompleteEviction(), the runner detached, and back to its queue when
  // Requeued=True and active.
  void ReleaseEvicted(Workload& workload, absl::Time now);
  // Releases evicting workloads whose stop deadline passed or whose
  // runner's lease lapsed.
  void ReleaseOverdueEvictions(absl::Time now);
  // spec.active=false with its eviction (Kueue's workload controller).
  void Deactivate(Workload& workload, const std::string& message,
                  absl::Time now);
  void UnsetQuotaReservation(Workload& workload, const std::string& reason,
                             const std::string& message, absl::Time now);
  void QueueInadmissibleInTree(const std::string& cluster_queue);
  void ResolvePriority(Workload& workload) const;
  // Kueue's UnsetQuotaReservationWithCondition for a workload holding no
  // quota: QuotaReserved=False with `reason` and `message`, and (its
  // SyncAdmittedCondition, UnadmittedWorkloadsObservability on)
  // Admitted=False NoReservation; nothing when both say so already.
  void SetPendingCondition(Workload& wl, const std::string& reason,
                           const std::string& message, absl::Time now);
  // Kueue's getQueueBlocker followed by ValidateAdmissibility's namespace
  // check: why `wl` cannot be queued for scheduling, as the QuotaReserved
  // reason and message ("LocalQueue lq doesn't exist", "LocalQueue lq is
  // inactive" for a stopped one, "ClusterQueue cq doesn't exist",
  // "ClusterQueue cq is inactive" for a stopped or inactive one,
  // "workload namespace doesn't match ClusterQueue selector"); nullopt when
  // nothing blocks it.
  std::optional<std::pair<std::string, std::string>> QueueBlocker(
      const Workload& wl) const;
  // Kueue's workload controller for a workload neither admitted nor holding
  // quota (syncQuotaReservedFalseCondition with the tiered reasons, then
  // SyncAdmittedCondition), with Kueue's default gates: Deactivated while
  // spec.active is false, else the QueueBlocker, else the scheduler's reason
  // kept (IsSchedulerSetReason), else PendingEvaluation ("Workload is
  // pending evaluation in the scheduling queue") once a condition exists; a
  // workload without conditions gets none (UnadmittedWorkloadsExplicitStatus
  // is off). Admitted=False NoReservation follows. Called wherever kq
  // reconciles a workload that waits: EnqueueOrBlock, a released eviction
  // that is not requeued, deactivation, and after the scheduler wrote a
  // reason the controller re-derives.
  void SyncUnreservedConditions(Workload& wl, absl::Time now);
  // Records a change of `key` in the change log, and for the index of timed
  // workloads.
  void MarkWorkload(const NamespacedName& key, Change change);
  // Inserts or replaces `key`'s workload; a new one of the same name leaves
  // the queue of the old.
  Workload& PutWorkload(const NamespacedName& key, Workload workload);
  // Brings timed_workloads_ up to date with the workloads marked since.
  void IndexTimedWorkloads();
  // Whether a clock can change `wl` (see timed_workloads_).
  static bool IsTimed(const Workload& wl);
  QueueStatus ClusterQueueStatusOf(const std::string& name) const;
  QueueStatus LocalQueueStatusOf(const LocalQueue& lq) const;

  Configuration configuration_;
  std::map<ObjectKey, ConfigObject> objects_;
  std::map<std::string, ResourceFlavor> flavors_;
  std::map<std::string, ClusterQueue> cluster_queues_;
  std::map<std::string, Cohort> cohorts_;
  std::map<NamespacedName, LocalQueue> local_queues_;
  std::map<std::string, WorkloadPriorityClass> priority_classes_;
  std::map<std::string, AdmissionCheck> admission_checks_;
  std::map<std::string, ProvisioningRequestConfig>
      provisioning_request_configs_;
  std::map<std::string, MultiKueueConfig> multikueue_configs_;
  std::map<std::string, MultiKueueCluster> multikueue_clusters_;
  // MultiKueueCluster name -> its Active condition as reported by the
  // federation runtime (SetMultiKueueClusterActive).
  std::map<std::string, Condition> multikueue_cluster_active_;
  std::map<std::string, Namespace> namespaces_;
  WorkloadTable workloads_;
  cache::Cache cache_;
  queue::Manager queues_;
  // Flavor-scan bookmarks of pending workloads (Kueue's LastAssignment).
  absl::node_hash_map<NamespacedName, scheduler::LastAssignment>
      last_assignments_;
  // Kueue's AllocatableResourceGeneration per ClusterQueue.
  std::map<std::string, int64_t> cluster_queue_generations_;
  // Nominations of heads that could not be admitted, each valid while its
  // cohort tree is unchanged (see scheduler::NominationMemo).
  scheduler::NominationMemo nominations_;
  // Per cohort tree (its generation slot), the queues' park_version() when
  // its inadmissible workloads were last moved back: finishes in one tree
  // between two passes move them once. Cleared by every Rebuild.
  absl::flat_hash_map<const void*, uint64_t> requeued_trees_;
  // The workloads holding quota by ClusterQueue, for the preemption
  // searches: added by ReserveQuota, removed by ReleaseQuota (and before a
  // finished workload leaves workloads_), rebuilt by Rebuild.
  preemption::HoldingQuota holders_;
  // What the classical preemption searches learn about holders_, kept from
  // one pass's Oracle to the next: a ClusterQueue's users of a contested
  // flavor-resource are read again only when its holders change. Cleared
  // with each Cache rebuild.
  preemption::WithinNominalMemo preemption_memo_;
  // The workloads a clock can change (a stop deadline, or an admission
  // check backoff to wait out), so that the clock's checks and NextWakeup
  // visit only them. Every change of a workload is marked (MarkWorkload),
  // so the marked keys are re-examined before each use; Rebuild indexes
  // everything.
  std::set<NamespacedName> timed_workloads_;
  std::vector<NamespacedName> marked_since_index_;
  int64_t scheduling_cycle_ = 0;
  absl::Duration eviction_grace_ = absl::Seconds(30);
  ChangeLog change_log_;
  bool config_changed_ = false;
  bool needs_scheduling_ = false;
  int64_t reservations_ = 0;
};

}  // namespace kq::admission
