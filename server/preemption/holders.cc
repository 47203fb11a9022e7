#include "server/preemption/holders.h"

#include <algorithm>
#include <atomic>

namespace kq::preemption {

HoldingQuota::HoldingQuota(absl::Span<const Workload* const> holding_quota) {
  for (const Workload* workload : holding_quota) Add(workload);
}

namespace {

// Process-wide, so that versions of different indexes never collide.
uint64_t NextClusterQueueVersion() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void HoldingQuota::Add(const Workload* workload) {
  if (workload == nullptr || !workload->admission.has_value()) return;
  ClusterQueueHolders& holders =
      by_cluster_queue_[workload->admission->cluster_queue];
  holders.workloads.push_back(workload);
  holders.version = NextClusterQueueVersion();
  ++size_;
}

void HoldingQuota::Remove(const Workload* workload,
                          absl::string_view cluster_queue) {
  auto it = by_cluster_queue_.find(cluster_queue);
  if (it == by_cluster_queue_.end()) return;
  std::vector<const Workload*>& workloads = it->second.workloads;
  auto pos = std::find(workloads.begin(), workloads.end(), workload);
  if (pos == workloads.end()) return;
  workloads.erase(pos);
  it->second.version = NextClusterQueueVersion();
  --size_;
}

absl::Span<const Workload* const> HoldingQuota::InClusterQueue(
    absl::string_view cluster_queue) const {
  auto it = by_cluster_queue_.find(cluster_queue);
  if (it == by_cluster_queue_.end()) return {};
  return it->second.workloads;
}

uint64_t HoldingQuota::VersionOf(absl::string_view cluster_queue) const {
  auto it = by_cluster_queue_.find(cluster_queue);
  return it == by_cluster_queue_.end() ? 0 : it->second.version;
}

}  // namespace kq::preemption
