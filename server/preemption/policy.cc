#include "server/preemption/policy.h"

#include <cstdint>

namespace kq::preemption {

bool SatisfiesPreemptionPolicy(const Workload& preemptor,
                               const Workload& candidate,
                               absl::string_view policy,
                               const Features& features) {
  return SatisfiesPreemptionPolicy(
      preemptor, EffectivePriority(preemptor, features), candidate,
      EffectivePriority(candidate, features), policy);
}

bool SatisfiesPreemptionPolicy(const Workload& preemptor,
                               int64_t preemptor_priority,
                               const Workload& candidate,
                               int64_t candidate_priority,
                               absl::string_view policy) {
  const bool lower_priority = preemptor_priority > candidate_priority;
  if (policy == kPolicyLowerPriority) return lower_priority;
  if (policy == kPolicyLowerOrNewerEqualPriority) {
    // Go's Time.Before: strictly earlier, so equal timestamps do not count.
    const bool newer_equal_priority =
        preemptor_priority == candidate_priority &&
        QueueOrderTimestamp(preemptor) < QueueOrderTimestamp(candidate);
    return lower_priority || newer_equal_priority;
  }
  return policy == kPolicyAny;
}

}  // namespace kq::preemption
