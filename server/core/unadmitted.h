#pragma once

// Why a workload is not admitted, in the two labels of Kueue's
// kueue_unadmitted_workloads{cluster_queue, reason, underlying_cause} gauge
// (KEP-10852; the UnadmittedWorkloadsObservability gate, on by default at
// Kueue's HEAD). Kueue derives them from the workload's conditions alone:
// pkg/cache/queue/unadmitted_workloads.go, getUnadmittedWorkloadStatus and
// resolveUnadmittedUnderlyingCause. The cluster_queue label is the
// ClusterQueue the workload's LocalQueue points to (see
// admission::AdmissionState::UnadmittedWorkloadCounts).

#include <compare>
#include <optional>
#include <string>

#include "server/core/objects.h"

namespace kq {

struct UnadmittedReason {
  // The Admitted condition's reason: NoReservation,
  // UnsatisfiedAdmissionChecks (or Kueue's TAS-only
  // PendingDelayedTopologyRequests); NoReservation while the workload has no
  // Admitted condition yet.
  std::string reason;
  // With reason NoReservation, the QuotaReserved=False reason
  // (PendingEvaluation while there is no QuotaReserved condition yet);
  // empty while quota is reserved (QuotaReserved=True), where `reason` is
  // the whole story.
  std::string underlying_cause;

  friend auto operator<=>(const UnadmittedReason&,
                          const UnadmittedReason&) = default;
};

// The labels Kueue's kueue_unadmitted_workloads gauge counts `workload`
// under, or nullopt when Kueue does not count it: Admitted=True, or
// Finished=True. (Kueue also leaves out workloads being deleted and
// Concurrent Admission variants, which kq does not have.) Pure: reads only
// the workload's conditions.
std::optional<UnadmittedReason> UnadmittedReasonOf(const Workload& workload);

}  // namespace kq
