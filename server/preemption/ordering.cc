#include "server/preemption/ordering.h"

#include <cstdint>
#include <tuple>

namespace kq::preemption {
namespace {

// Go's cmp.Compare for ordered values.
template <typename T>
int Compare(const T& a, const T& b) {
  if (a < b) return -1;
  if (b < a) return 1;
  return 0;
}

// Kueue's cmputil.CompareBool: true sorts before false.
int CompareBool(bool a, bool b) {
  if (a == b) return 0;
  return a ? -1 : 1;
}

// Kueue's resourceUsagePreemptionEnabled: LocalQueue usage only separates
// workloads of one ClusterQueue submitted through different LocalQueues,
// and only when both have a usage (AFS is on for that ClusterQueue).
bool LocalQueueUsageApplies(const Candidate& a, const Candidate& b) {
  return a.cluster_queue == b.cluster_queue &&
         a.workload->queue_name != b.workload->queue_name &&
         a.local_queue_usage.has_value() && b.local_queue_usage.has_value();
}

}  // namespace

bool IsEvicted(const Workload& workload) {
  return IsConditionTrue(workload.conditions, kConditionEvicted);
}

absl::Time QuotaReservationTime(const Workload& workload, absl::Time now) {
  const Condition* reserved =
      FindCondition(workload.conditions, kConditionQuotaReserved);
  // Without the condition yet, Kueue treats the reservation as happening
  // now, the most recent possible.
  if (reserved == nullptr || reserved->status != "True") return now;
  return reserved->last_transition_time;
}

int CompareCandidates(const Candidate& a, const Candidate& b,
                      absl::string_view preemptor_cluster_queue, absl::Time now,
                      const Features& features) {
  if (int c = CompareBool(IsEvicted(*a.workload), IsEvicted(*b.workload));
      c != 0) {
    return c;
  }
  if (int c = CompareBool(b.cluster_queue == preemptor_cluster_queue,
                          a.cluster_queue == preemptor_cluster_queue);
      c != 0) {
    return c;
  }
  if (features.admission_fair_sharing && LocalQueueUsageApplies(a, b)) {
    if (int c = Compare(*b.local_queue_usage, *a.local_queue_usage); c != 0) {
      return c;
    }
  }
  if (int c = Compare(EffectivePriority(*a.workload, features),
                      EffectivePriority(*b.workload, features));
      c != 0) {
    return c;
  }
  if (int c = Compare(QuotaReservationTime(*b.workload, now),
                      QuotaReservationTime(*a.workload, now));
      c != 0) {
    return c;
  }
  return Compare(a.workload->meta.uid, b.workload->meta.uid);
}

bool CandidatesOrdering::operator()(const Candidate& a,
                                    const Candidate& b) const {
  if (int c =
          CompareCandidates(a, b, preemptor_cluster_queue_, now_, features_);
      c != 0) {
    return c < 0;
  }
  return std::tie(a.workload->meta.namespace_name, a.workload->meta.name) <
         std::tie(b.workload->meta.namespace_name, b.workload->meta.name);
}

}  // namespace kq::preemption
