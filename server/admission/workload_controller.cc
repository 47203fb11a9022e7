// Kueue's workload controller and pkg/workload/evict: eviction and its
// completion, stop policies, deactivation, operator preemption and finish.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#include "server/admission/internal.h"
#include "server/admission/state.h"
#include "server/core/conditions.h"
#include "server/scheduler/scheduler.h"

namespace kq::admission {

// Kueue's stop policies (workload_controller.go, reconcileOn*ActiveState;
// KUEUE.md 7.5): under Hold and HoldAndDrain a reservation that is not yet
// admitted is removed; under HoldAndDrain an admitted workload is evicted
// (ClusterQueueStopped / LocalQueueStopped) with Requeued=False; when the
// queue runs again, workloads it stopped get Requeued=True
// (ClusterQueueRestarted / LocalQueueRestarted). A reservation not yet
// admitted is also removed when its LocalQueue or ClusterQueue is gone
// (Misconfigured, "... is terminating or missing").
void AdmissionState::ApplyStopPolicies(absl::Time now) {
  bool any_stopped = false;
  for (const auto& [name, lq] : local_queues_) {
    any_stopped = any_stopped || lq.stop_policy != StopPolicy::kNone;
  }
  for (const auto& [name, cq] : cluster_queues_) {
    any_stopped = any_stopped || cq.stop_policy != StopPolicy::kNone;
  }
  // Nothing below adds or removes workloads.
  for (const Workload& held : workloads_) {
    Workload& wl = Mutable(held);
    // Only a workload stopped before, one holding quota while some queue is
    // stopped, or a reservation not admitted yet (few: they wait for their
    // admission checks), whose queues may be gone, has anything to change.
    const Condition* stopped = FindCondition(wl.conditions, kConditionRequeued);
    // (Kueue's reconcile syncs Admitted first: a reservation whose checks
    // are all Ready is admitted, and stays so.)
    const bool reserved_only =
        HoldsQuota(wl) && !IsConditionTrue(wl.conditions, kConditionAdmitted) &&
        std::any_of(wl.admission_checks.begin(), wl.admission_checks.end(),
                    [](const AdmissionCheckState& check) {
                      return check.state != kCheckStateReady;
                    });
    if (!(stopped != nullptr && stopped->status == kConditionFalse) &&
        !(any_stopped && HoldsQuota(wl)) && !reserved_only) {
      continue;
    }
    const NamespacedName key = KeyOf(wl);
    auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
    StopPolicy lq_policy =
        lq == local_queues_.end() ? StopPolicy::kNone : lq->second.stop_policy;
    std::string cq_name = ClusterQueueForWorkload(wl);
    auto cq = cluster_queues_.find(cq_name);
    StopPolicy cq_policy = cq == cluster_queues_.end() ? StopPolicy::kNone
                                                       : cq->second.stop_policy;

    const Condition* requeued =
        FindCondition(wl.conditions, kConditionRequeued);
    if (requeued != nullptr && requeued->status == kConditionFalse) {
      if (requeued->reason == kReasonLocalQueueStopped &&
          lq != local_queues_.end() && lq_policy == StopPolicy::kNone) {
        SetCondition(&wl.conditions,
                     Condition{kConditionRequeued, kConditionTrue,
                               kReasonLocalQueueRestarted,
                               "The LocalQueue was restarted after being "
                               "stopped",
                               now});
        MarkWorkload(key, Change::kModified);
      } else if (requeued->reason == kReasonClusterQueueStopped &&
                 cq != cluster_queues_.end() &&
                 cq_policy == StopPolicy::kNone) {
        SetCondition(&wl.conditions,
                     Condition{kConditionRequeued, kConditionTrue,
                               kReasonClusterQueueRestarted,
                               "The ClusterQueue was restarted after being "
                               "stopped",
                               now});
        MarkWorkload(key, Change::kModified);
      }
    }
    if (!HoldsQuota(wl) || IsEvicting(wl)) continue;
    bool admitted = IsConditionTrue(wl.conditions, kConditionAdmitted);
    if (admitted) {
      if (lq_policy == StopPolicy::kHoldAndDrain) {
        Evict(wl, kReasonLocalQueueStopped, "The LocalQueue is stopped", now);
        StopOrRelease(wl, now);
      } else if (cq_policy == StopPolicy::kHoldAndDrain) {
        Evict(wl, kReasonClusterQueueStopped, "The ClusterQueue is stopped",
              now);
        StopOrRelease(wl, now);
      }
    } else if (reserved_only && lq == local_queues_.end()) {
      ReleaseQuota(wl);
      UnsetQuotaReservation(wl, kReasonMisconfigured,
                            absl::StrCat("LocalQueue ", wl.queue_name.str(),
                                         " is terminating or missing"),
                            now);
    } else if (lq_policy != StopPolicy::kNone) {
      ReleaseQuota(wl);
      UnsetQuotaReservation(
          wl, kReasonSuspended,
          absl::StrCat("LocalQueue ", wl.queue_name.str(), " is stopped"), now);
    } else if (reserved_only && cq == cluster_queues_.end()) {
      ReleaseQuota(wl);
      UnsetQuotaReservation(
          wl, kReasonMisconfigured,
          absl::StrCat("ClusterQueue ", cq_name, " is terminating or missing"),
          now);
    } else if (cq_policy != StopPolicy::kNone) {
      ReleaseQuota(wl);
      UnsetQuotaReservation(
          wl, kReasonSuspended,
          absl::StrCat("ClusterQueue ", cq_name, " is stopped"), now);
    }
  }
}

void AdmissionState::Evict(Workload& wl, const std::string& reason,
                           const std::string& message, absl::Time now) {
  // Kueue's prepareForEviction.
  SetCondition(&wl.conditions, Condition{kConditionEvicted, kConditionTrue,
                                         reason, message, now});
  // An evicting workload is no longer a preemption candidate, although its
  // quota stays held until it stops.
  if (wl.admission.has_value()) {
    if (cache::ClusterQueueSnapshot* cq =
            cache_.FindClusterQueue(wl.admission->cluster_queue)) {
      cq->MarkTreeChanged();
    }
  }
  // resetClusterNomination: the next dispatch starts over (the epoch
  // stays, and the next dispatch raises it).
  if (wl.multikueue.has_value()) {
    wl.multikueue->nominated_cluster_names.clear();
    wl.multikueue->cluster_name.clear();
    wl.multikueue->round_start.reset();
  }
  // resetChecksOnEviction: a check not Pending starts over, without the
  // podSetUpdates it reported (a Pending one is left as it is).
  for (AdmissionCheckState& check : wl.admission_checks) {
    if (check.state == kCheckStatePending) continue;
    check = AdmissionCheckState{
        .name = check.name,
        .state = kCheckStatePending,
        .last_transition_time = now,
        .message = absl::StrCat("Reset to Pending after eviction. Previously: ",
                                check.state),
        .pod_set_updates = {}};
  }
  MarkWorkload(KeyOf(wl), Change::kModified);
}

void AdmissionState::StopOrRelease(Workload& wl, absl::Time now) {
  if (wl.runner.has_value() && wl.runner->lease_expire_time > now) {
    // The runner is told through Heartbeat, Admit and Watch; the quota
    // stays reserved until it confirms, its lease lapses or the grace
    // period ends, so two workloads never hold the same quota.
    wl.stop_deadline = now + eviction_grace_;
    MarkWorkload(KeyOf(wl), Change::kModified);
    return;
  }
  ReleaseEvicted(wl, now);
}

void AdmissionState::ReleaseEvicted(Workload& wl, absl::Time now) {
  wl.stop_deadline.reset();
  wl.runner.reset();
  CompleteEviction(wl, now);
  const NamespacedName key = KeyOf(wl);
  last_assignments_.erase(key);
  // Requeued=True (preemption): back to its queue as a pending workload.
  if (wl.active && IsConditionTrue(wl.conditions, kConditionRequeued)) {
    EnqueueOrBlock(wl, now);
  } else {
    // The workload controller reconciles it where it waits: Deactivated,
    // Suspended for a stopped queue, or the eviction's PendingEvaluation.
    SyncUnreservedConditions(wl, now);
  }
  // A preemptor waiting for this quota tries again.
  needs_scheduling_ = true;
}

void AdmissionState::ReleaseOverdueEvictions(absl::Time now) {
  IndexTimedWorkloads();
  const std::vector<NamespacedName> timed(timed_workloads_.begin(),
                                          timed_workloads_.end());
  for (const NamespacedName& key : timed) {
    Workload& wl = workloads_.At(key);
    if (FenceLapsedCopy(wl, now)) continue;
    if (!wl.stop_deadline.has_value()) continue;
    const bool lease_lapsed =
        !wl.runner.has_value() || wl.runner->lease_expire_time <= now;
    if (*wl.stop_deadline <= now || lease_lapsed) ReleaseEvicted(wl, now);
  }
}

void AdmissionState::CompleteEviction(Workload& wl, absl::Time now) {
  const Condition* evicted = FindCondition(wl.conditions, kConditionEvicted);
  std::string reason = evicted != nullptr ? evicted->reason : "";
  std::string message = evicted != nullptr ? evicted->message : "";
  // Kueue's job reconciler once the job stopped: requeued at once only
  // after preemption or node failures.
  bool requeue = reason == kReasonPreempted || reason == kReasonNodeFailures;
  SetCondition(
      &wl.conditions,
      Condition{kConditionRequeued, requeue ? kConditionTrue : kConditionFalse,
                reason, message, now});
  ReleaseQuota(wl);
  UnsetQuotaReservation(wl, kReasonPendingEvaluation, message, now);
}

void AdmissionState::UnsetQuotaReservation(Workload& wl,
                                           const std::string& reason,
                                           const std::string& message,
                                           absl::Time now) {
  // Kueue's UnsetQuotaReservationWithCondition + SyncAdmittedCondition.
  SetCondition(&wl.conditions,
               Condition{kConditionQuotaReserved, kConditionFalse, reason,
                         message, now});
  wl.admission.reset();
  // kq federation (federation.md 5.3): a MultiKueue manager's workload that
  // loses its reservation fences the copies made for it, as Kueue's R2
  // deletes them. The controller may never see the workload without a
  // reservation (requeued and reserved again in the same batch), and a
  // copy still evicting on its worker would otherwise win the next
  // dispatch.
  if (wl.multikueue.has_value() && wl.multikueue->epoch > 0) {
    ++wl.multikueue->epoch;
  }
  // With UnadmittedWorkloadsObservability, Admitted=False NoReservation
  // follows any QuotaReserved condition, admitted before or not.
  SetCondition(&wl.conditions,
               Condition{kConditionAdmitted, kConditionFalse,
                         kReasonNoReservation, kMessageNoReservation, now});
  MarkWorkload(KeyOf(wl), Change::kModified);
}

bool IsSchedulerSetReason(const std::string& reason) {
  return reason == kReasonWaitingForQuota ||
         reason == kReasonNoMatchingFlavor ||
         reason == kReasonExceedsMaxQuota ||
         reason == kReasonTopologyPlacementFailed ||
         reason == kReasonWaitingForPreemptedWorkloads ||
         reason == kReasonWaitingForPodsReady ||
         reason == kReasonPendingEvaluation;
}

std::optional<std::pair<std::string, std::string>> AdmissionState::QueueBlocker(
    const Workload& wl) const {
  // Kueue's getQueueBlocker, in its order.
  auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
  if (lq == local_queues_.end()) {
    return std::make_pair(
        std::string(kReasonMisconfigured),
        absl::StrCat("LocalQueue ", wl.queue_name.str(), " doesn't exist"));
  }
  if (lq->second.stop_policy != StopPolicy::kNone) {
    return std::make_pair(
        std::string(kReasonSuspended),
        absl::StrCat("LocalQueue ", wl.queue_name.str(), " is inactive"));
  }
  const std::string& cq_name = lq->second.cluster_queue;
  const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(cq_name);
  if (cq == nullptr) {
    return std::make_pair(
        std::string(kReasonMisconfigured),
        absl::StrCat("ClusterQueue ", cq_name, " doesn't exist"));
  }
  // A stopped ClusterQueue is inactive too (its Active reason is Stopped).
  if (!cq->active) {
    return std::make_pair(
        std::string(kReasonSuspended),
        absl::StrCat("ClusterQueue ", cq_name, " is inactive"));
  }
  // Kueue's ValidateAdmissibility: the namespace must match the
  // ClusterQueue's namespaceSelector (none selects no namespace, an empty one
  // every namespace, without reading its labels).
  const std::optional<LabelSelector>& selector = cq->spec.namespace_selector;
  if (!selector.has_value() ||
      (!(selector->match_labels.empty() &&
         selector->match_expressions.empty()) &&
       !SelectorMatches(*selector, scheduler::NamespaceLabels(
                                       namespaces_, wl.meta.namespace_name)))) {
    return std::make_pair(
        std::string(kReasonMisconfigured),
        std::string("workload namespace doesn't match ClusterQueue selector"));
  }
  return std::nullopt;
}

void AdmissionState::SyncUnreservedConditions(Workload& wl, absl::Time now) {
  // Kueue's Reconcile syncs these only while the workload is neither
  // admitted nor holding quota.
  if (IsConditionTrue(wl.conditions, kConditionAdmitted) ||
      IsConditionTrue(wl.conditions, kConditionQuotaReserved)) {
    return;
  }
  const Condition* current =
      FindCondition(wl.conditions, kConditionQuotaReserved);
  // resolveGranularUnadmittedQuotaReservedCondition, in its order.
  std::optional<std::pair<std::string, std::string>> want;
  if (!wl.active) {
    want.emplace(kReasonDeactivated, kMessageDeactivated);
  } else if (auto blocker = QueueBlocker(wl)) {
    want = std::move(blocker);
  } else if (current != nullptr && IsSchedulerSetReason(current->reason)) {
    // The scheduler's feedback stays until its next cycle.
    want.emplace(current->reason, current->message);
  } else if (current != nullptr) {
    // A blocker that went away (Deactivated, Suspended, Misconfigured).
    want.emplace(kReasonPendingEvaluation, kMessagePendingEvaluation);
  }
  // With UnadmittedWorkloadsExplicitStatus off (Kueue's default), a workload
  // with neither condition gets none until the scheduler evaluates it.
  if (!want.has_value() &&
      FindCondition(wl.conditions, kConditionAdmitted) == nullptr) {
    return;
  }
  if (!want.has_value()) {
    // SyncAdmittedCondition alone (an Admitted condition without
    // QuotaReserved).
    const Condition* admitted =
        FindCondition(wl.conditions, kConditionAdmitted);
    if (admitted->status == kConditionFalse &&
        admitted->reason == kReasonNoReservation &&
        admitted->message == kMessageNoReservation) {
      return;
    }
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, kConditionFalse,
                           kReasonNoReservation, kMessageNoReservation, now});
    MarkWorkload(KeyOf(wl), Change::kModified);
    return;
  }
  SetPendingCondition(wl, want->first, want->second, now);
}

Workload AdmissionState::TakeWorkload(const NamespacedName& key) {
  const Workload* held = workloads_.Find(key);
  if (HoldsQuota(*held)) {
    // The holders point at the table's element, which goes away now.
    holders_.Remove(held, held->admission->cluster_queue);
  }
  // The queue reads a queued workload's name from it: out of the queue
  // before the workload moves.
  queues_.Remove(key);
  Workload wl = workloads_.Take(key);
  last_assignments_.erase(key);
  ReleaseQuota(wl);
  wl.runner.reset();
  wl.stop_deadline.reset();
  return wl;
}

absl::StatusOr<Workload> AdmissionState::FinishWorkload(
    const NamespacedName& key, const std::string& reason,
    const std::string& message, absl::Time now) {
  if (workloads_.Find(key) == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload wl = TakeWorkload(key);
  SetCondition(&wl.conditions, Condition{kConditionFinished, kConditionTrue,
                                         reason, message, now});
  change_log_.MarkFinished(key, wl);
  marked_since_index_.push_back(key);
  return wl;
}

absl::StatusOr<Workload> AdmissionState::Preempt(const NamespacedName& key,
                                                 const std::string& message,
                                                 const std::string& actor,
                                                 bool deactivate,
                                                 absl::Time now) {
  Workload* found = workloads_.FindMutable(key);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = *found;
  const std::string who = actor.empty() ? "operator" : actor;
  const std::string why = message.empty() ? "" : absl::StrCat(": ", message);
  if (deactivate) {
    if (!wl.active) {
      return absl::FailedPreconditionError(
          absl::StrCat(Describe(key), " is already deactivated"));
    }
    Deactivate(wl, absl::StrCat("The workload is deactivated by ", who, why),
               now);
    return wl;
  }
  if (!HoldsQuota(wl)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " holds no quota to preempt"));
  }
  if (IsEvicting(wl)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " is already being evicted"));
  }
  // Requeued at once, as after any preemption.
  Evict(wl, kReasonPreempted, absl::StrCat("Preempted by ", who, why), now);
  StopOrRelease(wl, now);
  return wl;
}

absl::StatusOr<Workload> AdmissionState::SetActive(const NamespacedName& key,
                                                   bool active,
                                                   absl::Time now) {
  Workload* found = workloads_.FindMutable(key);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = *found;
  if (wl.active == active) return wl;
  if (!active) {
    Deactivate(wl, "The workload is deactivated", now);
    return wl;
  }
  // Kueue's reactivation: Requeued=True (Reactivated), queued again once
  // its quota, if still held while stopping, is released.
  wl.active = true;
  SetCondition(&wl.conditions,
               Condition{kConditionRequeued, kConditionTrue, kReasonReactivated,
                         "The workload was reactivated", now});
  MarkWorkload(key, Change::kModified);
  if (!HoldsQuota(wl)) {
    EnqueueOrBlock(wl, now);
    needs_scheduling_ = true;
  }
  return wl;
}

void AdmissionState::Deactivate(Workload& wl, const std::string& message,
                                absl::Time now) {
  const NamespacedName key = KeyOf(wl);
  wl.active = false;
  wl.requeue_state.reset();
  queues_.Remove(key);
  last_assignments_.erase(key);
  MarkWorkload(key, Change::kModified);
  if (IsEvicting(wl)) return;
  Evict(wl, kReasonDeactivated, message, now);
  if (HoldsQuota(wl)) {
    StopOrRelease(wl, now);
  } else {
    SetCondition(&wl.conditions, Condition{kConditionRequeued, kConditionFalse,
                                           kReasonDeactivated, message, now});
    // QuotaReserved=False Deactivated (Kueue's workload controller).
    SyncUnreservedConditions(wl, now);
  }
}

}  // namespace kq::admission
