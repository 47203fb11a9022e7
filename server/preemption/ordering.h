#pragma once

// Kueue's order in which preemption candidates are tried
// (pkg/scheduler/preemption/common/ordering.go: CandidatesOrdering), "who is
// preempted first". Pure; thread-safe.
//
// Example:
//   std::sort(candidates.begin(), candidates.end(),
//             CandidatesOrdering(cq.name(), now, features));

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/core/objects.h"
#include "server/preemption/priority.h"

namespace kq::preemption {

// A workload holding quota that preemption may evict (the parts of Kueue's
// workload.Info the ordering reads). Does not own the workload, which must
// outlive it. Value type.
struct Candidate {
  const Workload* workload = nullptr;
  // The ClusterQueue whose quota it holds (its admission's); empty when it
  // holds none. Views a name that outlives the candidate (the Cache's or
  // the workload's own).
  absl::string_view cluster_queue;
  // The admission-fair-sharing usage of its LocalQueue, set only when AFS
  // applies to its ClusterQueue (Kueue's LocalQueueFSUsage).
  std::optional<double> local_queue_usage;
};

// Kueue's CandidatesOrdering as a three-way comparison: negative when `a`
// is to be preempted before `b`, positive when after, 0 when Kueue cannot
// tell them apart. The criteria, in order:
//   1. Evicted=True workloads first;
//   2. workloads of ClusterQueues other than `preemptor_cluster_queue`
//      first;
//   3. with features.admission_fair_sharing, between two workloads of the
//      same ClusterQueue from different LocalQueues that both have a usage:
//      higher LocalQueue usage first;
//   4. lower EffectivePriority() first;
//   5. most recent quota reservation first (the QuotaReserved=True
//      condition's last transition; `now` when the workload has none);
//   6. UID, in byte order.
int CompareCandidates(const Candidate& a, const Candidate& b,
                      absl::string_view preemptor_cluster_queue, absl::Time now,
                      const Features& features);

// A strict weak ordering for std::sort built on CompareCandidates(), made
// total (as kq's orders must be) by namespace and name after the UID, which
// only decides where Kueue's own order leaves a tie. Value type.
class CandidatesOrdering {
 public:
  CandidatesOrdering(std::string preemptor_cluster_queue, absl::Time now,
                     Features features)
      : preemptor_cluster_queue_(std::move(preemptor_cluster_queue)),
        now_(now),
        features_(features) {}

  // Whether `a` is to be preempted before `b`.
  bool operator()(const Candidate& a, const Candidate& b) const;

 private:
  std::string preemptor_cluster_queue_;
  absl::Time now_;
  Features features_;
};

// Whether the workload has Evicted=True (Kueue's workloadevict.IsEvicted).
bool IsEvicted(const Workload& workload);

// When the workload reserved quota: the QuotaReserved=True condition's last
// transition, or `now` without one (Kueue's quotaReservationTime).
absl::Time QuotaReservationTime(const Workload& workload, absl::Time now);

}  // namespace kq::preemption
