// The configuration objects: apply, delete, and the rebuild of the quota
// tree and the queues after they change (Kueue's ClusterQueue, Cohort,
// ResourceFlavor and AdmissionCheck controllers, and their webhooks' checks
// that need the other objects).

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/admission/internal.h"
#include "server/admission/state.h"
#include "server/cache/fair_sharing.h"
#include "server/core/validation.h"

namespace kq::admission {

namespace {

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

}  // namespace

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
    change_log_.MarkObject(key, Change::kModified);
  } else {
    meta.uid = uid;
    meta.creation_timestamp = now;
    meta.revision = 0;
    action = "created";
    change_log_.MarkObject(key, Change::kAdded);
  }
  LoadObject(std::move(object));
  return action;
}

void AdmissionState::Rebuild(absl::Time now) {
  std::set<std::string> flavor_names, check_names, inactive_checks;
  for (const auto& [name, f] : flavors_) flavor_names.insert(name);
  for (const auto& [name, c] : admission_checks_) {
    check_names.insert(name);
    if (AdmissionCheckActiveCondition(c).status != kConditionTrue) {
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
  change_log_.MarkDeleted(key, std::move(it->second));
  objects_.erase(it);
  config_changed_ = true;
  return absl::OkStatus();
}

Condition AdmissionState::AdmissionCheckActiveCondition(
    const AdmissionCheck& check) const {
  Condition active{kConditionActive, kConditionTrue, "Active",
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
  active.status = kConditionFalse;
  active.reason = "BadParametersRef";
  active.message = problem;
  return active;
}

}  // namespace kq::admission
