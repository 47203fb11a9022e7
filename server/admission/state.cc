#include "server/admission/state.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

#include "base/status_macros.h"
#include "server/cache/fair_sharing.h"
#include "server/common/check.h"
#include "server/core/validation.h"
#include "server/preemption/classical.h"
#include "server/preemption/oracle.h"
#include "server/scheduler/scheduler.h"

namespace kq::admission {
namespace {

constexpr char kReasonMisconfigured[] = "Misconfigured";
constexpr char kReasonSuspended[] = "Suspended";

// Equality of what a user applies: everything but server-set metadata.
bool SameSpec(ConfigObject a, ConfigObject b) {
  for (ConfigObject* o : {&a, &b}) {
    ObjectMeta& meta = MutableMetaOf(*o);
    meta.uid.clear();
    meta.revision = 0;
    meta.creation_timestamp = absl::UnixEpoch();
  }
  return a == b;
}

// Kueue's resetActiveCondition: a True condition becomes False with the
// reason and "Previously: <message>".
void ResetActiveCondition(Workload& wl, const std::string& type,
                          const std::string& reason, absl::Time now) {
  const Condition* prev = FindCondition(wl.conditions, type);
  if (prev == nullptr || prev->status != "True") return;
  SetCondition(&wl.conditions,
               Condition{type, "False", reason,
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

// Adds (or removes) a workload's usage to its ClusterQueue's admitted
// usage (status.flavorsUsage).
void AdjustAdmittedUsage(cache::ClusterQueueSnapshot& cq,
                         const cache::FlavorResourceQuantities& usage,
                         bool add) {
  for (const auto& [fr, v] : usage) {
    cq.admitted_usage[fr] = add ? SaturatingAdd(cq.admitted_usage[fr], v)
                                : SaturatingSub(cq.admitted_usage[fr], v);
  }
}

// Usage per flavor in the order of the queue's resource groups, with every
// covered resource listed (Kueue's flavorsReservation / flavorsUsage).
std::vector<FlavorUsage> UsageByFlavor(
    const std::vector<ResourceGroup>& groups,
    const cache::FlavorResourceQuantities& usage,
    const cache::ResourceNode* node, bool in_cohort) {
  std::vector<FlavorUsage> out;
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      FlavorUsage fu{flavor.name, {}};
      for (const std::string& resource : group.covered_resources) {
        cache::FlavorResource fr{flavor.name, resource};
        auto u = usage.find(fr);
        int64_t total = u == usage.end() ? 0 : u->second;
        int64_t borrowed = 0;
        if (in_cohort && node != nullptr) {
          auto q = node->quotas.find(fr);
          int64_t nominal = q == node->quotas.end() ? 0 : q->second.nominal;
          borrowed = std::max<int64_t>(0, SaturatingSub(total, nominal));
        }
        fu.resources.push_back(
            ResourceUsage{resource, QuantityFromAmount(resource, total),
                          QuantityFromAmount(resource, borrowed)});
      }
      out.push_back(std::move(fu));
    }
  }
  return out;
}

}  // namespace

void AdmissionState::SetConfiguration(Configuration configuration) {
  configuration_ = std::move(configuration);
  // Decisions depend on it: old bookmarks and parked workloads may be
  // stale.
  config_changed_ = true;
  needs_scheduling_ = true;
}

void AdmissionState::Clear() {
  objects_.clear();
  flavors_.clear();
  cluster_queues_.clear();
  cohorts_.clear();
  local_queues_.clear();
  priority_classes_.clear();
  admission_checks_.clear();
  provisioning_request_configs_.clear();
  namespaces_.clear();
  // Queued keys point at workloads: the queues go first.
  queues_ = queue::Manager();
  workloads_.clear();
  workload_index_.clear();
  nominations_.Clear();
  requeued_trees_.clear();
  last_assignments_.clear();
  timed_workloads_.clear();
  marked_since_index_.clear();
  holders_ = preemption::HoldingQuota();
  preemption_memo_.Clear();
  changes_ = Changes();
  pending_condition_before_.clear();
  config_changed_ = true;
  needs_scheduling_ = false;
}

void AdmissionState::LoadObject(ConfigObject object) {
  ObjectKey key = KeyOf(object);
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, ResourceFlavor>) {
          flavors_[key.name] = o;
        } else if constexpr (std::is_same_v<T, ClusterQueue>) {
          cluster_queues_[key.name] = o;
        } else if constexpr (std::is_same_v<T, Cohort>) {
          cohorts_[key.name] = o;
        } else if constexpr (std::is_same_v<T, LocalQueue>) {
          local_queues_[{key.namespace_name, key.name}] = o;
        } else if constexpr (std::is_same_v<T, WorkloadPriorityClass>) {
          priority_classes_[key.name] = o;
        } else if constexpr (std::is_same_v<T, AdmissionCheck>) {
          admission_checks_[key.name] = o;
        } else if constexpr (std::is_same_v<T, ProvisioningRequestConfig>) {
          provisioning_request_configs_[key.name] = o;
        } else {
          static_assert(std::is_same_v<T, Namespace>);
          namespaces_[key.name] = o;
        }
      },
      object);
  objects_[std::move(key)] = std::move(object);
  config_changed_ = true;
}

void AdmissionState::LoadWorkload(Workload workload) {
  const NamespacedName key = KeyOf(workload);
  PutWorkload(key, std::move(workload));
  config_changed_ = true;
}

size_t AdmissionState::WorkloadItHash::Hash(absl::string_view namespace_name,
                                            absl::string_view name) {
  return absl::Hash<std::pair<absl::string_view, absl::string_view>>()(
      {namespace_name, name});
}

AdmissionState::WorkloadIt AdmissionState::FindWorkloadIt(
    const NamespacedName& key) {
  auto it = workload_index_.find(key);
  return it == workload_index_.end() ? workloads_.end() : *it;
}

Workload& AdmissionState::PutWorkload(const NamespacedName& key,
                                      Workload workload) {
  // The name is the element's key in workloads_: a replacement keeps it.
  KQ_CHECK(workload.meta.name == key.second &&
           workload.meta.namespace_name == key.first)
      << Describe(key) << " put under another name";
  if (WorkloadIt found = FindWorkloadIt(key); found != workloads_.end()) {
    Workload& held = Mutable(*found);
    // A queued workload keeps its uid (the queue orders by it); a new one
    // of the same name leaves the queue first.
    if (held.meta.uid != workload.meta.uid) queues_.Remove(key);
    held = std::move(workload);
    return held;
  }
  // A store loads in key order: then the end is where each one goes.
  const bool last =
      workloads_.empty() || WorkloadKeyLess()(*workloads_.rbegin(), key);
  WorkloadIt it =
      last ? workloads_.emplace_hint(workloads_.end(), std::move(workload))
           : workloads_.emplace(std::move(workload)).first;
  workload_index_.insert(it);
  return Mutable(*it);
}

Workload& AdmissionState::WorkloadAt(const NamespacedName& key) {
  WorkloadIt it = FindWorkloadIt(key);
  KQ_CHECK(it != workloads_.end()) << Describe(key) << " is not held";
  return Mutable(*it);
}

Workload AdmissionState::TakeWorkload(WorkloadIt it) {
  // The index hashes the element's name: out of it before the name moves.
  workload_index_.erase(it);
  return std::move(workloads_.extract(it).value());
}

void AdmissionState::ResolvePriorities() {
  for (const Workload& held : workloads_) {
    Workload& wl = Mutable(held);
    if (wl.priority != 0 || wl.priority_class_name.empty()) continue;
    auto wpc = priority_classes_.find(wl.priority_class_name);
    if (wpc != priority_classes_.end()) wl.priority = wpc->second.value;
  }
}

std::string AdmissionState::PutObject(ConfigObject object,
                                      const std::string& uid, absl::Time now) {
  ObjectKey key = KeyOf(object);
  auto old = objects_.find(key);
  if (old != objects_.end() && SameSpec(old->second, object)) {
    return "unchanged";
  }
  ObjectMeta& meta = MutableMetaOf(object);
  std::string action;
  if (old != objects_.end()) {
    const ObjectMeta& old_meta = MetaOf(old->second);
    meta.uid = old_meta.uid;
    meta.creation_timestamp = old_meta.creation_timestamp;
    meta.revision = old_meta.revision;
    action = "configured";
    MarkObject(key, Change::kModified);
  } else {
    meta.uid = uid;
    meta.creation_timestamp = now;
    meta.revision = 0;
    action = "created";
    MarkObject(key, Change::kAdded);
  }
  LoadObject(std::move(object));
  return action;
}

const Workload* AdmissionState::FindWorkload(const NamespacedName& key) const {
  auto it = workload_index_.find(key);
  return it == workload_index_.end() ? nullptr : &**it;
}

const Workload* AdmissionState::FindRecentlyFinished(
    const NamespacedName& key) const {
  auto it = changes_.finished_workloads.find(key);
  return it == changes_.finished_workloads.end() ? nullptr : &it->second;
}

const Workload& AdmissionState::AddWorkload(Workload wl, const Uid& uid,
                                            absl::Time now) {
  NamespacedName key = KeyOf(wl);
  wl.meta.uid = uid;
  wl.meta.creation_timestamp = now;
  wl.meta.revision = 0;
  wl.admission.reset();
  wl.conditions.clear();
  wl.admission_checks.clear();
  wl.requeue_state.reset();
  wl.reclaimable_pods.clear();
  ResolvePriority(wl);
  Workload& stored = PutWorkload(key, std::move(wl));
  MarkWorkload(key, Change::kAdded);
  EnqueueOrBlock(stored, now);
  needs_scheduling_ = true;
  return stored;
}

Changes AdmissionState::TakeChanges() {
  for (const auto& [key, before] : pending_condition_before_) {
    const Workload* wl = FindWorkload(key);
    if (wl == nullptr) continue;
    const Condition* now =
        FindCondition(wl->conditions, kConditionQuotaReserved);
    if (now != nullptr && *now == before) {
      changes_.workloads.erase(key);
    }
  }
  pending_condition_before_.clear();
  Changes out = std::move(changes_);
  changes_ = Changes();
  return out;
}

void AdmissionState::StampRevision(const ObjectKey& key, int64_t revision) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return;
  MutableMetaOf(it->second).revision = revision;
  // Keep the typed copy in step.
  switch (key.kind) {
    case ObjectKind::kResourceFlavor:
      flavors_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kClusterQueue:
      cluster_queues_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kCohort:
      cohorts_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kLocalQueue:
      local_queues_[{key.namespace_name, key.name}].meta.revision = revision;
      break;
    case ObjectKind::kWorkloadPriorityClass:
      priority_classes_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kAdmissionCheck:
      admission_checks_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kProvisioningRequestConfig:
      provisioning_request_configs_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kNamespace:
      namespaces_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kWorkload:
      break;
  }
}

const Workload* AdmissionState::StampRevision(const NamespacedName& key,
                                              int64_t revision) {
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) return nullptr;
  Mutable(*it).meta.revision = revision;
  return &*it;
}

void AdmissionState::Rebuild(absl::Time now) {
  std::set<std::string> flavor_names, check_names, inactive_checks;
  for (const auto& [name, f] : flavors_) flavor_names.insert(name);
  for (const auto& [name, c] : admission_checks_) {
    check_names.insert(name);
    if (AdmissionCheckActiveCondition(c).status != "True") {
      inactive_checks.insert(name);
    }
  }
  cache_.Rebuild(cluster_queues_, cohorts_, flavor_names, check_names,
                 inactive_checks);
  nominations_.Clear();  // every tree has a new generation
  // Quotas may have changed anywhere: every flavor-scan bookmark is old.
  for (const auto& [name, cq] : cluster_queues_) {
    ++cluster_queue_generations_[name];
  }
  // Usage is derived from the workloads that hold quota, so it can never
  // drift from them.
  holders_ = preemption::HoldingQuota();
  preemption_memo_.Clear();
  for (const Workload& wl : workloads_) {
    if (!HoldsQuota(wl)) continue;
    holders_.Add(&wl);
    cache::ClusterQueueSnapshot* cq =
        cache_.FindClusterQueue(wl.admission->cluster_queue);
    if (cq == nullptr) continue;
    cache::FlavorResourceQuantities usage = cache::UsageOf(wl);
    cq->AddUsage(usage);
    if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      AdjustAdmittedUsage(*cq, usage, /*add=*/true);
    }
  }
  ApplyStopPolicies(now);
  queues_ = queue::Manager();
  // New trees and a new manager, whose park versions start over.
  requeued_trees_.clear();
  for (const auto& [name, cq] : cluster_queues_) {
    queues_.UpsertClusterQueue(name, cq.queueing_strategy);
  }
  for (const Workload& wl : workloads_) {
    if (!HoldsQuota(wl)) EnqueueOrBlock(Mutable(wl), now);
  }
  timed_workloads_.clear();
  marked_since_index_.clear();
  for (const Workload& wl : workloads_) {
    if (IsTimed(wl)) timed_workloads_.insert(KeyOf(wl));
  }
  config_changed_ = false;
  needs_scheduling_ = true;
}

// Kueue's stop policies (workload_controller.go, reconcileOn*ActiveState;
// KUEUE.md 7.5): under Hold and HoldAndDrain a reservation that is not yet
// admitted is removed; under HoldAndDrain an admitted workload is evicted
// (ClusterQueueStopped / LocalQueueStopped) with Requeued=False; when the
// queue runs again, workloads it stopped get Requeued=True
// (ClusterQueueRestarted / LocalQueueRestarted).
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
    // Only a workload stopped before, or one holding quota while some
    // queue is stopped, has anything to change.
    const Condition* stopped = FindCondition(wl.conditions, kConditionRequeued);
    if (!(stopped != nullptr && stopped->status == "False") &&
        !(any_stopped && HoldsQuota(wl))) {
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
    if (requeued != nullptr && requeued->status == "False") {
      if (requeued->reason == "LocalQueueStopped" &&
          lq != local_queues_.end() && lq_policy == StopPolicy::kNone) {
        SetCondition(
            &wl.conditions,
            Condition{kConditionRequeued, "True", "LocalQueueRestarted",
                      "The LocalQueue was restarted after being "
                      "stopped",
                      now});
        MarkWorkload(key, Change::kModified);
      } else if (requeued->reason == "ClusterQueueStopped" &&
                 cq != cluster_queues_.end() &&
                 cq_policy == StopPolicy::kNone) {
        SetCondition(
            &wl.conditions,
            Condition{kConditionRequeued, "True", "ClusterQueueRestarted",
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
        Evict(wl, "LocalQueueStopped", "The LocalQueue is stopped", now);
        StopOrRelease(wl, now);
      } else if (cq_policy == StopPolicy::kHoldAndDrain) {
        Evict(wl, "ClusterQueueStopped", "The ClusterQueue is stopped", now);
        StopOrRelease(wl, now);
      }
    } else if (lq_policy != StopPolicy::kNone ||
               cq_policy != StopPolicy::kNone) {
      std::string message =
          lq_policy != StopPolicy::kNone
              ? absl::StrCat("LocalQueue ", wl.queue_name.str(), " is stopped")
              : absl::StrCat("ClusterQueue ", cq_name, " is stopped");
      ReleaseQuota(wl);
      UnsetQuotaReservation(wl, kReasonSuspended, message, now);
    }
  }
}

void AdmissionState::Evict(Workload& wl, const std::string& reason,
                           const std::string& message, absl::Time now) {
  // Kueue's prepareForEviction.
  SetCondition(&wl.conditions,
               Condition{kConditionEvicted, "True", reason, message, now});
  // An evicting workload is no longer a preemption candidate, although its
  // quota stays held until it stops.
  if (wl.admission.has_value()) {
    if (cache::ClusterQueueSnapshot* cq =
            cache_.FindClusterQueue(wl.admission->cluster_queue)) {
      cq->MarkTreeChanged();
    }
  }
  // resetChecksOnEviction: a check not Pending starts over, without the
  // podSetUpdates it reported (a Pending one is left as it is).
  for (AdmissionCheckState& check : wl.admission_checks) {
    if (check.state == "Pending") continue;
    check = AdmissionCheckState{
        .name = check.name,
        .state = "Pending",
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
  }
  // A preemptor waiting for this quota tries again.
  needs_scheduling_ = true;
}

void AdmissionState::ReleaseOverdueEvictions(absl::Time now) {
  IndexTimedWorkloads();
  const std::vector<NamespacedName> timed(timed_workloads_.begin(),
                                          timed_workloads_.end());
  for (const NamespacedName& key : timed) {
    Workload& wl = WorkloadAt(key);
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
  bool requeue = reason == "Preempted" || reason == "NodeFailures";
  SetCondition(&wl.conditions,
               Condition{kConditionRequeued, requeue ? "True" : "False", reason,
                         message, now});
  ReleaseQuota(wl);
  UnsetQuotaReservation(wl, "PendingEvaluation", message, now);
}

void AdmissionState::UnsetQuotaReservation(Workload& wl,
                                           const std::string& reason,
                                           const std::string& message,
                                           absl::Time now) {
  // Kueue's UnsetQuotaReservationWithCondition + SyncAdmittedCondition.
  SetCondition(&wl.conditions, Condition{kConditionQuotaReserved, "False",
                                         reason, message, now});
  wl.admission.reset();
  const Condition* admitted = FindCondition(wl.conditions, kConditionAdmitted);
  if (admitted != nullptr) {
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, "False", "NoReservation",
                           "The workload has no reservation", now});
  }
  MarkWorkload(KeyOf(wl), Change::kModified);
}

std::string AdmissionState::ClusterQueueForWorkload(const Workload& wl) const {
  if (wl.admission) return wl.admission->cluster_queue;
  auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
  return lq == local_queues_.end() ? "" : lq->second.cluster_queue;
}

void AdmissionState::EnqueueOrBlock(Workload& wl, absl::Time now) {
  NamespacedName key = KeyOf(wl);
  queues_.Remove(key);
  if (!wl.active) return;
  // Kueue's getQueueBlocker, in its order.
  std::string reason, message;
  auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
  if (lq == local_queues_.end()) {
    reason = kReasonMisconfigured;
    message =
        absl::StrCat("LocalQueue ", wl.queue_name.str(), " doesn't exist");
  } else if (lq->second.stop_policy != StopPolicy::kNone) {
    reason = kReasonSuspended;
    message = absl::StrCat("LocalQueue ", wl.queue_name.str(), " is stopped");
  } else {
    const std::string& cq_name = lq->second.cluster_queue;
    const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(cq_name);
    if (cq == nullptr) {
      reason = kReasonMisconfigured;
      message = absl::StrCat("ClusterQueue ", cq_name, " doesn't exist");
    } else {
      // A workload evicted with Requeued=False waits (Kueue keeps it
      // inadmissible until the condition turns True).
      const Condition* requeued =
          FindCondition(wl.conditions, kConditionRequeued);
      if (requeued == nullptr || requeued->status != "False") {
        queues_.Push(cq_name, queue::KeyFor(wl));
      }
      if (cq->spec.stop_policy != StopPolicy::kNone) {
        reason = kReasonSuspended;
        message = absl::StrCat("ClusterQueue ", cq_name, " is stopped");
      } else if (!cq->active) {
        reason = kReasonSuspended;
        message = absl::StrCat("ClusterQueue ", cq_name, " is inactive");
      }
    }
  }
  if (!reason.empty()) SetPendingCondition(wl, reason, message, now);
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
          head.object != nullptr ? head.object : &WorkloadAt(head.workload);
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
    for (scheduler::EntryResult& entry : result.entries) {
      Workload& wl = *const_cast<Workload*>(entry.workload);
      NamespacedName key = KeyOf(wl);
      if (entry.status == scheduler::EntryResult::Status::kAdmitted) {
        last_assignments_.erase(key);
        ReserveQuota(wl, std::move(entry.admission), now);
        progress = true;
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
      // Kueue leaves the granular reason empty in a few corners (a pod set
      // whose other resources got flavors); its non-granular fallback is
      // "Pending", which kq uses rather than write a condition without a
      // reason.
      const std::string& reason_text =
          entry.reason.empty() ? std::string("Pending") : entry.reason;
      SetPendingCondition(wl, reason_text, entry.message, now);
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
    auto it = FindWorkloadIt(KeyOf(*target.workload));
    // A victim released already (by an earlier entry of the same pass; the
    // scheduler does not let targets overlap) must not be released twice.
    if (it == workloads_.end() || !HoldsQuota(*it)) continue;
    Workload& victim = Mutable(*it);
    // Kueue's "preemption ongoing": a victim evicted earlier still stops.
    if (IsEvicting(victim)) continue;
    const std::string message =
        PreemptionMessage(preemptor, target.reason, preemptor_path,
                          ClusterQueuePath(cache_, target.cluster_queue));
    Evict(victim, "Preempted", message, now);
    // Kueue's SetPreemptedCondition.
    SetCondition(&victim.conditions,
                 Condition{"Preempted", "True", target.reason, message, now});
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
      Condition{kConditionQuotaReserved, "True", "QuotaReserved",
                absl::StrCat("Quota reserved in ClusterQueue ", cq_name), now});
  holders_.Add(&wl);
  ++reservations_;
  ResetActiveCondition(wl, kConditionEvicted, "QuotaReserved", now);
  ResetActiveCondition(wl, "Preempted", "QuotaReserved", now);
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
      wl.admission_checks.push_back(AdmissionCheckState{
          .name = rule.name, .state = "Pending", .last_transition_time = now});
    }
  }
  SyncAdmitted(wl, now);
  MarkWorkload(KeyOf(wl), Change::kModified);
}

void AdmissionState::SyncAdmitted(Workload& wl, absl::Time now) {
  if (!HoldsQuota(wl)) return;
  bool all_ready = true;
  for (const AdmissionCheckState& s : wl.admission_checks) {
    all_ready = all_ready && s.state == "Ready";
  }
  const bool was_admitted = IsConditionTrue(wl.conditions, kConditionAdmitted);
  const Condition* admitted = FindCondition(wl.conditions, kConditionAdmitted);
  // A False condition from before the reservation (NoReservation) still
  // needs the reason that names the checks.
  if (admitted != nullptr && was_admitted == all_ready &&
      admitted->reason ==
          (all_ready ? "Admitted" : "UnsatisfiedAdmissionChecks")) {
    return;
  }
  if (all_ready) {
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, "True", "Admitted",
                           "The workload is admitted", now});
  } else {
    SetCondition(
        &wl.conditions,
        Condition{kConditionAdmitted, "False", "UnsatisfiedAdmissionChecks",
                  "The workload has not all checks ready", now});
  }
  MarkWorkload(KeyOf(wl), Change::kModified);
  cache::ClusterQueueSnapshot* snapshot =
      cache_.FindClusterQueue(wl.admission->cluster_queue);
  if (snapshot == nullptr || was_admitted == all_ready) return;
  AdjustAdmittedUsage(*snapshot, cache::UsageOf(wl), all_ready);
}

namespace {

constexpr char kReasonAdmissionCheck[] = "AdmissionCheck";
constexpr char kReasonDeactivatedByCheck[] = "DeactivatedDueToAdmissionCheck";

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

// Whether the workload waits out an admission check backoff.
bool WaitsForCheckBackoff(const Workload& wl) {
  const Condition* requeued = FindCondition(wl.conditions, kConditionRequeued);
  return requeued != nullptr && requeued->status == "False" &&
         requeued->reason == kReasonAdmissionCheck;
}

}  // namespace

absl::StatusOr<Workload> AdmissionState::SetAdmissionCheckState(
    const NamespacedName& key, const std::string& check,
    const std::string& state, const std::string& message,
    std::optional<int32_t> requeue_after_seconds, absl::Time now,
    const std::vector<PodSetUpdate>& pod_set_updates,
    const Workload* with_templates) {
  if (state != "Pending" && state != "Ready" && state != "Retry" &&
      state != "Rejected") {
    return absl::InvalidArgumentError(
        absl::StrCat("admission check state \"", state,
                     "\" is not one of Pending, Ready, Retry, Rejected"));
  }
  if (requeue_after_seconds.has_value() && *requeue_after_seconds < 0) {
    return absl::InvalidArgumentError(
        "requeue_after_seconds: must not be negative");
  }
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = Mutable(*it);
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
  if (valid.ok() && target->state == "Ready" && state == "Ready" &&
      target->pod_set_updates != pod_set_updates) {
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

  if (state == "Rejected") {
    // Kueue's reconcileCheckBasedEviction sets the DeactivationTarget; the
    // job is then deactivated and evicted with the check as the cause.
    const std::string why = AdmissionChecksMessage(wl, "Rejected");
    wl.active = false;
    queues_.Remove(key);
    last_assignments_.erase(key);
    SetRequeueAt(wl, std::nullopt);
    if (!IsEvicting(wl)) {
      Evict(wl, kReasonDeactivatedByCheck,
            absl::StrCat("The workload is deactivated due to ", why), now);
      StopOrRelease(wl, now);
    }
    return wl;
  }
  if (state == "Retry") {
    if (IsConditionTrue(wl.conditions, kConditionEvicted)) return wl;
    // Kueue's NeedsRequeueAtUpdate: the check's own retry time.
    if (requeue_after_seconds.has_value()) {
      SetRequeueAt(wl, target->last_transition_time +
                           absl::Seconds(*requeue_after_seconds));
    } else {
      SetRequeueAt(wl, std::nullopt);
    }
    Evict(wl, kReasonAdmissionCheck,
          absl::StrCat("Evicted due to ", AdmissionChecksMessage(wl, "Retry")),
          now);
    // RunPasses requeues it once the quota is released and the backoff is
    // over.
    StopOrRelease(wl, now);
    return wl;
  }
  SyncAdmitted(wl, now);
  return wl;
}

std::optional<absl::Time> AdmissionState::NextWakeup() {
  IndexTimedWorkloads();
  std::optional<absl::Time> next;
  auto consider = [&next](absl::Time at) {
    if (!next.has_value() || at < *next) next = at;
  };
  auto visit = [&](const NamespacedName& key) {
    auto it = FindWorkloadIt(key);
    if (it == workloads_.end()) return;
    const Workload& wl = *it;
    if (wl.stop_deadline.has_value()) {
      consider(*wl.stop_deadline);
      if (wl.runner.has_value()) consider(wl.runner->lease_expire_time);
      return;
    }
    if (!wl.active || HoldsQuota(wl) || !WaitsForCheckBackoff(wl)) return;
    consider(RequeueAt(wl).value_or(absl::InfinitePast()));
  };
  for (const NamespacedName& key : timed_workloads_) visit(key);
  return next;
}

bool AdmissionState::IsTimed(const Workload& wl) {
  return wl.stop_deadline.has_value() ||
         (wl.active && !HoldsQuota(wl) && WaitsForCheckBackoff(wl));
}

void AdmissionState::IndexTimedWorkloads() {
  for (const NamespacedName& key : marked_since_index_) {
    auto it = FindWorkloadIt(key);
    const bool timed = it != workloads_.end() && IsTimed(*it);
    if (timed) {
      timed_workloads_.insert(key);
    } else {
      timed_workloads_.erase(key);
    }
  }
  marked_since_index_.clear();
}

void AdmissionState::RequeueBackedOff(absl::Time now) {
  IndexTimedWorkloads();
  const std::vector<NamespacedName> timed(timed_workloads_.begin(),
                                          timed_workloads_.end());
  for (const NamespacedName& key : timed) {
    Workload& wl = WorkloadAt(key);
    if (!wl.active || HoldsQuota(wl) || !WaitsForCheckBackoff(wl)) continue;
    if (std::optional<absl::Time> at = RequeueAt(wl); at && *at > now) continue;
    SetRequeueAt(wl, std::nullopt);
    SetCondition(&wl.conditions,
                 Condition{kConditionRequeued, "True", "BackoffFinished",
                           "The workload backoff was finished", now});
    MarkWorkload(key, Change::kModified);
    EnqueueOrBlock(wl, now);
  }
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

absl::StatusOr<Workload> AdmissionState::SetReclaimablePods(
    const NamespacedName& key, const std::vector<ReclaimablePod>& pods,
    absl::Time now) {
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = Mutable(*it);
  absl::StatusOr<std::map<std::string, int32_t>> checked =
      CheckReclaimablePods(wl, pods);
  if (!checked.ok()) return About(Describe(key), checked.status());
  std::map<std::string, int32_t> reclaimable = *std::move(checked);
  if (reclaimable == wl.reclaimable_pods) return wl;
  MarkWorkload(key, Change::kModified);
  if (!HoldsQuota(wl)) {
    // A pending workload asks for less from now on: its flavor-scan
    // bookmark is stale, and parked as inadmissible it may fit now (Kueue's
    // queue manager re-adds an updated pending workload to its heap).
    wl.reclaimable_pods = std::move(reclaimable);
    last_assignments_.erase(key);
    if (queues_.Contains(key)) {
      EnqueueOrBlock(wl, now);
      needs_scheduling_ = true;
    }
    return wl;
  }
  // Kueue's workload controller: the cache swaps the workload's old usage
  // for the new one, and the inadmissible workloads of the cohort tree are
  // retried (QueueAssociatedInadmissibleWorkloadsAfter).
  cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(wl.admission->cluster_queue);
  const bool admitted = IsConditionTrue(wl.conditions, kConditionAdmitted);
  if (cq != nullptr) {
    const cache::FlavorResourceQuantities old_usage = cache::UsageOf(wl);
    cq->RemoveUsage(old_usage);
    if (admitted) AdjustAdmittedUsage(*cq, old_usage, /*add=*/false);
  }
  wl.reclaimable_pods = std::move(reclaimable);
  if (cq != nullptr) {
    const cache::FlavorResourceQuantities new_usage = cache::UsageOf(wl);
    cq->AddUsage(new_usage);
    if (admitted) AdjustAdmittedUsage(*cq, new_usage, /*add=*/true);
    // Freed quota outdates the flavor-scan bookmarks, as on release.
    ++cluster_queue_generations_[wl.admission->cluster_queue];
    QueueInadmissibleInTree(wl.admission->cluster_queue);
  }
  return wl;
}

absl::StatusOr<std::map<std::string, int32_t>> CheckReclaimablePods(
    const Workload& wl, const std::vector<ReclaimablePod>& pods) {
  constexpr char kPath[] = "status.reclaimablePods";
  std::map<std::string, int32_t> pod_set_counts;
  std::vector<std::string> supported;
  for (const PodSet& ps : wl.pod_sets) {
    pod_set_counts[ps.name] = ps.count;
    supported.push_back(absl::StrCat("\"", ps.name.str(), "\""));
  }
  std::map<std::string, int32_t> reclaimable;
  for (size_t i = 0; i < pods.size(); ++i) {
    const ReclaimablePod& rp = pods[i];
    const std::string path = absl::StrCat(kPath, "[", rp.name, "]");
    auto ps = pod_set_counts.find(rp.name);
    if (ps == pod_set_counts.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".name: Unsupported value: \"", rp.name,
          "\": supported values: ", absl::StrJoin(supported, ", ")));
    }
    if (!reclaimable.emplace(rp.name, rp.count).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          kPath, "[", i, "]: Duplicate value: {\"name\":\"", rp.name, "\"}"));
    }
    if (rp.count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".count: Invalid value: ", rp.count,
                       ": should be greater than or equal to 0"));
    }
    if (rp.count > ps->second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".count: Invalid value: ", rp.count,
                       ": should be less or equal to ", ps->second));
    }
  }
  if (!HoldsQuota(wl)) return reclaimable;
  // Kueue's validateReclaimablePodsUpdate: while quota is reserved, pods
  // once reclaimed stay reclaimed, so the usage a workload holds never
  // grows back past what it was admitted with.
  for (const auto& [name, count] : reclaimable) {
    auto old = wl.reclaimable_pods.find(name);
    if (old != wl.reclaimable_pods.end() && count < old->second) {
      return absl::InvalidArgumentError(
          absl::StrCat(kPath, "[", name, "].count: Invalid value: ", count,
                       ": cannot be less than ", old->second));
    }
  }
  for (const auto& [name, count] : wl.reclaimable_pods) {
    if (!reclaimable.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kPath, "[", name, "]: Required value: cannot be removed"));
    }
  }
  return reclaimable;
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

absl::Status AdmissionState::CheckPriorityClass(
    const Workload& wl, const std::vector<ConfigObject>& pending) const {
  if (wl.priority_class_name.empty()) return absl::OkStatus();
  if (priority_classes_.count(wl.priority_class_name)) {
    return absl::OkStatus();
  }
  for (const ConfigObject& o : pending) {
    const auto* wpc = std::get_if<WorkloadPriorityClass>(&o);
    if (wpc != nullptr && wpc->meta.name == wl.priority_class_name.str()) {
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrCat(
      Describe(KeyOf(wl)), ": spec.priorityClassName: WorkloadPriorityClass \"",
      wl.priority_class_name.str(), "\" not found"));
}

void AdmissionState::ResolvePriority(Workload& wl) const {
  // Kueue's WorkloadPriorityClassDefaulting: a class named "default".
  if (wl.priority_class_name.empty() && priority_classes_.count("default")) {
    wl.priority_class_name = "default";
  }
  if (wl.priority_class_name.empty()) return;
  wl.priority_class_source = PriorityClassSource::kWorkloadPriorityClass;
  wl.priority = priority_classes_.at(wl.priority_class_name).value;
}

absl::Status AdmissionState::RemoveObject(const ObjectKey& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  if (key.kind == ObjectKind::kClusterQueue) {
    int holding = 0;
    for (const Workload& wl : workloads_) {
      if (HoldsQuota(wl) && wl.admission->cluster_queue == key.name) ++holding;
    }
    if (holding > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key), " still has ", holding,
          " workload(s) holding quota; finish or cancel them first"));
    }
  }
  if (key.kind == ObjectKind::kResourceFlavor) {
    std::vector<std::string> users;
    for (const auto& [name, cq] : cluster_queues_) {
      for (const ResourceGroup& g : cq.resource_groups) {
        for (const FlavorQuotas& f : g.flavors) {
          if (f.name == key.name) users.push_back(name);
        }
      }
    }
    if (!users.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(Describe(key), " is in use by ClusterQueue(s) ",
                       absl::StrJoin(users, ", ")));
    }
  }
  switch (key.kind) {
    case ObjectKind::kResourceFlavor:
      flavors_.erase(key.name);
      break;
    case ObjectKind::kClusterQueue:
      cluster_queues_.erase(key.name);
      break;
    case ObjectKind::kCohort:
      cohorts_.erase(key.name);
      break;
    case ObjectKind::kLocalQueue:
      local_queues_.erase({key.namespace_name, key.name});
      break;
    case ObjectKind::kWorkloadPriorityClass:
      priority_classes_.erase(key.name);
      break;
    case ObjectKind::kAdmissionCheck:
      admission_checks_.erase(key.name);
      break;
    case ObjectKind::kProvisioningRequestConfig:
      provisioning_request_configs_.erase(key.name);
      break;
    case ObjectKind::kNamespace:
      namespaces_.erase(key.name);
      break;
    case ObjectKind::kWorkload:
      return absl::InvalidArgumentError(
          "workloads are cancelled or finished, not deleted");
  }
  changes_.deleted_objects[key] = it->second;
  objects_.erase(it);
  MarkObject(key, Change::kDeleted);
  config_changed_ = true;
  return absl::OkStatus();
}

absl::StatusOr<Workload> AdmissionState::FinishWorkload(
    const NamespacedName& key, const std::string& reason,
    const std::string& message, absl::Time now) {
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  if (HoldsQuota(*it)) {
    // The index points at the set's element, which goes away now.
    holders_.Remove(&*it, it->admission->cluster_queue);
  }
  // The queue reads a queued workload's name from it: out of the queue
  // before the workload moves.
  queues_.Remove(key);
  Workload wl = TakeWorkload(it);
  last_assignments_.erase(key);
  ReleaseQuota(wl);
  wl.runner.reset();
  wl.stop_deadline.reset();
  SetCondition(&wl.conditions,
               Condition{kConditionFinished, "True", reason, message, now});
  changes_.finished_workloads[key] = wl;
  MarkWorkload(key, Change::kModified);
  return wl;
}

absl::StatusOr<HeartbeatResult> AdmissionState::Heartbeat(
    const NamespacedName& key, const std::string& runner_id,
    absl::Duration lease, bool stopped, absl::Time now) {
  if (runner_id.empty()) {
    return absl::InvalidArgumentError("runner_id: required");
  }
  if (lease <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lease: must be positive");
  }
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = Mutable(*it);
  const bool other_runner = wl.runner.has_value() &&
                            wl.runner->id != runner_id &&
                            wl.runner->lease_expire_time > now;
  if (other_runner) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " is run by runner \"", wl.runner->id,
                     "\" (lease until ",
                     absl::FormatTime(wl.runner->lease_expire_time), ")"));
  }
  if (!HoldsQuota(wl)) {
    // Released already (the lease lapsed or the grace period ended while
    // it was being evicted): whatever still runs must stop.
    if (stopped) return HeartbeatResult{wl, false};
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " holds no quota: stop it"));
  }
  if (stopped) {
    if (!IsEvicting(wl)) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key),
          " is not being evicted; report its end with FinishWorkload"));
    }
    ReleaseEvicted(wl, now);
    return HeartbeatResult{wl, false};
  }
  if (!IsEvicting(wl) && !IsConditionTrue(wl.conditions, kConditionAdmitted)) {
    return absl::FailedPreconditionError(absl::StrCat(
        Describe(key), " is not admitted yet (admission checks pending)"));
  }
  wl.runner = Runner{runner_id, now + lease};
  MarkWorkload(key, Change::kModified);
  return HeartbeatResult{wl, IsEvicting(wl)};
}

absl::StatusOr<Workload> AdmissionState::Preempt(const NamespacedName& key,
                                                 const std::string& message,
                                                 const std::string& actor,
                                                 bool deactivate,
                                                 absl::Time now) {
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = Mutable(*it);
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
  Evict(wl, "Preempted", absl::StrCat("Preempted by ", who, why), now);
  StopOrRelease(wl, now);
  return wl;
}

absl::StatusOr<Workload> AdmissionState::SetActive(const NamespacedName& key,
                                                   bool active,
                                                   absl::Time now) {
  auto it = FindWorkloadIt(key);
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = Mutable(*it);
  if (wl.active == active) return wl;
  if (!active) {
    Deactivate(wl, "The workload is deactivated", now);
    return wl;
  }
  // Kueue's reactivation: Requeued=True (Reactivated), queued again once
  // its quota, if still held while stopping, is released.
  wl.active = true;
  SetCondition(&wl.conditions,
               Condition{kConditionRequeued, "True", "Reactivated",
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
  Evict(wl, "Deactivated", message, now);
  if (HoldsQuota(wl)) {
    StopOrRelease(wl, now);
  } else {
    SetCondition(&wl.conditions, Condition{kConditionRequeued, "False",
                                           "Deactivated", message, now});
  }
}

ObjectView AdmissionState::ViewOf(const ConfigObject& object) const {
  ObjectView view{object, std::nullopt, {}};
  if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
    view.status = ClusterQueueStatusOf(cq->meta.name);
  } else if (const auto* lq = std::get_if<LocalQueue>(&object)) {
    view.status = LocalQueueStatusOf(*lq);
  } else if (const auto* cohort = std::get_if<Cohort>(&object)) {
    const cache::CohortSnapshot* node = cache_.FindCohort(cohort->meta.name);
    if (configuration_.fair_sharing.has_value() && node != nullptr) {
      view.status.emplace().weighted_share =
          cache::DominantResourceShare(*node).WeightedShare();
    }
  } else if (const auto* check = std::get_if<AdmissionCheck>(&object)) {
    view.conditions.push_back(AdmissionCheckActiveCondition(*check));
  }
  return view;
}

Condition AdmissionState::AdmissionCheckActiveCondition(
    const AdmissionCheck& check) const {
  Condition active{kConditionActive, "True", "Active",
                   "The admission check is active",
                   check.meta.creation_timestamp};
  if (check.controller_name != kProvisioningRequestControllerName) {
    return active;
  }
  // Kueue's ConfigHelper.ConfigFromRef (refValidForGK, then the lookup).
  constexpr char kBadRef[] = ": bad parameters reference";
  std::string problem;
  const bool has_ref = !check.parameters_api_group.empty() ||
                       !check.parameters_kind.empty() ||
                       !check.parameters_name.empty();
  if (!has_ref) {
    problem = "missing parameters reference";
  } else if (check.parameters_name.empty()) {
    problem = absl::StrCat("empty name", kBadRef);
  } else if (check.parameters_api_group != "kueue.x-k8s.io") {
    problem = absl::StrCat("wrong group \"", check.parameters_api_group,
                           "\", expecting \"kueue.x-k8s.io\"", kBadRef);
  } else if (check.parameters_kind != "ProvisioningRequestConfig") {
    problem =
        absl::StrCat("wrong kind \"", check.parameters_kind,
                     "\", expecting \"ProvisioningRequestConfig\"", kBadRef);
  } else {
    auto config = provisioning_request_configs_.find(check.parameters_name);
    if (config == provisioning_request_configs_.end()) {
      problem = absl::StrCat("provisioningrequestconfigs.kueue.x-k8s.io \"",
                             check.parameters_name, "\" not found");
    } else {
      // It turned active when the later of the two appeared.
      active.last_transition_time = std::max(
          active.last_transition_time, config->second.meta.creation_timestamp);
      return active;
    }
  }
  active.status = "False";
  active.reason = "BadParametersRef";
  active.message = problem;
  return active;
}

WorkloadView AdmissionState::ViewOf(Workload workload,
                                    bool with_position) const {
  WorkloadView view{std::move(workload), {}, std::nullopt};
  const Workload& wl = view.workload;
  if (HoldsQuota(wl)) {
    for (const PodSetAssignment& psa : wl.admission->pod_set_assignments) {
      PodSetPlacement placement{psa.name, {}};
      std::set<std::string> seen;
      for (const auto& [resource, flavor_name] : psa.flavors) {
        if (!seen.insert(flavor_name).second) continue;
        FlavorPlacement fp{flavor_name, {}, {}};
        auto flavor = flavors_.find(flavor_name);
        if (flavor != flavors_.end()) {
          fp.node_labels = flavor->second.node_labels;
          fp.tolerations = flavor->second.tolerations;
        }
        placement.flavors.push_back(std::move(fp));
      }
      view.placements.push_back(std::move(placement));
    }
  }
  if (with_position) view.position = queues_.PositionOf(KeyOf(wl));
  return view;
}

QueueStatus AdmissionState::ClusterQueueStatusOf(
    const std::string& name) const {
  QueueStatus status;
  const cache::ClusterQueueSnapshot* cq = cache_.FindClusterQueue(name);
  const ClusterQueue& spec = cluster_queues_.at(name);
  if (cq != nullptr) {
    status.conditions.push_back(Condition{
        kConditionActive, cq->active ? "True" : "False", cq->active_reason,
        cq->active_message, spec.meta.creation_timestamp});
    bool in_cohort = cq->parent != nullptr;
    status.flavors_reservation = UsageByFlavor(
        spec.resource_groups, cq->node.usage, &cq->node, in_cohort);
    status.flavors_usage = UsageByFlavor(
        spec.resource_groups, cq->admitted_usage, &cq->node, in_cohort);
    if (configuration_.fair_sharing.has_value()) {
      status.weighted_share = cache::DominantResourceShare(*cq).WeightedShare();
    }
  }
  status.pending_workloads = queues_.PendingCount(name);
  for (const Workload* wl : holders_.InClusterQueue(name)) {
    ++status.reserving_workloads;
    if (IsConditionTrue(wl->conditions, kConditionAdmitted)) {
      ++status.admitted_workloads;
    }
  }
  return status;
}

QueueStatus AdmissionState::LocalQueueStatusOf(const LocalQueue& lq) const {
  QueueStatus status;
  Condition active{kConditionActive, "True", "Ready",
                   "Can submit new workloads to localQueue",
                   lq.meta.creation_timestamp};
  const cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(lq.cluster_queue);
  if (lq.stop_policy != StopPolicy::kNone) {
    active = {kConditionActive, "False", "Stopped", "LocalQueue is stopped",
              lq.meta.creation_timestamp};
  } else if (cq == nullptr) {
    active = {kConditionActive, "False", "ClusterQueueDoesNotExist",
              "Can't submit new workloads to clusterQueue",
              lq.meta.creation_timestamp};
  } else if (!cq->active) {
    active = {kConditionActive, "False", "ClusterQueueIsInactive",
              "Can't submit new workloads to clusterQueue",
              lq.meta.creation_timestamp};
  }
  status.conditions.push_back(active);
  cache::FlavorResourceQuantities reserved, admitted;
  // Only the LocalQueue's namespace: workloads are keyed by it first.
  for (auto it =
           workloads_.lower_bound(NamespacedName{lq.meta.namespace_name, ""});
       it != workloads_.end() &&
       it->meta.namespace_name == lq.meta.namespace_name;
       ++it) {
    const Workload& wl = *it;
    if (wl.queue_name != lq.meta.name) continue;
    if (!HoldsQuota(wl)) {
      if (queues_.Contains(KeyOf(wl))) ++status.pending_workloads;
      continue;
    }
    ++status.reserving_workloads;
    cache::FlavorResourceQuantities usage = cache::UsageOf(wl);
    for (const auto& [fr, v] : usage) {
      reserved[fr] = SaturatingAdd(reserved[fr], v);
    }
    if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      ++status.admitted_workloads;
      for (const auto& [fr, v] : usage) {
        admitted[fr] = SaturatingAdd(admitted[fr], v);
      }
    }
  }
  if (cq != nullptr) {
    status.flavors_reservation =
        UsageByFlavor(cq->spec.resource_groups, reserved, nullptr, false);
    status.flavors_usage =
        UsageByFlavor(cq->spec.resource_groups, admitted, nullptr, false);
  }
  return status;
}

void AdmissionState::SetPendingCondition(Workload& wl,
                                         const std::string& reason,
                                         const std::string& message,
                                         absl::Time now) {
  const Condition* current =
      FindCondition(wl.conditions, kConditionQuotaReserved);
  if (current != nullptr && current->status == "False" &&
      current->reason == reason && current->message == message) {
    return;
  }
  MarkPendingCondition(KeyOf(wl), current);
  SetCondition(&wl.conditions, Condition{kConditionQuotaReserved, "False",
                                         reason, message, now});
}

void AdmissionState::MarkPendingCondition(const NamespacedName& key,
                                          const Condition* before) {
  // A first condition is kept as a change without a look back: that is
  // every workload's first pass, and a copy each would cost memory.
  if (before == nullptr) return MarkWorkload(key, Change::kModified);
  // Changed already in this batch: the first mark says what it was.
  if (!changes_.workloads.contains(key)) {
    pending_condition_before_.emplace(key, *before);
  }
  RecordChange(key, Change::kModified);
}

void AdmissionState::MarkWorkload(const NamespacedName& key, Change change) {
  if (!pending_condition_before_.empty()) pending_condition_before_.erase(key);
  RecordChange(key, change);
}

void AdmissionState::RecordChange(const NamespacedName& key, Change change) {
  marked_since_index_.push_back(key);
  auto [it, inserted] = changes_.workloads.emplace(key, change);
  if (!inserted && it->second != Change::kAdded) it->second = change;
}

void AdmissionState::MarkObject(const ObjectKey& key, Change type) {
  auto [it, inserted] = changes_.objects.emplace(key, type);
  if (!inserted) {
    if (it->second == Change::kAdded && type == Change::kDeleted) {
      // Created and deleted in one batch: nothing to store.
      changes_.objects.erase(it);
      changes_.deleted_objects.erase(key);
      return;
    }
    if (it->second != Change::kAdded) it->second = type;
  }
}

const ConfigObject* AdmissionState::FindObject(const ObjectKey& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

}  // namespace kq::admission
