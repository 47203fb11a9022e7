// Kueue's scheduler: the scheduling passes, quota reservation, and
// preemption of the victims a pass chose (scheduler.go's schedule, admit and
// issuePreemptions).

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/admission/internal.h"
#include "server/admission/state.h"
#include "server/cache/fair_sharing.h"
#include "server/preemption/classical.h"
#include "server/preemption/oracle.h"
#include "server/scheduler/scheduler.h"

namespace kq::admission {

namespace {

// Kueue's resetActiveCondition: a True condition becomes False with the
// reason and "Previously: <message>".
void ResetActiveCondition(Workload& wl, const std::string& type,
                          const std::string& reason, absl::Time now) {
  const Condition* prev = FindCondition(wl.conditions, type);
  if (prev == nullptr || prev->status != kConditionTrue) return;
  SetCondition(&wl.conditions,
               Condition{type, kConditionFalse, reason,
                         absl::StrCat("Previously: ", prev->message), now});
}

// Kueue's buildCQPath: "/root/.../parent/cq", or "UNKNOWN" when the
// ClusterQueue is gone.
std::string ClusterQueuePath(const cache::Cache& cache,
                             const std::string& name) {
  const cache::ClusterQueueSnapshot* cq = cache.FindClusterQueue(name);
  if (cq == nullptr) return "UNKNOWN";
  std::vector<std::string> parts{name};
  // A cohort cycle has no root; stop once a cohort repeats.
  std::set<const cache::CohortSnapshot*> seen;
  for (const cache::CohortSnapshot* c = cq->parent;
       c != nullptr && seen.insert(c).second; c = c->parent) {
    parts.push_back(c->name);
  }
  std::reverse(parts.begin(), parts.end());
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

// Kueue's HumanReadablePreemptionReasons.
std::string HumanReadablePreemptionReason(const std::string& reason) {
  if (reason == preemption::kReasonInClusterQueue) {
    return "prioritization in the ClusterQueue";
  }
  if (reason == preemption::kReasonInCohortReclamation) {
    return "reclamation within the cohort";
  }
  if (reason == preemption::kReasonInCohortFairSharing) {
    return "Fair Sharing within the cohort";
  }
  if (reason == preemption::kReasonInCohortReclaimWhileBorrowing) {
    return "reclamation within the cohort while borrowing";
  }
  return "UNKNOWN";
}

// Kueue's preemptionMessage: the Evicted and Preempted conditions' message
// on a victim.
std::string PreemptionMessage(const Workload& preemptor,
                              const std::string& reason,
                              const std::string& preemptor_path,
                              const std::string& preemptee_path) {
  auto job_uid = preemptor.meta.labels.find("kueue.x-k8s.io/job-uid");
  return absl::StrCat(
      "Preempted to accommodate a workload (UID: ",
      preemptor.meta.uid.empty() ? "UNKNOWN" : preemptor.meta.uid.str(),
      ", JobUID: ",
      job_uid == preemptor.meta.labels.end() || job_uid->second.empty()
          ? "UNKNOWN"
          : job_uid->second,
      ") due to ", HumanReadablePreemptionReason(reason),
      "; preemptor path: ", preemptor_path,
      "; preemptee path: ", preemptee_path);
}

}  // namespace

void AdjustAdmittedUsage(cache::ClusterQueueSnapshot& cq,
                         const cache::FlavorResourceQuantities& usage,
                         bool add) {
  for (const auto& [fr, v] : usage) {
    cq.admitted_usage[fr] = add ? SaturatingAdd(cq.admitted_usage[fr], v)
                                : SaturatingSub(cq.admitted_usage[fr], v);
  }
}

std::string AdmissionState::ClusterQueueForWorkload(const Workload& wl) const {
  if (wl.admission) return wl.admission->cluster_queue;
  auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
  return lq == local_queues_.end() ? "" : lq->second.cluster_queue;
}

void AdmissionState::EnqueueOrBlock(Workload& wl, absl::Time now) {
  NamespacedName key = KeyOf(wl);
  queues_.Remove(key);
  // Kueue's queue manager (AddOrUpdateWorkload): an active workload whose
  // LocalQueue and ClusterQueue exist joins the ClusterQueue's heap, even
  // while the queue is stopped or inactive (it waits there).
  auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
  if (wl.active && lq != local_queues_.end() &&
      lq->second.stop_policy == StopPolicy::kNone) {
    const std::string& cq_name = lq->second.cluster_queue;
    if (cache_.FindClusterQueue(cq_name) != nullptr) {
      // A workload evicted with Requeued=False waits (Kueue keeps it
      // inadmissible until the condition turns True).
      const Condition* requeued =
          FindCondition(wl.conditions, kConditionRequeued);
      if (requeued == nullptr || requeued->status != kConditionFalse) {
        queues_.Push(cq_name, queue::KeyFor(wl));
      }
    }
  }
  // Kueue's workload controller then reconciles the workload's conditions.
  SyncUnreservedConditions(wl, now);
}

int AdmissionState::RunPasses(absl::Time now, const PassLimits& limits) {
  needs_scheduling_ = false;
  // 0. Workloads whose admission check backoff is over join their queues.
  ReleaseOverdueEvictions(now);
  RequeueBackedOff(now);
  int passes = 0;
  scheduler::SchedulingContext context{&flavors_, &namespaces_};
  context.cluster_queue_generations = &cluster_queue_generations_;
  context.fair_sharing = configuration_.fair_sharing.has_value();
  context.resources = &configuration_.resources;
  // Nominations stay valid while their cohort tree is unchanged, across
  // passes and calls (see NominationMemo).
  context.nomination_memo = &nominations_;
  while (true) {
    auto popped = queues_.PopHeads([this](const std::string& name) {
      const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(name);
      return cq != nullptr && cq->active;
    });
    if (popped.empty()) break;
    ++passes;
    context.scheduling_cycle = ++scheduling_cycle_;
    std::vector<scheduler::Head> heads;
    heads.reserve(popped.size());
    for (const queue::Manager::Head& head : popped) {
      auto bookmark = last_assignments_.find(head.workload);
      // Every queued key was made by KeyFor from the workload in place.
      const Workload* wl =
          head.object != nullptr ? head.object : &workloads_.At(head.workload);
      heads.push_back(
          {wl, head.cluster_queue,
           bookmark == last_assignments_.end() ? nullptr : &bookmark->second});
    }
    // One Kueue cycle over the heads, with classical preemption over the
    // workloads holding quota when the pass starts (Kueue's snapshot).
    preemption::Oracle oracle(cache_, holders_, now, {},
                              configuration_.fair_sharing, &preemption_memo_);
    context.oracle = &oracle;
    scheduler::CycleResult result =
        scheduler::Schedule(cache_, heads, context, now);
    context.oracle = nullptr;
    bool progress = false;
    int reserved = 0;
    for (scheduler::EntryResult& entry : result.entries) {
      Workload& wl = *const_cast<Workload*>(entry.workload);
      NamespacedName key = KeyOf(wl);
      if (entry.status == scheduler::EntryResult::Status::kAdmitted) {
        last_assignments_.erase(key);
        ReserveQuota(wl, std::move(entry.admission), now);
        progress = true;
        ++reserved;
        continue;
      }
      if (entry.status == scheduler::EntryResult::Status::kPreempting) {
        // Kueue's IssuePreemptions. A victim without a runner releases its
        // quota at once, for the preemptor's next pass; one whose runner
        // holds a lease keeps it until the runner stops (StopOrRelease),
        // and the preemptor waits for it.
        if (IssuePreemptions(wl, entry.cluster_queue, entry.victims, now)) {
          progress = true;
        }
      }
      // Only a bookmark with scans in progress changes the next assignment.
      const bool pending_flavors = entry.last_assignment.has_value() &&
                                   entry.last_assignment->PendingFlavors();
      if (pending_flavors) {
        last_assignments_[key] = *std::move(entry.last_assignment);
      } else if (!last_assignments_.empty()) {
        last_assignments_.erase(key);
      }
      // Kueue's requeueAndUpdate: UnsetQuotaReservationWithCondition with
      // the entry's reason (QuotaReserved=False, Admitted=False
      // NoReservation). The workload controller reconciles the workload
      // after that write: it keeps the scheduler's reasons and re-derives
      // the others (Suspended, Misconfigured) from the queues.
      // Where Kueue leaves the reason empty (a pod set whose other resources
      // got flavors fails on one the ClusterQueue does not cover), the API
      // server refuses the condition (its reason must not be empty), so the
      // write fails and the workload keeps the conditions it had.
      if (!entry.reason.empty()) {
        SetPendingCondition(wl, entry.reason, entry.message, now);
        if (!IsSchedulerSetReason(entry.reason)) {
          SyncUnreservedConditions(wl, now);
        }
      }
      queue::Manager::RequeueReason reason =
          queue::Manager::RequeueReason::kGeneric;
      if (entry.namespace_mismatch) {
        reason = queue::Manager::RequeueReason::kNamespaceMismatch;
      } else if (entry.status == scheduler::EntryResult::Status::kPreempting) {
        reason = queue::Manager::RequeueReason::kPendingPreemption;
      } else if (entry.no_preemption_candidates) {
        reason = queue::Manager::RequeueReason::kPreemptionNoCandidates;
      } else if (entry.status == scheduler::EntryResult::Status::kNoFit) {
        reason = queue::Manager::RequeueReason::kNoFit;
      } else if (entry.status == scheduler::EntryResult::Status::kSkipped) {
        reason = queue::Manager::RequeueReason::kFailedAfterNomination;
      }
      // Parking a head, or coming back to try further flavors, lets the
      // next pass do something new.
      progress |= queues_.Requeue(entry.cluster_queue, queue::KeyFor(wl),
                                  reason, pending_flavors);
      progress |= pending_flavors;
    }
    if (limits.after_pass) limits.after_pass(reserved);
    if (!progress) break;
    if (passes >= limits.max_passes || limits.out_of_time()) {
      // More passes may still change something.
      needs_scheduling_ = true;
      break;
    }
  }
  return passes;
}

bool AdmissionState::IssuePreemptions(
    const Workload& preemptor, const std::string& cluster_queue,
    const std::vector<scheduler::PreemptionTarget>& victims, absl::Time now) {
  const std::string preemptor_path = ClusterQueuePath(cache_, cluster_queue);
  bool evicted_any = false;
  for (const scheduler::PreemptionTarget& target : victims) {
    Workload* found = workloads_.FindMutable(KeyOf(*target.workload));
    // A victim released already (by an earlier entry of the same pass; the
    // scheduler does not let targets overlap) must not be released twice.
    if (found == nullptr || !HoldsQuota(*found)) continue;
    Workload& victim = *found;
    // Kueue's "preemption ongoing": a victim evicted earlier still stops.
    if (IsEvicting(victim)) continue;
    const std::string message =
        PreemptionMessage(preemptor, target.reason, preemptor_path,
                          ClusterQueuePath(cache_, target.cluster_queue));
    Evict(victim, kReasonPreempted, message, now);
    // Kueue's SetPreemptedCondition.
    SetCondition(&victim.conditions,
                 Condition{kConditionPreempted, kConditionTrue, target.reason,
                           message, now});
    StopOrRelease(victim, now);
    evicted_any = true;
  }
  return evicted_any;
}

void AdmissionState::ReserveQuota(Workload& wl, Admission admission,
                                  absl::Time now) {
  const std::string cq_name = admission.cluster_queue;
  std::set<std::string> assigned_flavors;
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    for (const auto& [resource, flavor] : psa.flavors) {
      assigned_flavors.insert(flavor);
    }
  }
  // The scheduling pass added what the assignment was granted; from now on
  // the workload holds UsageOf(wl), which its release removes. They differ
  // only when an assignment counted more pods than are left after reclaim.
  const cache::FlavorResourceQuantities granted = cache::UsageOf(admission);
  wl.admission = std::move(admission);
  const cache::FlavorResourceQuantities held = cache::UsageOf(wl);
  if (held != granted) {
    if (cache::ClusterQueueSnapshot* snapshot =
            cache_.FindClusterQueue(cq_name)) {
      snapshot->RemoveUsage(granted);
      snapshot->AddUsage(held);
    }
  }
  // Kueue's SetQuotaReservation.
  SetCondition(
      &wl.conditions,
      Condition{kConditionQuotaReserved, kConditionTrue, kReasonQuotaReserved,
                absl::StrCat("Quota reserved in ClusterQueue ", cq_name), now});
  holders_.Add(&wl);
  ++reservations_;
  ResetActiveCondition(wl, kConditionEvicted, kReasonQuotaReserved, now);
  ResetActiveCondition(wl, kConditionPreempted, kReasonQuotaReserved, now);
  // The checks that apply to the assigned flavors start Pending.
  const ClusterQueue& cq = cluster_queues_.at(cq_name);
  for (const AdmissionCheckStrategyRule& rule : cq.admission_checks) {
    bool applies = rule.on_flavors.empty();
    for (const std::string& f : rule.on_flavors) {
      applies = applies || assigned_flavors.count(f) > 0;
    }
    if (!applies) continue;
    bool present = false;
    for (const AdmissionCheckState& s : wl.admission_checks) {
      present = present || s.name == rule.name;
    }
    if (!present) {
      wl.admission_checks.push_back(
          AdmissionCheckState{.name = rule.name,
                              .state = kCheckStatePending,
                              .last_transition_time = now});
    }
  }
  SyncAdmitted(wl, now);
  MarkWorkload(KeyOf(wl), Change::kModified);
}

void AdmissionState::ReleaseQuota(const Workload& wl) {
  if (!HoldsQuota(wl)) return;
  holders_.Remove(&wl, wl.admission->cluster_queue);
  // Freed quota always needs a pass: a preemptor waiting for this victim
  // sits in the active heap, so requeueing parked workloads alone may not
  // ask for one.
  needs_scheduling_ = true;
  cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(wl.admission->cluster_queue);
  if (cq == nullptr) return;
  cache::FlavorResourceQuantities usage = cache::UsageOf(wl);
  cq->RemoveUsage(usage);
  // Kueue's AllocatableResourceGeneration: freed quota outdates bookmarks.
  ++cluster_queue_generations_[wl.admission->cluster_queue];
  if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
    AdjustAdmittedUsage(*cq, usage, /*add=*/false);
  }
  QueueInadmissibleInTree(wl.admission->cluster_queue);
}

void AdmissionState::QueueInadmissibleInTree(const std::string& cluster_queue) {
  // What QueueInadmissible moves depends on the tree's ClusterQueues (fixed
  // until a Rebuild, which clears requeued_trees_), on what is parked and on
  // the pop cycles: the last two move park_version().
  const cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(cluster_queue);
  if (cq != nullptr && cq->tree_generation_slot != nullptr) {
    auto [it, inserted] = requeued_trees_.try_emplace(cq->tree_generation_slot,
                                                      queues_.park_version());
    if (!inserted && it->second == queues_.park_version()) return;
    it->second = queues_.park_version();
  }
  if (queues_.QueueInadmissible(cache_.ClusterQueuesInTree(cluster_queue))) {
    needs_scheduling_ = true;
  }
}

}  // namespace kq::admission
