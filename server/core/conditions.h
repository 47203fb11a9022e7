#pragma once

// Kueue's workload vocabulary: the condition types, statuses and reasons it
// writes on a Workload and the states of an admission check, under the names
// of kueue.x-k8s.io/v1beta1 (apis/kueue/v1beta1/workload_types.go,
// admissioncheck_types.go). Conditions stay strings because they are what
// users, the API and the store read and write; the logic names them only
// through these constants, so a misspelt reason fails to compile instead of
// silently never matching.

namespace kq {

// metav1.ConditionStatus.
inline constexpr char kConditionTrue[] = "True";
inline constexpr char kConditionFalse[] = "False";

// Workload condition types (WorkloadQuotaReserved, ...).
inline constexpr char kConditionQuotaReserved[] = "QuotaReserved";
inline constexpr char kConditionAdmitted[] = "Admitted";
inline constexpr char kConditionFinished[] = "Finished";
inline constexpr char kConditionEvicted[] = "Evicted";
inline constexpr char kConditionPreempted[] = "Preempted";
inline constexpr char kConditionRequeued[] = "Requeued";
// ClusterQueue, LocalQueue and AdmissionCheck condition type.
inline constexpr char kConditionActive[] = "Active";

// QuotaReserved reasons. kq writes "Pending" where Kueue's scheduler leaves
// the reason empty (a condition without a reason is not valid metav1).
inline constexpr char kReasonQuotaReserved[] = "QuotaReserved";
inline constexpr char kReasonPending[] = "Pending";
inline constexpr char kReasonPendingEvaluation[] = "PendingEvaluation";
// Pending reasons of a workload whose queue cannot take it (Kueue's
// queue manager: the LocalQueue or ClusterQueue is missing, inactive or its
// namespace does not match; or the queue is held by its stopPolicy).
inline constexpr char kReasonMisconfigured[] = "Misconfigured";
inline constexpr char kReasonSuspended[] = "Suspended";

// Admitted reasons.
inline constexpr char kReasonAdmitted[] = "Admitted";
inline constexpr char kReasonNoReservation[] = "NoReservation";
inline constexpr char kReasonUnsatisfiedAdmissionChecks[] =
    "UnsatisfiedAdmissionChecks";

// Evicted reasons (WorkloadEvictedBy...), also Requeued=False's.
inline constexpr char kReasonPreempted[] = "Preempted";
inline constexpr char kReasonPodsReadyTimeout[] = "PodsReadyTimeout";
inline constexpr char kReasonAdmissionCheck[] = "AdmissionCheck";
inline constexpr char kReasonClusterQueueStopped[] = "ClusterQueueStopped";
inline constexpr char kReasonLocalQueueStopped[] = "LocalQueueStopped";
inline constexpr char kReasonNodeFailures[] = "NodeFailures";
inline constexpr char kReasonDeactivated[] = "Deactivated";
// WorkloadDeactivated + "DueTo" + the deactivation target's reason.
inline constexpr char kReasonDeactivatedDueToAdmissionCheck[] =
    "DeactivatedDueToAdmissionCheck";

// Requeued=True reasons.
inline constexpr char kReasonReactivated[] = "Reactivated";
inline constexpr char kReasonBackoffFinished[] = "BackoffFinished";
inline constexpr char kReasonClusterQueueRestarted[] = "ClusterQueueRestarted";
inline constexpr char kReasonLocalQueueRestarted[] = "LocalQueueRestarted";

// Admission check states (CheckStatePending, ...).
inline constexpr char kCheckStatePending[] = "Pending";
inline constexpr char kCheckStateReady[] = "Ready";
inline constexpr char kCheckStateRetry[] = "Retry";
inline constexpr char kCheckStateRejected[] = "Rejected";

}  // namespace kq
