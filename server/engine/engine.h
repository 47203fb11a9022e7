#pragma once

// The engine: the single owner of kq's state (DESIGN.md, "Principles").
// gRPC handlers call its thread-safe methods; each call becomes a command
// on the engine's queue. The engine thread takes every waiting command (up
// to a batch limit), applies them in order, runs scheduling passes, writes
// every change of the batch to the store in ONE transaction under a new
// revision, and only then answers the callers and publishes watch events.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "server/admission/explain.h"
#include "server/admission/pending_workloads.h"
#include "server/admission/state.h"
#include "server/admission/what_if.h"
#include "server/common/clock.h"
#include "server/core/config.h"
#include "server/core/names.h"
#include "server/core/objects.h"
#include "server/engine/admission_rate.h"
#include "server/engine/admit_waiters.h"
#include "server/engine/batch_observer.h"
#include "server/engine/event_log.h"
#include "server/engine/workload_log.h"
#include "server/store/store.h"

namespace kq::engine {

struct EngineOptions {
  // Most commands applied in one batch (one transaction).
  size_t max_batch = 4096;
  // Scheduling passes stop after this long in one batch; the rest runs in
  // the next batch.
  absl::Duration pass_budget = absl::Milliseconds(20);
  // ... or after this long when commands are waiting (their replies wait
  // for the batch after this one's commit) or when a pass of this batch
  // reserved quota (its runner learns of it only after the commit).
  absl::Duration pass_budget_when_busy = absl::Milliseconds(2);
  // Watch events kept in memory.
  size_t event_log_capacity = 100000;
  // The Kueue Configuration's admission settings (validated).
  Configuration configuration;
  // How long an evicted workload whose runner holds a live lease keeps its
  // quota while waiting for the runner to confirm the stop.
  absl::Duration eviction_grace = absl::Seconds(30);
};

// The views the engine returns are the admission state's.
using admission::FlavorPlacement;
using admission::FlavorUsage;
using admission::ObjectView;
using admission::PendingWorkload;
using admission::PendingWorkloadOptions;
using admission::PodSetPlacement;
using admission::QueueStatus;
using admission::ResourceUsage;
using admission::WorkloadView;

// The checks of a visibility request's options, for the edges that report
// a bad one before calling the engine.
using admission::ValidatePendingWorkloadsLimit;
using admission::ValidatePendingWorkloadsOffset;

struct ApplyResult {
  std::string action;  // created, configured, unchanged
  std::variant<ConfigObject, Workload> object;
  std::vector<std::string> warnings;
};

struct WorkloadFilter {
  std::string namespace_name;  // empty: all
  std::string queue_name;
  std::string cluster_queue;
  // Only MultiKueue copies of this manager origin.
  std::string origin;
  bool include_finished = false;
  // The answer leaves pod templates out (TEMPLATE_FORM_NONE): none is read
  // from the store.
  bool without_templates = false;
};

// Explain's answer plus what only the engine knows: the recent admission
// rate of the workload's ClusterQueue and the start time it suggests.
struct ExplainResult {
  admission::Explanation explanation;
  double admissions_per_minute = 0;
  std::optional<absl::Time> estimated_start;
};

// One call of a MultiKueue manager on this worker (see
// admission::AdmissionState's copy calls); a batch of them commits together.
struct RemoteCall {
  enum class Kind { kUpsert, kDelete, kBind, kRenew, kDeactivate };
  Kind kind = Kind::kUpsert;
  admission::RemoteRef ref;
  // kUpsert: the copy, as a client would submit it.
  Workload copy;
  // kBind, kRenew: the relay runner's lease.
  absl::Duration lease = absl::Seconds(30);
  // kRenew: the runner the manager relays stopped.
  bool stopped = false;
  // kBind: lease mode (see admission::AdmissionState::BindRemote).
  bool fence = false;
  // kDeactivate: why the manager evicted it ("Evicted on manager: ...").
  std::string message;
  // The result carries the copy's revision only, not the copy.
  bool omit_workload = false;
};

struct RemoteResult {
  absl::Status status;
  // The copy as committed; none for a delete, an error or omit_workload.
  std::optional<Workload> workload;
  // The copy's revision as committed (0: none).
  int64_t revision = 0;
  // kBind, kRenew: the worker evicted the copy; the runner must stop.
  bool stop = false;
  // kDelete: there was a copy to delete.
  bool existed = false;
};

struct RemoteResults {
  std::vector<RemoteResult> results;
  // The revision of the commit that applied them (the engine's revision
  // when nothing changed).
  int64_t revision = 0;
};

template <typename T>
struct Listed {
  std::vector<T> items;
  int64_t revision = 0;
};

// Thread-safe. Construct, Start(), use, Stop() (or destroy).
class Engine {
 public:
  // `store` and `clock` must outlive the engine.
  Engine(store::Store& store, Clock& clock, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Adds an observer of every committed batch (see BatchObserver); call
  // before Start(). `observer` must outlive the engine.
  void AddObserver(BatchObserver* observer);

  // Loads the state from the store, runs a first scheduling batch and
  // starts the engine thread. Errors from the store are returned as they
  // are.
  absl::Status Start();
  // Finishes the commands already queued, then stops the thread. Later
  // calls return Unavailable.
  void Stop();

  // Creates or replaces configuration objects and submits workloads, all in
  // one batch. InvalidArgument naming the object and field when any is
  // invalid, NotFound for a missing priority class; nothing changes then.
  absl::StatusOr<std::vector<ApplyResult>> Apply(
      std::vector<ConfigObject> objects, std::vector<Workload> workloads);
  // NotFound when absent; FailedPrecondition when workloads or queues still
  // depend on the object.
  absl::Status Delete(const ObjectKey& key);
  absl::StatusOr<ObjectView> GetObject(const ObjectKey& key);
  absl::StatusOr<Listed<ObjectView>> ListObjects(
      ObjectKind kind, const std::string& namespace_name);

  // Stores a new workload and runs a scheduling pass over it in the same
  // batch; answers after the batch's commit with the workload as committed
  // (no queue position: GetWorkload computes it). AlreadyExists when the
  // name is taken.
  absl::StatusOr<WorkloadView> Submit(Workload workload);
  // Submit without blocking the caller: `done` runs once, on the engine's
  // thread after the batch's commit (or at once when kqd is stopping), with
  // what Submit would return. It must not block: kqd's callback handlers
  // hand the answer to their reply thread there.
  using SubmitDone = std::function<void(absl::StatusOr<WorkloadView>)>;
  void Submit(Workload workload, SubmitDone done);
  // The answer of the other callback forms below.
  using WorkloadDone = std::function<void(absl::StatusOr<Workload>)>;
  absl::StatusOr<WorkloadView> GetWorkload(const NamespacedName& key);
  absl::StatusOr<Listed<Workload>> ListWorkloads(const WorkloadFilter& filter);
  // Finishes a workload with reason "Cancelled", releasing any quota.
  // FailedPrecondition when it already finished.
  absl::StatusOr<Workload> Cancel(const NamespacedName& key);
  // Cancel without blocking the caller; `done` runs as Submit's does.
  void Cancel(const NamespacedName& key, WorkloadDone done);
  // Reports a workload holding quota finished. FailedPrecondition when it
  // holds no quota reservation.
  absl::StatusOr<Workload> Finish(const NamespacedName& key, bool succeeded,
                                  const std::string& message);
  // Finish without blocking the caller; `done` runs as Submit's does.
  void Finish(const NamespacedName& key, bool succeeded,
              const std::string& message, WorkloadDone done);

  // Sets the state of one admission check of a workload, as its admission
  // check controller reports it, and lets Kueue's workload controller react
  // (see admission::AdmissionState::SetAdmissionCheckState): Ready admits
  // once all checks are Ready, Retry evicts and requeues after
  // `requeue_after_seconds`, Rejected deactivates. Returns the workload
  // after the batch's scheduling passes. `pod_set_updates` replace the
  // check's podSetUpdates. NotFound for an unknown workload or a check not
  // in its status.admissionChecks; FailedPrecondition when it finished;
  // InvalidArgument for an unknown state or refused pod set updates.
  absl::StatusOr<Workload> SetAdmissionCheckState(
      const NamespacedName& key, const std::string& check,
      const std::string& state, const std::string& message,
      std::optional<int32_t> requeue_after_seconds,
      std::vector<PodSetUpdate> pod_set_updates = {});

  // The runner handshake (admission::AdmissionState::Heartbeat): attach or
  // renew a lease; learn to stop; confirm the stop. FailedPrecondition also
  // when the workload finished.
  absl::StatusOr<admission::HeartbeatResult> Heartbeat(
      const NamespacedName& key, const std::string& runner_id,
      absl::Duration lease, bool stopped);
  // Heartbeat without blocking the caller; `done` runs as Submit's does.
  using HeartbeatDone =
      std::function<void(absl::StatusOr<admission::HeartbeatResult>)>;
  void Heartbeat(const NamespacedName& key, const std::string& runner_id,
                 absl::Duration lease, bool stopped, HeartbeatDone done);
  // Operator eviction (admission::AdmissionState::Preempt).
  absl::StatusOr<Workload> Preempt(const NamespacedName& key,
                                   const std::string& message,
                                   const std::string& actor, bool deactivate);
  // spec.active (admission::AdmissionState::SetActive).
  absl::StatusOr<Workload> SetWorkloadActive(const NamespacedName& key,
                                             bool active);
  // Kueue's status.reclaimablePods as a runner reports them
  // (admission::AdmissionState::SetReclaimablePods): a workload holding
  // quota holds less, and pending workloads that now fit are admitted in
  // the same batch. Returns the workload after the batch's scheduling
  // passes. FailedPrecondition also when the workload finished.
  absl::StatusOr<Workload> SetReclaimablePods(const NamespacedName& key,
                                              std::vector<ReclaimablePod> pods);
  // Sets spec.stopPolicy of a ClusterQueue or LocalQueue. InvalidArgument
  // for another kind; NotFound when absent.
  absl::StatusOr<ObjectView> SetStopPolicy(const ObjectKey& key,
                                           StopPolicy policy);

  // Why a workload is where it is (admission::Explain), with an estimated
  // start from the ClusterQueue's admissions over the last
  // `kAdmissionRateWindow`. NotFound when unknown or finished.
  absl::StatusOr<ExplainResult> Explain(const NamespacedName& key);
  // Kueue's visibility API: a page of the pending workloads of a
  // ClusterQueue, or of a LocalQueue, in the order its ClusterQueue tries
  // them, with their positions (admission::PendingWorkloadsInClusterQueue
  // and PendingWorkloadsInLocalQueue; the positions are the ones
  // GetWorkload and Explain give). NotFound for an unknown queue,
  // InvalidArgument naming the option for a bad offset or limit.
  absl::StatusOr<Listed<PendingWorkload>> PendingWorkloadsInClusterQueue(
      const std::string& cluster_queue, const PendingWorkloadOptions& options);
  absl::StatusOr<Listed<PendingWorkload>> PendingWorkloadsInLocalQueue(
      const NamespacedName& local_queue, const PendingWorkloadOptions& options);
  // The live dry-run (admission::SimulateAdmission) of a new workload, or
  // of the stored one named `key` when `workload` is null. Writes nothing.
  absl::StatusOr<admission::WhatIf> Simulate(std::optional<Workload> workload,
                                             const NamespacedName& key);

  // A MultiKueue manager's calls on this worker, applied in order in one
  // batch and answered one result each after its commit (an item that
  // fails changes nothing and does not stop the others). The batch's
  // scheduling passes run after them, so a copy created here may be
  // admitted in the same commit.
  using RemoteDone = std::function<void(absl::StatusOr<RemoteResults>)>;
  void RemoteCalls(std::vector<RemoteCall> calls, RemoteDone done);
  absl::StatusOr<RemoteResults> RemoteCalls(std::vector<RemoteCall> calls);

  // A MultiKueue manager's writes to its own workloads
  // (admission::AdmissionState::ApplyMultiKueueChange), in one batch; one
  // result each, the workload as the change left it (before the batch's
  // scheduling passes). An item that fails changes nothing.
  absl::StatusOr<std::vector<absl::StatusOr<Workload>>> UpdateMultiKueue(
      std::vector<admission::MultiKueueChange> changes);
  // An external MultiKueue dispatcher's nominations
  // (admission::AdmissionState::SetNominatedClusters).
  absl::StatusOr<Workload> SetNominatedClusters(const NamespacedName& key,
                                                std::vector<std::string> names);

  // The MultiKueueClusters' Active conditions as the federation runtime
  // sees its connections (admission::AdmissionState::
  // SetMultiKueueClusterActive); the checks and ClusterQueues that depend
  // on them are judged again. Not stored: a restarted kqd reconnects.
  absl::Status SetMultiKueueClusterActive(
      std::map<std::string, Condition> active);

  // Waits for a workload's admission without blocking: `done` runs once,
  // on the engine thread after the commit that decided it (or with
  // Unavailable at shutdown), so thousands of waiters cost a map entry
  // each. Returns an id for CancelAdmit(). NotFound, InvalidArgument and
  // AlreadyExists (for a name taken by a finished workload) reach `done`.
  int64_t Admit(AdmitWait wait, AdmitDone done);
  // Forgets a wait whose caller went away; `done` is not called.
  void CancelAdmit(int64_t id);
  // Answers every admission wait with Unavailable (shutdown begins) and
  // returns once they are answered, so that the server's shutdown neither
  // waits for them nor cancels them.
  void AbortAdmitWaits();

  // Committed changes for Watch.
  EventLog& event_log() { return event_log_; }

  // Runs `read` once on the engine thread after the next batch's commit
  // with the state as committed and its revision, so that readers off the
  // request path (the metrics' gauges) need no copy of the engine's state;
  // with a null state when kqd is stopping or the state is not the stored
  // one. `read` must not block nor call the engine.
  using StateReader =
      std::function<void(const admission::AdmissionState*, int64_t revision)>;
  void ReadState(StateReader read);

  // Kubernetes' readiness: the store is loaded, the first scheduling batch
  // ran, and the state is the stored one (see unstored_). Any thread.
  bool ready() const {
    return started_.load(std::memory_order_acquire) &&
           stored_.load(std::memory_order_relaxed);
  }

 private:
  // A reply to complete after the batch commits.
  using Reply = std::function<void(const absl::Status& commit)>;
  // One caller's call: `run` applies it (engine thread), `refuse` answers
  // the caller with an error instead while the state is not the stored one
  // (see unstored_). A command without `refuse` touches only the engine's
  // own bookkeeping and runs even then.
  struct Command {
    std::function<void()> run;
    std::function<void(const absl::Status&)> refuse;
  };

  template <typename T>
  absl::StatusOr<T> Call(std::function<absl::StatusOr<T>()> fn);

  void Loop();
  void RunBatch(std::deque<Command>& commands);
  absl::Status Load();
  absl::Status CommitBatch();
  // Calls the observers with the batch as committed (or, with no events,
  // with the passes of a batch that stored nothing).
  void NotifyObservers(absl::Span<const store::Event> events,
                       absl::Duration commit_duration);

  // State changes (engine thread only).
  absl::StatusOr<std::vector<ApplyResult>> DoApply(
      std::vector<ConfigObject>& objects, std::vector<Workload>& workloads);
  absl::StatusOr<ApplyResult> DoSubmit(Workload workload, bool from_apply);
  // Gives a workload that asked for one a generated name
  // (metadata.generateName plus 5 random characters, as Kubernetes).
  void NameIfGenerated(Workload& workload);
  // Runs `change` in a batch and answers with the workload as that batch
  // committed it (its revision, and what the batch's passes made of it),
  // read from memory or, once finished, from the batch or the store.
  absl::StatusOr<Workload> ChangeWorkload(const NamespacedName& key,
                                          std::function<absl::Status()> change);
  void ChangeWorkload(const NamespacedName& key,
                      std::function<absl::Status()> change, WorkloadDone done);
  // One of RemoteCalls' calls (engine thread).
  absl::StatusOr<RemoteResult> DoRemoteCall(RemoteCall& call);
  // Starts a callback form through `start` and blocks until it answers.
  template <typename T>
  static absl::StatusOr<T> Wait(
      const std::function<void(std::function<void(absl::StatusOr<T>)>)>& start);
  // ChangeWorkload for a change that learns the workload's key as it runs
  // (a submission names a generateName workload); `read` turns the committed
  // workload into the answer, handed to `done` on the engine thread after
  // the commit. Defined in engine.cc.
  template <typename T>
  void ChangeThenReadAsync(
      std::function<absl::StatusOr<NamespacedName>()> change,
      std::function<T(Workload)> read,
      std::function<void(absl::StatusOr<T>)> done);
  // Queues a command without waiting for it; false when stopping.
  bool Post(std::function<void()> run,
            std::function<void(const absl::Status&)> refuse);
  // Before a batch while unstored_: reloads from the store; on failure
  // refuses the batch's commands and returns false.
  bool ReloadOrRefuse(std::deque<Command>& commands);
  // The outcome for a workload, or nullopt while it still waits (engine
  // thread; `expired` answers kPending).
  absl::StatusOr<std::optional<AdmitOutcome>> Decide(const NamespacedName& key,
                                                     bool expired);
  // Before the commit: answers the waiters whose workload changed in the
  // batch, that are new, or whose deadline passed (replies run after the
  // commit). Attaches runners of admitted workloads.
  void ResolveWaiters();
  // NotFound when unknown, FailedPrecondition when finished (engine
  // thread).
  absl::Status CheckUnfinished(const NamespacedName& key);
  // A workload in any state, with its templates: in memory, or finished
  // and stored.
  // The unfinished or just finished workload of `key` in memory, or null.
  const Workload* FindInMemory(const NamespacedName& key) const;
  absl::StatusOr<std::optional<Workload>> LookupWorkload(
      const NamespacedName& key);
  // Puts back the text of the templates the state does not hold (see
  // store::PodTemplate): every workload the engine answers with or
  // publishes goes through here or through the store's reads.
  absl::Status AttachPodTemplates(Workload& wl);

  store::Store& store_;
  Clock& clock_;
  const EngineOptions options_;
  EventLog event_log_;

  absl::Mutex mu_;
  absl::CondVar wake_;
  std::deque<Command> commands_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;

  // ---- Engine-thread state --------------------------------------------
  int64_t revision_ = 0;
  // Not OK after a commit failed and the reload that should have put the
  // state back to the stored one failed too: the state holds changes that
  // were never stored, so no answer may be built on it. Every command is
  // refused with this status, and each batch (at least one a second)
  // retries the reload, until one succeeds.
  absl::Status unstored_;
  admission::AdmissionState state_;
  NameGenerator names_;
  absl::Time batch_now_;
  // Workloads submitted so far in the batch being built.
  int64_t submitted_ = 0;
  // Their templates, by workload uid, written by the batch's commit.
  absl::flat_hash_map<Uid, std::vector<store::PodTemplate>> batch_templates_;
  std::vector<Reply> replies_;
  AdmitWaiters waiters_;
  // The recent admissions, for Explain's estimated start; the first of
  // observers_.
  AdmissionRate admission_rate_;
  // The workload lifecycle's log lines; the second of observers_.
  WorkloadLog workload_log_;
  std::vector<BatchObserver*> observers_;
  // The batch's scheduling passes and command count, for observers.
  std::vector<SchedulingPass> batch_passes_;
  size_t batch_commands_ = 0;
  // Read by ready() on any thread.
  std::atomic<bool> started_{false};
  std::atomic<bool> stored_{true};
  // Workloads finished by the batch being answered, readable by its replies.
  std::map<NamespacedName, Workload> finished_in_batch_;
};

}  // namespace kq::engine
