#pragma once

// The workloads holding quota, indexed by the ClusterQueue whose quota they
// hold: what every preemption search walks. Built once per scheduling run
// and kept up to date as admissions and evictions happen, so a search costs
// what it visits, not the number of workloads holding quota.
//
// Example:
//   HoldingQuota holders(all_holding_workloads);
//   for (const Workload* w : holders.InClusterQueue("team-a")) ...
//   holders.Add(&just_admitted);
//   holders.Remove(&just_released);

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "server/core/objects.h"

namespace kq::preemption {

// Does not own the workloads, which must outlive it (or be removed first).
// Within a ClusterQueue, workloads keep the order they were added in.
// Thread-compatible.
class HoldingQuota {
 public:
  HoldingQuota() = default;
  // Workloads without an admission (or null) are ignored.
  explicit HoldingQuota(absl::Span<const Workload* const> holding_quota);

  // Indexes `workload` under its admission's ClusterQueue; ignored without
  // an admission.
  void Add(const Workload* workload);
  // Removes `workload` from the ClusterQueue `cluster_queue` it was added
  // under (its admission may have been cleared since). No-op when absent.
  void Remove(const Workload* workload, absl::string_view cluster_queue);

  absl::Span<const Workload* const> InClusterQueue(
      absl::string_view cluster_queue) const;

  size_t size() const { return size_; }
  // Moves with every Add and Remove that changes InClusterQueue(
  // cluster_queue), so that what is computed from that list can tell when
  // it is outdated. 0 for a ClusterQueue that never held a workload; no
  // other value is taken twice by any HoldingQuota of the process, so a
  // value kept across indexes cannot match a list it was not read from.
  uint64_t VersionOf(absl::string_view cluster_queue) const;

 private:
  struct ClusterQueueHolders {
    std::vector<const Workload*> workloads;
    uint64_t version = 0;
  };
  absl::flat_hash_map<std::string, ClusterQueueHolders> by_cluster_queue_;
  size_t size_ = 0;
};

}  // namespace kq::preemption
