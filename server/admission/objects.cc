// The configuration objects: apply, delete, and the rebuild of the quota
// tree and the queues after they change (Kueue's ClusterQueue, Cohort,
// ResourceFlavor and AdmissionCheck controllers, and their webhooks' checks
// that need the other objects).

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

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
  if (key.kind == ObjectKind::kMultiKueueCluster) {
    multikueue_cluster_active_.erase(key.name);
  }
  LoadObject(std::move(object));
  return action;
}

void AdmissionState::Rebuild(absl::Time now) {
  std::set<std::string> flavor_names, check_names, inactive_checks;
  std::map<std::string, std::string> check_controllers;
  for (const auto& [name, f] : flavors_) flavor_names.insert(name);
  for (const auto& [name, c] : admission_checks_) {
    check_names.insert(name);
    check_controllers[name] = c.controller_name;
    if (AdmissionCheckActiveCondition(c).status != kConditionTrue) {
      inactive_checks.insert(name);
    }
  }
  cache_.Rebuild(cluster_queues_, cohorts_, flavor_names, check_names,
                 inactive_checks, check_controllers);
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
    case ObjectKind::kMultiKueueConfig:
      multikueue_configs_.erase(key.name);
      break;
    case ObjectKind::kMultiKueueCluster:
      multikueue_clusters_.erase(key.name);
      multikueue_cluster_active_.erase(key.name);
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

namespace {

// Kueue's ConfigHelper.ConfigFromRef for parameters of `kind` (refValidForGK,
// then the lookup by `find`, which returns the object's creation time or
// nullopt when there is none): the error's text, or nullopt with `found`
// set.
std::optional<std::string> ParametersProblem(
    const AdmissionCheck& check, absl::string_view kind,
    absl::string_view resource,
    const std::function<std::optional<absl::Time>(const std::string&)>& find,
    absl::Time* found) {
  constexpr char kBadRef[] = ": bad parameters reference";
  const bool has_ref = !check.parameters_api_group.empty() ||
                       !check.parameters_kind.empty() ||
                       !check.parameters_name.empty();
  if (!has_ref) return "missing parameters reference";
  if (check.parameters_name.empty()) return absl::StrCat("empty name", kBadRef);
  if (check.parameters_api_group != "kueue.x-k8s.io") {
    return absl::StrCat("wrong group \"", check.parameters_api_group,
                        "\", expecting \"kueue.x-k8s.io\"", kBadRef);
  }
  if (check.parameters_kind != kind) {
    return absl::StrCat("wrong kind \"", check.parameters_kind,
                        "\", expecting \"", kind, "\"", kBadRef);
  }
  std::optional<absl::Time> created = find(check.parameters_name);
  if (!created.has_value()) {
    return absl::StrCat(resource, ".kueue.x-k8s.io \"", check.parameters_name,
                        "\" not found");
  }
  *found = *created;
  return std::nullopt;
}

// Go's %v of a []string: "[a b c]".
std::string GoList(const std::vector<std::string>& names) {
  return absl::StrCat("[", absl::StrJoin(names, " "), "]");
}

}  // namespace

Condition AdmissionState::AdmissionCheckActiveCondition(
    const AdmissionCheck& check) const {
  Condition active{kConditionActive, kConditionTrue, "Active",
                   "The admission check is active",
                   check.meta.creation_timestamp};
  absl::Time found = absl::InfinitePast();
  if (check.controller_name == kProvisioningRequestControllerName) {
    std::optional<std::string> problem = ParametersProblem(
        check, "ProvisioningRequestConfig", "provisioningrequestconfigs",
        [&](const std::string& name) -> std::optional<absl::Time> {
          auto it = provisioning_request_configs_.find(name);
          if (it == provisioning_request_configs_.end()) return std::nullopt;
          return it->second.meta.creation_timestamp;
        },
        &found);
    if (problem.has_value()) {
      active.status = kConditionFalse;
      active.reason = "BadParametersRef";
      active.message = *problem;
      return active;
    }
    // It turned active when the later of the two appeared.
    active.last_transition_time = std::max(active.last_transition_time, found);
    return active;
  }
  if (check.controller_name != kMultiKueueControllerName) return active;
  // Kueue's multikueue ACReconciler.Reconcile.
  std::optional<std::string> problem = ParametersProblem(
      check, "MultiKueueConfig", "multikueueconfigs",
      [&](const std::string& name) -> std::optional<absl::Time> {
        auto it = multikueue_configs_.find(name);
        if (it == multikueue_configs_.end()) return std::nullopt;
        return it->second.meta.creation_timestamp;
      },
      &found);
  if (problem.has_value()) {
    active.status = kConditionFalse;
    active.reason = "BadConfig";
    active.message =
        absl::StrCat("Cannot load the AdmissionChecks parameters: ", *problem);
    return active;
  }
  active.last_transition_time = std::max(active.last_transition_time, found);
  const MultiKueueConfig& config =
      multikueue_configs_.at(check.parameters_name);
  std::vector<std::string> missing, inactive;
  for (const std::string& name : config.clusters) {
    auto cluster = multikueue_clusters_.find(name);
    if (cluster == multikueue_clusters_.end()) {
      missing.push_back(name);
      continue;
    }
    const Condition condition =
        MultiKueueClusterActiveCondition(cluster->second);
    if (condition.status != kConditionTrue) inactive.push_back(name);
    // What the check says follows from its clusters' conditions: it changed
    // at the latest when one of them did.
    active.last_transition_time =
        std::max(active.last_transition_time, condition.last_transition_time);
  }
  const size_t unusable = missing.size() + inactive.size();
  if (unusable == 0) return active;
  if (unusable < config.clusters.size()) {
    active.reason = "SomeActiveClusters";  // still True
  } else {
    active.status = kConditionFalse;
    active.reason = "NoUsableClusters";
  }
  std::vector<std::string> parts;
  if (!missing.empty()) {
    parts.push_back(absl::StrCat("Missing clusters: ", GoList(missing)));
  }
  if (!inactive.empty()) {
    parts.push_back(absl::StrCat("Inactive clusters: ", GoList(inactive)));
  }
  active.message = absl::StrJoin(parts, ", ");
  return active;
}

void AdmissionState::SetMultiKueueClusterActive(const std::string& name,
                                                Condition active) {
  active.type = kConditionActive;
  auto it = multikueue_cluster_active_.find(name);
  if (it != multikueue_cluster_active_.end()) {
    if (it->second.status == active.status) {
      active.last_transition_time = it->second.last_transition_time;
    }
    if (it->second == active) return;
  }
  multikueue_cluster_active_[name] = std::move(active);
  // The checks naming it, and their ClusterQueues, may change.
  config_changed_ = true;
  needs_scheduling_ = true;
}

Condition AdmissionState::MultiKueueClusterActiveCondition(
    const MultiKueueCluster& cluster) const {
  auto it = multikueue_cluster_active_.find(cluster.meta.name);
  if (it != multikueue_cluster_active_.end()) return it->second;
  Condition condition{kConditionActive, kConditionFalse,
                      "ClientConnectionFailed", "not connected yet",
                      cluster.meta.creation_timestamp};
  if (cluster.location_type == kLocationTypeSecret) {
    condition.reason = "BadKubeConfig";
    condition.message = kMultiKueueSecretMessage;
  }
  return condition;
}

}  // namespace kq::admission
