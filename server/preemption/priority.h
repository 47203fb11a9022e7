#pragma once

// Workload priorities as Kueue's preemption compares them
// (pkg/util/priority): the base priority plus, when the PriorityBoost
// feature gate is on, the int32 of the "kueue.x-k8s.io/priority-boost"
// annotation. Pure functions over core values; thread-safe.
//
// Example:
//   Features features{.priority_boost = true};
//   int64_t p = EffectivePriority(workload, features);

#include <cstdint>

#include "absl/status/statusor.h"

#include "server/core/objects.h"

namespace kq::preemption {

// The annotation whose int32 value Kueue adds to a workload's priority
// (defined with the other workload names in server/core/objects.h).
using ::kq::kPriorityBoostAnnotation;

// Kueue feature gates that change how preemption compares and chooses
// workloads. Each defaults to Kueue's default for the gate it models (at
// the Kueue version kq follows). Value type.
struct Features {
  // PriorityBoost (alpha, off): honour the priority-boost annotation.
  bool priority_boost = false;
  // AdmissionFairSharing (Kueue's afsEnabled): within one ClusterQueue,
  // candidates from LocalQueues with more fair-sharing usage go first.
  bool admission_fair_sharing = false;
  // FairSharingPreemptWithinNominal (beta, on): in fair-sharing
  // preemption, a preemptor ClusterQueue within nominal quota on the
  // contested flavor-resources (its workload counted) reclaims from
  // borrowing ClusterQueues without the fair-sharing strategies.
  bool fair_sharing_preempt_within_nominal = true;
};

// Kueue's priority.Priority: the workload's spec priority (kq resolves the
// priority class when the workload is created, so it is never absent).
int32_t BasePriority(const Workload& workload);

// Kueue's priority.PriorityBoost: 0 when the gate is off or the annotation
// is absent or empty; otherwise the annotation parsed as a decimal int32 the
// way Go's strconv.ParseInt(value, 10, 32) does (optional sign, digits
// only). Returns InvalidArgument when the annotation is not such a number.
absl::StatusOr<int32_t> PriorityBoost(const Workload& workload,
                                      const Features& features);

// A workload's priority split as Kueue reports it in preemption events
// (priorityInfo). Value type.
struct PriorityInfo {
  int64_t effective = 0;
  int32_t base = 0;
  int32_t boost = 0;
  friend bool operator==(const PriorityInfo&, const PriorityInfo&) = default;
};

// Kueue's priorityInfo: base, boost and their int64 sum; an invalid boost
// annotation counts as 0, as Kueue's EffectivePriority does.
PriorityInfo PriorityInfoOf(const Workload& workload, const Features& features);

// Kueue's priority.EffectivePriority: BasePriority() plus PriorityBoost(),
// in int64 so that the sum never overflows; an invalid boost counts as 0.
int64_t EffectivePriority(const Workload& workload, const Features& features);

}  // namespace kq::preemption
