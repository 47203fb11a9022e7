// Admission checks on a workload (Kueue's pkg/workload/admissionchecks.go
// and the workload controller's check-based eviction and deactivation).

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/admission/internal.h"
#include "server/admission/state.h"
#include "server/core/validation.h"

namespace kq::admission {

namespace {

// Kueue's buildAdmissionChecksMessage: the checks in `state`, sorted by
// name, quoted, each with its message when it has one.
std::string AdmissionChecksMessage(const Workload& wl,
                                   const std::string& state) {
  std::vector<const AdmissionCheckState*> checks;
  for (const AdmissionCheckState& c : wl.admission_checks) {
    if (c.state == state) checks.push_back(&c);
  }
  std::sort(checks.begin(), checks.end(),
            [](const AdmissionCheckState* a, const AdmissionCheckState* b) {
              return a->name < b->name;
            });
  std::vector<std::string> parts;
  for (const AdmissionCheckState* c : checks) {
    parts.push_back(c->message.empty()
                        ? absl::StrCat("\"", c->name, "\"")
                        : absl::StrCat("\"", c->name, "\" (", c->message, ")"));
  }
  return absl::StrCat(checks.size() > 1 ? "AdmissionChecks" : "AdmissionCheck",
                      " in ", state, " state: ", absl::StrJoin(parts, "; "));
}

}  // namespace

void AdmissionState::SyncAdmitted(Workload& wl, absl::Time now) {
  if (!HoldsQuota(wl)) return;
  bool all_ready = true;
  for (const AdmissionCheckState& s : wl.admission_checks) {
    all_ready = all_ready && s.state == kCheckStateReady;
  }
  const bool was_admitted = IsConditionTrue(wl.conditions, kConditionAdmitted);
  const Condition* admitted = FindCondition(wl.conditions, kConditionAdmitted);
  // A False condition from before the reservation (NoReservation) still
  // needs the reason that names the checks.
  if (admitted != nullptr && was_admitted == all_ready &&
      admitted->reason ==
          (all_ready ? kReasonAdmitted : kReasonUnsatisfiedAdmissionChecks)) {
    return;
  }
  if (all_ready) {
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, kConditionTrue, kReasonAdmitted,
                           "The workload is admitted", now});
  } else {
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, kConditionFalse,
                           kReasonUnsatisfiedAdmissionChecks,
                           "The workload has not all checks ready", now});
  }
  MarkWorkload(KeyOf(wl), Change::kModified);
  cache::ClusterQueueSnapshot* snapshot =
      cache_.FindClusterQueue(wl.admission->cluster_queue);
  if (snapshot == nullptr || was_admitted == all_ready) return;
  AdjustAdmittedUsage(*snapshot, cache::UsageOf(wl), all_ready);
}

bool WaitsForCheckBackoff(const Workload& wl) {
  const Condition* requeued = FindCondition(wl.conditions, kConditionRequeued);
  return requeued != nullptr && requeued->status == kConditionFalse &&
         requeued->reason == kReasonAdmissionCheck;
}

absl::StatusOr<Workload> AdmissionState::SetAdmissionCheckState(
    const NamespacedName& key, const std::string& check,
    const std::string& state, const std::string& message,
    std::optional<int32_t> requeue_after_seconds, absl::Time now,
    const std::vector<PodSetUpdate>& pod_set_updates,
    const Workload* with_templates) {
  if (state != kCheckStatePending && state != kCheckStateReady &&
      state != kCheckStateRetry && state != kCheckStateRejected) {
    return absl::InvalidArgumentError(
        absl::StrCat("admission check state \"", state,
                     "\" is not one of Pending, Ready, Retry, Rejected"));
  }
  if (requeue_after_seconds.has_value() && *requeue_after_seconds < 0) {
    return absl::InvalidArgumentError(
        "requeue_after_seconds: must not be negative");
  }
  Workload* found = workloads_.FindMutable(key);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = *found;
  AdmissionCheckState* target = nullptr;
  size_t index = 0;
  for (size_t i = 0; i < wl.admission_checks.size(); ++i) {
    if (wl.admission_checks[i].name == check) {
      target = &wl.admission_checks[i];
      index = i;
    }
  }
  if (target == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key),
                                            " has no admission check \"", check,
                                            "\" in status.admissionChecks"));
  }
  absl::Status valid = ValidatePodSetUpdates(wl, index, pod_set_updates);
  // Kueue's validateImmutablePodSetUpdates: what a Ready check told the
  // job to run with stays as it was while the check stays Ready.
  if (valid.ok() && target->state == kCheckStateReady &&
      state == kCheckStateReady && target->pod_set_updates != pod_set_updates) {
    valid = absl::InvalidArgumentError(absl::StrCat(
        "status.admissionChecks[", index,
        "].podSetUpdates: Invalid value: field is immutable while the check "
        "stays Ready"));
  }
  if (valid.ok()) {
    valid = CheckPodSetUpdateConflicts(
        with_templates != nullptr ? *with_templates : wl, index,
        pod_set_updates, flavors_);
  }
  if (!valid.ok()) return About(Describe(key), valid);
  // Kueue's SetAdmissionCheckState: the transition time moves only with
  // the state; the message and podSetUpdates are replaced.
  if (target->state != state) target->last_transition_time = now;
  target->state = state;
  target->message = message;
  target->pod_set_updates = pod_set_updates;
  MarkWorkload(key, Change::kModified);

  if (state == kCheckStateRejected) {
    // Kueue's reconcileCheckBasedEviction sets the DeactivationTarget; the
    // job is then deactivated and evicted with the check as the cause.
    const std::string why = AdmissionChecksMessage(wl, kCheckStateRejected);
    wl.active = false;
    queues_.Remove(key);
    last_assignments_.erase(key);
    SetRequeueAt(wl, std::nullopt);
    if (!IsEvicting(wl)) {
      Evict(wl, kReasonDeactivatedDueToAdmissionCheck,
            absl::StrCat("The workload is deactivated due to ", why), now);
      StopOrRelease(wl, now);
    }
    return wl;
  }
  if (state == kCheckStateRetry) {
    if (IsConditionTrue(wl.conditions, kConditionEvicted)) return wl;
    // Kueue's NeedsRequeueAtUpdate: the check's own retry time.
    if (requeue_after_seconds.has_value()) {
      SetRequeueAt(wl, target->last_transition_time +
                           absl::Seconds(*requeue_after_seconds));
    } else {
      SetRequeueAt(wl, std::nullopt);
    }
    Evict(wl, kReasonAdmissionCheck,
          absl::StrCat("Evicted due to ",
                       AdmissionChecksMessage(wl, kCheckStateRetry)),
          now);
    // RunPasses requeues it once the quota is released and the backoff is
    // over.
    StopOrRelease(wl, now);
    return wl;
  }
  SyncAdmitted(wl, now);
  return wl;
}

void AdmissionState::RequeueBackedOff(absl::Time now) {
  IndexTimedWorkloads();
  const std::vector<NamespacedName> timed(timed_workloads_.begin(),
                                          timed_workloads_.end());
  for (const NamespacedName& key : timed) {
    Workload& wl = workloads_.At(key);
    if (!wl.active || HoldsQuota(wl) || !WaitsForCheckBackoff(wl)) continue;
    if (std::optional<absl::Time> at = RequeueAt(wl); at && *at > now) continue;
    SetRequeueAt(wl, std::nullopt);
    SetCondition(
        &wl.conditions,
        Condition{kConditionRequeued, kConditionTrue, kReasonBackoffFinished,
                  "The workload backoff was finished", now});
    MarkWorkload(key, Change::kModified);
    EnqueueOrBlock(wl, now);
  }
}

}  // namespace kq::admission
