// Reads: ClusterQueue and LocalQueue status as Kueue's queue reconcilers
// compute it, and a workload's view with its placements and position.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "server/admission/state.h"
#include "server/cache/fair_sharing.h"
#include "server/core/unadmitted.h"

namespace kq::admission {

namespace {

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
  } else if (const auto* cluster = std::get_if<MultiKueueCluster>(&object)) {
    view.conditions.push_back(MultiKueueClusterActiveCondition(*cluster));
  }
  return view;
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
        kConditionActive, cq->active ? kConditionTrue : kConditionFalse,
        cq->active_reason, cq->active_message, spec.meta.creation_timestamp});
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

Condition AdmissionState::LocalQueueActiveCondition(
    const LocalQueue& lq) const {
  const cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(lq.cluster_queue);
  if (lq.stop_policy != StopPolicy::kNone) {
    return {kConditionActive, kConditionFalse, "Stopped",
            "LocalQueue is stopped", lq.meta.creation_timestamp};
  }
  if (cq == nullptr) {
    return {kConditionActive, kConditionFalse, "ClusterQueueDoesNotExist",
            "Can't submit new workloads to clusterQueue",
            lq.meta.creation_timestamp};
  }
  if (!cq->active) {
    return {kConditionActive, kConditionFalse, "ClusterQueueIsInactive",
            "Can't submit new workloads to clusterQueue",
            lq.meta.creation_timestamp};
  }
  return {kConditionActive, kConditionTrue, "Ready",
          "Can submit new workloads to localQueue", lq.meta.creation_timestamp};
}

QueueStatus AdmissionState::LocalQueueStatusOf(const LocalQueue& lq) const {
  QueueStatus status;
  const cache::ClusterQueueSnapshot* cq =
      cache_.FindClusterQueue(lq.cluster_queue);
  status.conditions.push_back(LocalQueueActiveCondition(lq));
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

std::map<UnadmittedReason, int64_t> AdmissionState::UnadmittedWorkloadCounts(
    const std::string& cluster_queue) const {
  std::map<UnadmittedReason, int64_t> counts;
  for (const Workload& wl : workloads_) {
    auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
    if (lq == local_queues_.end() ||
        lq->second.cluster_queue != cluster_queue) {
      continue;
    }
    if (std::optional<UnadmittedReason> why = UnadmittedReasonOf(wl)) {
      ++counts[*std::move(why)];
    }
  }
  return counts;
}

std::map<std::string, std::map<UnadmittedReason, int64_t>>
AdmissionState::UnadmittedWorkloadCounts() const {
  std::map<std::string, std::map<UnadmittedReason, int64_t>> counts;
  for (const Workload& wl : workloads_) {
    auto lq = local_queues_.find({wl.meta.namespace_name, wl.queue_name});
    if (lq == local_queues_.end()) continue;
    if (std::optional<UnadmittedReason> why = UnadmittedReasonOf(wl)) {
      ++counts[lq->second.cluster_queue][*std::move(why)];
    }
  }
  return counts;
}

}  // namespace kq::admission
