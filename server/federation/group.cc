#include "server/federation/group.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/core/conditions.h"
#include "server/core/objects.h"

namespace kq::federation {
namespace {

// Kueue's pkg/util/api limits.
constexpr size_t kMaxConditionMessageSize = 32 * 1024;
constexpr size_t kMaxEventMessageSize = 1024;

std::string Truncate(std::string message, size_t limit) {
  if (message.size() <= limit) return message;
  constexpr absl::string_view kSuffix = " ...";
  message.resize(limit - kSuffix.size());
  absl::StrAppend(&message, kSuffix);
  return message;
}

// Go's %q for the names the messages quote (cluster names and check
// states): double quotes, with quotes and backslashes escaped.
std::string Quote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

const AdmissionCheckState* FindCheck(const Workload& wl,
                                     const std::string& name) {
  if (name.empty()) return nullptr;
  for (const AdmissionCheckState& check : wl.admission_checks) {
    if (check.name == name) return &check;
  }
  return nullptr;
}

bool IsFinished(const Workload& wl) {
  return IsConditionTrue(wl.conditions, kConditionFinished);
}

bool IsEvicted(const Workload& wl) {
  return IsConditionTrue(wl.conditions, kConditionEvicted);
}

std::string ClusterQueueOf(const Workload& wl) {
  return wl.admission.has_value() ? wl.admission->cluster_queue : std::string();
}

// One connected worker of the group and its current copy (null: none, or
// deleted by this decision). Kueue's wlGroup.remotes.
struct Remote {
  const WorkerView* worker = nullptr;
  const RemoteCopy* copy = nullptr;
};

// Kueue's wlGroup, read from the input.
class Group {
 public:
  Group(const GroupInput& in, GroupDecision* decision)
      : in_(in), local_(*in.local), decision_(decision) {}

  // Kueue's readGroup: the connected workers' copies, with kq's fence. A
  // copy of another epoch or another incarnation of the workload is stale:
  // it is deleted now and takes no part in any rule.
  void Read() {
    for (const WorkerView& worker : in_.workers) {
      if (!worker.connected) {
        unavailable_.push_back(worker.name);
        continue;
      }
      Remote remote{.worker = &worker};
      if (worker.copy != nullptr) {
        if (IsCurrent(*worker.copy)) {
          remote.copy = &*worker.copy;
        } else {
          DeleteCopy(worker.name, *worker.copy);
        }
      }
      remotes_.push_back(remote);
    }
  }

  bool IsCurrent(const RemoteCopy& copy) const {
    return copy.origin_uid == local_.meta.uid && copy.epoch == in_.state.epoch;
  }

  void DeleteCopy(const std::string& worker, const RemoteCopy& copy) {
    decision_->ops.push_back(RemoteOp{
        .worker = worker, .kind = RemoteOpKind::kDelete, .epoch = copy.epoch});
  }

  // Kueue's RemoveRemoteObjects for a connected worker.
  void Remove(Remote& remote) {
    if (remote.copy == nullptr) return;
    DeleteCopy(remote.worker->name, *remote.copy);
    remote.copy = nullptr;
  }

  // Kueue's bestMatchByCondition: the copy whose condition of `type` is
  // True and turned so first; ties go to the earlier cluster in the config
  // (Kueue's map order is random there).
  Remote* BestMatchByCondition(const char* type) {
    Remote* best = nullptr;
    absl::Time best_time;
    for (Remote& remote : remotes_) {
      if (remote.copy == nullptr) continue;
      const Condition* c = FindCondition(remote.copy->status.conditions, type);
      if (c == nullptr || c->status != kConditionTrue) continue;
      if (best == nullptr || c->last_transition_time < best_time) {
        best = &remote;
        best_time = c->last_transition_time;
      }
    }
    return best;
  }

  bool IsUnavailable(const std::string& name) const {
    return std::find(unavailable_.begin(), unavailable_.end(), name) !=
           unavailable_.end();
  }

  const WorkerView* FindWorker(const std::string& name) const {
    for (const WorkerView& worker : in_.workers) {
      if (worker.name == name) return &worker;
    }
    return nullptr;
  }

  const GroupInput& in() const { return in_; }
  const Workload& local() const { return local_; }
  std::vector<Remote>& remotes() { return remotes_; }
  const std::vector<std::string>& unavailable() const { return unavailable_; }

 private:
  const GroupInput& in_;
  const Workload& local_;
  GroupDecision* decision_;
  std::vector<Remote> remotes_;  // config order
  std::vector<std::string> unavailable_;
};

// Kueue's updateACS: the new state, with ", Previously: "<old state>"" and
// a fresh lastTransitionTime.
void UpdateCheck(const AdmissionCheckState& acs, const char* state,
                 const std::string& message, absl::Time now, GroupDecision* d) {
  AdmissionCheckState next = acs;
  next.state = state;
  next.message = TruncateConditionMessage(
      absl::StrCat(message, ", Previously: ", Quote(acs.state)));
  next.last_transition_time = now;
  d->update.check = std::move(next);
}

// Rule R8 after its skip conditions: Kueue's nominateAndSynchronizeWorkers.
void Synchronize(Group& g, GroupDecision* d) {
  const GroupInput& in = g.in();
  const Workload& local = g.local();
  // Copies are made only once every other admission check is Ready (#9622).
  for (const AdmissionCheckState& check : local.admission_checks) {
    if (check.name != in.check_name && check.state != kCheckStateReady) {
      return;
    }
  }
  // Kueue's multi-workload owners (LeaderWorkerSet) and elastic slices have
  // no kq counterpart.

  std::vector<std::string> nominated;
  if (in.settings.dispatcher_name == kDispatcherAllAtOnce) {
    for (const Remote& remote : g.remotes()) {
      nominated.push_back(remote.worker->name);
    }
    std::sort(nominated.begin(), nominated.end());
    const std::set<std::string> before(in.state.nominated_cluster_names.begin(),
                                       in.state.nominated_cluster_names.end());
    if (before != std::set<std::string>(nominated.begin(), nominated.end())) {
      d->update.nominated_cluster_names = nominated;
    }
  } else {
    // Incremental and External: the nominations are someone else's.
    nominated = in.state.nominated_cluster_names;
  }

  std::vector<std::string> errors;
  std::set<std::string> connected;
  for (const Remote& remote : g.remotes()) {
    connected.insert(remote.worker->name);
  }
  for (const std::string& name : nominated) {
    if (connected.count(name) == 0) {
      errors.push_back(absl::StrCat(
          "cluster ", name, ": no remote client for nominated cluster"));
    }
  }

  bool has_current_copy = false;
  std::vector<std::string> creates;
  for (Remote& remote : g.remotes()) {
    const std::string& name = remote.worker->name;
    const bool is_nominated =
        std::find(nominated.begin(), nominated.end(), name) != nominated.end();
    if (is_nominated) {
      if (remote.copy == nullptr) {
        creates.push_back(name);
      } else {
        has_current_copy = true;
      }
    } else {
      g.Remove(remote);
    }
  }

  // A new dispatch starts when copies are to be made and no connected
  // worker holds one of the current epoch: raise the epoch first, so any
  // copy left from an earlier dispatch (on a worker out of reach now) is
  // stale when it is seen again.
  int64_t epoch = in.state.epoch;
  if (!creates.empty() && !has_current_copy) {
    epoch = in.state.epoch + 1;
    d->update.epoch = epoch;
  }
  for (const std::string& name : creates) {
    d->ops.push_back(RemoteOp{
        .worker = name, .kind = RemoteOpKind::kUpsert, .epoch = epoch});
    d->dispatched.push_back(MetricIncrement{
        .cluster_queue = ClusterQueueOf(local), .cluster = name});
  }
  if (!errors.empty()) {
    d->status = absl::UnavailableError(absl::StrJoin(errors, "\n"));
  }
}

// Rule R6b: an admitted copy is visible; converge on it.
void Converge(Group& g, Remote& winner, const AdmissionCheckState& acs,
              GroupDecision* d) {
  const GroupInput& in = g.in();
  const Workload& local = g.local();
  const std::string& name = winner.worker->name;

  // 1. Delete every other copy on a connected worker. The stale ones were
  //    deleted when the group was read.
  bool others_remain = !d->ops.empty();
  for (Remote& remote : g.remotes()) {
    if (&remote == &winner || remote.copy == nullptr) continue;
    g.Remove(remote);
    others_remain = true;
  }

  // 2. Evicted on the manager while still holding quota: deactivate the
  //    winner, and nothing more.
  const Condition* evicted = FindCondition(local.conditions, kConditionEvicted);
  if (HoldsQuota(local) && evicted != nullptr &&
      evicted->status == kConditionTrue) {
    d->ops.push_back(RemoteOp{.worker = name,
                              .kind = RemoteOpKind::kDeactivate,
                              .epoch = winner.copy->epoch,
                              .message = TruncateConditionMessage(absl::StrCat(
                                  "Evicted on manager: ", evicted->message))});
    return;
  }

  // A Retry or Rejected check is never turned back to Ready (Kueue's
  // needsACUpdate); kq does not bind then either, since the core is about
  // to evict the workload.
  d->requeue_after = in.settings.worker_lost_timeout;
  if (acs.state == kCheckStateRetry || acs.state == kCheckStateRejected) {
    return;
  }

  // 3. Record the winner: clusterName is set once (only to a nominated or
  //    the recorded cluster) and the nominations are cleared with it.
  //    AllAtOnce nominates the connected workers only, so a manager that
  //    restarted after copying may have nominated fewer workers since,
  //    while they reconnected: the winner is nominated again first, as
  //    Kueue's webhook refuses a clusterName outside the nominations.
  if (in.state.cluster_name.empty() &&
      in.settings.dispatcher_name == kDispatcherAllAtOnce &&
      std::find(in.state.nominated_cluster_names.begin(),
                in.state.nominated_cluster_names.end(),
                name) == in.state.nominated_cluster_names.end()) {
    std::vector<std::string> nominated = in.state.nominated_cluster_names;
    nominated.push_back(name);
    std::sort(nominated.begin(), nominated.end());
    d->update.nominated_cluster_names = std::move(nominated);
    d->requeue_after = kSyncDeferredRequeueAfter;
    return;
  }
  if (in.state.cluster_name.empty()) {
    d->update.cluster_name = name;
    if (!in.state.nominated_cluster_names.empty()) {
      d->update.nominated_cluster_names = std::vector<std::string>();
    }
  }

  // 4. Bind, where Kueue creates the Job: only once no other copy is left on
  //    a connected worker, so the workload cannot start twice.
  if (others_remain) {
    d->requeue_after = kSyncDeferredRequeueAfter;
    return;
  }
  if (!winner.copy->bound) {
    d->ops.push_back(RemoteOp{
        .worker = name, .kind = RemoteOpKind::kBind, .epoch = in.state.epoch});
    d->requeue_after = kSyncDeferredRequeueAfter;
    return;
  }

  // 5. The winner runs: the check is Ready. Kueue rewrites the state and
  //    repeats the event on every reconcile; kq writes and announces it
  //    once, so that a converged group decides nothing.
  const std::string message =
      absl::StrCat("The workload was admitted on ", Quote(name));
  if (acs.state == kCheckStateReady && acs.message == message) return;
  AdmissionCheckState next = acs;
  next.state = kCheckStateReady;
  next.message = message;
  next.last_transition_time = in.now;
  d->update.check = std::move(next);
  d->events.push_back(Event{.type = EventType::kNormal,
                            .message = TruncateEventMessage(message)});
  // 6. Count an admission only when the check turns Ready.
  if (acs.state != kCheckStateReady) {
    d->admitted.push_back(MetricIncrement{
        .cluster_queue = ClusterQueueOf(local), .cluster = name});
  }
}

}  // namespace

const char* RemoteOpKindName(RemoteOpKind kind) {
  switch (kind) {
    case RemoteOpKind::kUpsert:
      return "Upsert";
    case RemoteOpKind::kDelete:
      return "Delete";
    case RemoteOpKind::kBind:
      return "Bind";
    case RemoteOpKind::kDeactivate:
      return "Deactivate";
  }
  return "Unknown";
}

bool LocalUpdate::empty() const {
  return !check.has_value() && !nominated_cluster_names.has_value() &&
         !cluster_name.has_value() && !epoch.has_value() &&
         !round_start.has_value() && !finish.has_value();
}

std::string TruncateConditionMessage(std::string message) {
  return Truncate(std::move(message), kMaxConditionMessageSize);
}

std::string TruncateEventMessage(std::string message) {
  return Truncate(std::move(message), kMaxEventMessageSize);
}

GroupDecision ReconcileGroup(const GroupInput& in) {
  GroupDecision d;
  // Kueue's "missing workload": nothing known, nothing to do.
  if (in.local == nullptr) return d;
  const Workload& local = *in.local;

  // R0. No MultiKueue check, or a Rejected one: skip.
  const AdmissionCheckState* found = FindCheck(local, in.check_name);
  if (found == nullptr || found->state == kCheckStateRejected) return d;
  const AdmissionCheckState& acs = *found;

  // R0a. Only workloads with an owner can lack an adapter (see
  // GroupInput::owner_rejection); Kueue skips the managedBy check for a
  // deleted workload.
  if (!in.owner_rejection.empty() && !in.deleted) {
    UpdateCheck(acs, kCheckStateRejected, in.owner_rejection, in.now, &d);
    return d;
  }

  Group g(in, &d);
  g.Read();

  // R0b. Deleted locally: delete the copies on the connected workers; the
  // others are left to the garbage collector.
  if (in.deleted) {
    for (Remote& remote : g.remotes()) g.Remove(remote);
    return d;
  }

  // R1 (elastic workloads) has no kq counterpart.

  // R2. Finished, or no quota reservation: delete every copy, and come back
  //     for the workers out of reach.
  if (IsFinished(local) || !HoldsQuota(local)) {
    for (Remote& remote : g.remotes()) g.Remove(remote);
    if (!g.unavailable().empty()) {
      d.requeue_after = in.settings.worker_lost_timeout;
    }
    return d;
  }

  // R3. A copy finished.
  if (Remote* finished = g.BestMatchByCondition(kConditionFinished)) {
    const Condition& cond =
        *FindCondition(finished->copy->status.conditions, kConditionFinished);
    if (cond.reason == kFinishedReasonOutOfSync) {
      // A sync failure, not a completion: re-dispatch, never finish. Only
      // while Ready, so that a second run does not see Retry and finish.
      if (acs.state != kCheckStateReady) return d;
      UpdateCheck(acs, kCheckStateRetry,
                  absl::StrCat("Remote workload on worker cluster ",
                               Quote(finished->worker->name),
                               " is out of sync with its user job, resetting "
                               "for re-dispatch"),
                  in.now, &d);
      d.events.push_back(
          Event{.type = EventType::kWarning,
                .message = TruncateEventMessage(d.update.check->message)});
      return d;
    }
    d.update.finish = Finish{.reason = cond.reason, .message = cond.message};
    return d;
  }

  // R4. A copy was evicted.
  if (Remote* evicted = g.BestMatchByCondition(kConditionEvicted)) {
    // Evicted on the manager too: the eviction is the manager's own. Kueue
    // keeps syncing the Job's status here; kq has no Job to sync.
    if (IsEvicted(local)) return d;
    if (acs.state == kCheckStateReady) {
      // Kueue's own format (". Previously:", no truncation), naming the
      // recorded cluster.
      const std::string& cluster = in.state.cluster_name.empty()
                                       ? evicted->worker->name
                                       : in.state.cluster_name;
      AdmissionCheckState next = acs;
      next.message = absl::StrCat(
          "Workload evicted on worker cluster: ", Quote(cluster),
          ", resetting for re-admission. Previously: ", Quote(acs.state));
      next.state = kCheckStateRetry;
      next.last_transition_time = in.now;
      d.events.push_back(
          Event{.type = EventType::kNormal, .message = next.message});
      d.update.check = std::move(next);
      return d;
    }
  }

  // R5. Copies whose spec differs from the local one are deleted. Kueue
  // updates them instead for a priority change or an elastic scale-down;
  // kq re-creates them.
  for (Remote& remote : g.remotes()) {
    if (remote.copy != nullptr && !remote.copy->spec_matches) g.Remove(remote);
  }

  // R6. The admitting copy: Admitted=True, earliest. Once clusterName is
  // recorded only that cluster's copy can win (kq: a copy elsewhere is a
  // loser, where Kueue would fail on the immutable field).
  Remote* admitting = g.BestMatchByCondition(kConditionAdmitted);
  if (admitting != nullptr && !in.state.cluster_name.empty() &&
      admitting->worker->name != in.state.cluster_name) {
    admitting = nullptr;
    for (Remote& remote : g.remotes()) {
      if (remote.worker->name == in.state.cluster_name &&
          remote.copy != nullptr &&
          IsConditionTrue(remote.copy->status.conditions, kConditionAdmitted)) {
        admitting = &remote;
      }
    }
  }

  // R6a. No admitted copy while the workload is committed to a cluster:
  // Kueue's Ready check, and kq's Pending check with clusterName recorded
  // (between recording the winner and its bind).
  const bool committed =
      acs.state == kCheckStateReady ||
      (acs.state == kCheckStatePending && !in.state.cluster_name.empty());
  if (admitting == nullptr && committed) {
    const std::string& cluster = in.state.cluster_name;
    if (!cluster.empty() && g.IsUnavailable(cluster)) {
      // Unreachable: probably still running. Wait out workerLostTimeout
      // from the first drop.
      const WorkerView* worker = g.FindWorker(cluster);
      const absl::Time lost_since =
          worker != nullptr && worker->lost_since.has_value()
              ? *worker->lost_since
              : in.now;
      const absl::Duration remaining =
          in.settings.worker_lost_timeout - (in.now - lost_since);
      if (remaining > absl::ZeroDuration()) {
        d.requeue_after = remaining;
        return d;
      }
      UpdateCheck(acs, kCheckStateRetry, "Admitting remote lost", in.now, &d);
      return d;
    }
    if (cluster.empty()) {
      UpdateCheck(acs, kCheckStateRetry,
                  "Admission check is Ready but no admitting cluster is "
                  "recorded; this is unexpected, please report it",
                  in.now, &d);
      return d;
    }
    UpdateCheck(acs, kCheckStateRetry, "Admitting remote no longer exists",
                in.now, &d);
    return d;
  }

  // R6b. Converge on the admitted copy.
  if (admitting != nullptr) {
    Converge(g, *admitting, acs, &d);
    return d;
  }

  // R7 (orchestrated preemption, the alpha gate
  // MultiKueueOrchestratedPreemption, off by default) is not modelled.

  // R8. Nominate and dispatch, unless the check is not Pending or a cluster
  // is recorded (Kueue's ShouldSkipClusterNomination).
  if (acs.state != kCheckStatePending || !in.state.cluster_name.empty()) {
    return d;
  }
  Synchronize(g, &d);
  return d;
}

GroupDecision NominateAndSynchronizeWorkers(const GroupInput& in) {
  GroupDecision d;
  if (in.local == nullptr) return d;
  Group g(in, &d);
  g.Read();
  Synchronize(g, &d);
  return d;
}

}  // namespace kq::federation
