#include "server/preemption/holders.h"

#include <algorithm>

namespace kq::preemption {

HoldingQuota::HoldingQuota(absl::Span<const Workload* const> holding_quota) {
  for (const Workload* workload : holding_quota) Add(workload);
}

void HoldingQuota::Add(const Workload* workload) {
  if (workload == nullptr || !workload->admission.has_value()) return;
  by_cluster_queue_[workload->admission->cluster_queue].push_back(workload);
  ++size_;
  ++version_;
}

void HoldingQuota::Remove(const Workload* workload,
                          absl::string_view cluster_queue) {
  auto it = by_cluster_queue_.find(cluster_queue);
  if (it == by_cluster_queue_.end()) return;
  auto pos = std::find(it->second.begin(), it->second.end(), workload);
  if (pos == it->second.end()) return;
  it->second.erase(pos);
  --size_;
  ++version_;
}

absl::Span<const Workload* const> HoldingQuota::InClusterQueue(
    absl::string_view cluster_queue) const {
  auto it = by_cluster_queue_.find(cluster_queue);
  if (it == by_cluster_queue_.end()) return {};
  return it->second;
}

}  // namespace kq::preemption
