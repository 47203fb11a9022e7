#pragma once

// Kueue's preemption policy predicate
// (pkg/scheduler/preemption/common/preemption_policy.go). Pure; thread-safe.
//
// Example:
//   if (SatisfiesPreemptionPolicy(preemptor, candidate,
//                                 cq.spec.preemption.within_cluster_queue,
//                                 features)) { ... }

#include <cstdint>

#include "absl/strings/string_view.h"

#include "server/core/objects.h"
#include "server/preemption/priority.h"

namespace kq::preemption {

// Kueue's PreemptionPolicy values (server/core/objects.h).
using ::kq::kPolicyAny;
using ::kq::kPolicyLowerOrNewerEqualPriority;
using ::kq::kPolicyLowerPriority;
using ::kq::kPolicyNever;

// Whether `policy` lets `preemptor` preempt `candidate`, comparing effective
// priorities (EffectivePriority):
//   Never: never; Any: always;
//   LowerPriority: the candidate's priority is lower;
//   LowerOrNewerEqualPriority: lower, or equal with the candidate strictly
//     newer by kq::QueueOrderTimestamp() (Kueue's
//     workload.Ordering.GetQueueOrderTimestamp).
// Any other value is treated as Never, as Kueue does.
bool SatisfiesPreemptionPolicy(const Workload& preemptor,
                               const Workload& candidate,
                               absl::string_view policy,
                               const Features& features);
// The same with both effective priorities already read, for a search that
// asks it of every candidate.
bool SatisfiesPreemptionPolicy(const Workload& preemptor,
                               int64_t preemptor_priority,
                               const Workload& candidate,
                               int64_t candidate_priority,
                               absl::string_view policy);

}  // namespace kq::preemption
