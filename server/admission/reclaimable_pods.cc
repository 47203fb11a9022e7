// status.reclaimablePods: Kueue's webhook checks and the quota a workload
// gives back when some of its pods are done.

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/admission/internal.h"
#include "server/admission/state.h"
#include "server/core/validation.h"

namespace kq::admission {

absl::StatusOr<Workload> AdmissionState::SetReclaimablePods(
    const NamespacedName& key, const std::vector<ReclaimablePod>& pods,
    absl::Time now) {
  Workload* found = workloads_.FindMutable(key);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = *found;
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

}  // namespace kq::admission
