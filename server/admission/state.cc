// AdmissionState's loading, its workload table and the change log: what
// every other part of the state builds on.

#include "server/admission/state.h"

#include <utility>

namespace kq::admission {

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
  multikueue_configs_.clear();
  multikueue_clusters_.clear();
  namespaces_.clear();
  // Queued keys point at workloads: the queues go first.
  queues_ = queue::Manager();
  workloads_.Clear();
  nominations_.Clear();
  requeued_trees_.clear();
  last_assignments_.clear();
  timed_workloads_.clear();
  marked_since_index_.clear();
  holders_ = preemption::HoldingQuota();
  preemption_memo_.Clear();
  change_log_.Clear();
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
        } else if constexpr (std::is_same_v<T, MultiKueueConfig>) {
          multikueue_configs_[key.name] = o;
        } else if constexpr (std::is_same_v<T, MultiKueueCluster>) {
          multikueue_clusters_[key.name] = o;
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

Workload& AdmissionState::PutWorkload(const NamespacedName& key,
                                      Workload workload) {
  // A queued workload keeps its uid (the queue orders by it); a new one of
  // the same name leaves the queue first.
  if (const Workload* held = workloads_.Find(key);
      held != nullptr && held->meta.uid != workload.meta.uid) {
    queues_.Remove(key);
  }
  return workloads_.Put(key, std::move(workload));
}

void AdmissionState::ResolvePriorities() {
  for (const Workload& held : workloads_) {
    Workload& wl = Mutable(held);
    if (wl.priority != 0 || wl.priority_class_name.empty()) continue;
    auto wpc = priority_classes_.find(wl.priority_class_name);
    if (wpc != priority_classes_.end()) wl.priority = wpc->second.value;
  }
}

const Workload* AdmissionState::FindWorkload(const NamespacedName& key) const {
  return workloads_.Find(key);
}

const Workload* AdmissionState::FindRecentlyFinished(
    const NamespacedName& key) const {
  return change_log_.FindFinished(key);
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
  wl.remote.reset();
  wl.multikueue.reset();
  ResolvePriority(wl);
  Workload& stored = PutWorkload(key, std::move(wl));
  MarkWorkload(key, Change::kAdded);
  EnqueueOrBlock(stored, now);
  needs_scheduling_ = true;
  return stored;
}

Changes AdmissionState::TakeChanges() { return change_log_.Take(workloads_); }

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
    case ObjectKind::kMultiKueueConfig:
      multikueue_configs_[key.name].meta.revision = revision;
      break;
    case ObjectKind::kMultiKueueCluster:
      multikueue_clusters_[key.name].meta.revision = revision;
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
  Workload* wl = workloads_.FindMutable(key);
  if (wl == nullptr) return nullptr;
  wl->meta.revision = revision;
  return wl;
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

void AdmissionState::SetPendingCondition(Workload& wl,
                                         const std::string& reason,
                                         const std::string& message,
                                         absl::Time now) {
  const Condition* current =
      FindCondition(wl.conditions, kConditionQuotaReserved);
  const Condition* admitted = FindCondition(wl.conditions, kConditionAdmitted);
  // Kueue's SyncAdmittedCondition after the write: with the
  // UnadmittedWorkloadsObservability gate, Admitted=False NoReservation
  // whenever QuotaReserved is there.
  const bool admitted_current = admitted != nullptr &&
                                admitted->status == kConditionFalse &&
                                admitted->reason == kReasonNoReservation &&
                                admitted->message == kMessageNoReservation;
  if (current != nullptr && current->status == kConditionFalse &&
      current->reason == reason && current->message == message &&
      admitted_current) {
    return;
  }
  const NamespacedName key = KeyOf(wl);
  if (admitted_current) {
    // Only QuotaReserved changes: the change log may find it changed back.
    change_log_.MarkPendingCondition(key, current);
    marked_since_index_.push_back(key);
  } else {
    MarkWorkload(key, Change::kModified);
  }
  SetCondition(&wl.conditions,
               Condition{kConditionQuotaReserved, kConditionFalse, reason,
                         message, now});
  if (!admitted_current) {
    SetCondition(&wl.conditions,
                 Condition{kConditionAdmitted, kConditionFalse,
                           kReasonNoReservation, kMessageNoReservation, now});
  }
}

void AdmissionState::MarkWorkload(const NamespacedName& key, Change change) {
  change_log_.MarkWorkload(key, change);
  marked_since_index_.push_back(key);
}

const ConfigObject* AdmissionState::FindObject(const ObjectKey& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

}  // namespace kq::admission
