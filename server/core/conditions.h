#pragma once

// Kueue's workload vocabulary: the condition types, statuses and reasons it
// writes on a Workload and the states of an admission check, under the names
// of kueue.x-k8s.io/v1beta1 (apis/kueue/v1beta1/workload_types.go,
// admissioncheck_types.go; the KEP-10852 reasons are named only in
// apis/kueue/v1beta2/workload_types.go, and the status Kueue writes carries
// them whichever version is read). Conditions stay strings because they are
// what users, the API and the store read and write; the logic names them only
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

// QuotaReserved reasons. kq follows Kueue with its default gates at HEAD
// (UnadmittedWorkloadsObservability on since it went Beta,
// UnadmittedWorkloadsExplicitStatus off): QuotaReserved=False carries one
// of KEP-10852's tiered reasons (apis/kueue/v1beta2/workload_types.go, the
// WorkloadQuotaReservedReason* constants), never the deprecated "Pending",
// "Inadmissible" or "Waiting". Lower tiers win (see
// admission::AdmissionState's SyncUnreservedConditions and the flavor
// assigner's reason severity).
inline constexpr char kReasonQuotaReserved[] = "QuotaReserved";
// Blocking tier, independent of flavors, in Kueue's precedence order.
// WorkloadDeactivated (also an Evicted reason): spec.active is false.
inline constexpr char kReasonDeactivated[] = "Deactivated";
// WorkloadOnHold: the reservation was released on purpose (StatefulSet
// scale to zero in Kueue); kq has no such integration and never writes it.
inline constexpr char kReasonOnHold[] = "OnHold";
// WorkloadQuotaReservedReasonMisconfigured: the LocalQueue or ClusterQueue
// does not exist, or the namespace does not match the ClusterQueue's
// namespaceSelector.
inline constexpr char kReasonMisconfigured[] = "Misconfigured";
// WorkloadQuotaReservedReasonNoMatchingFlavor: no flavor's taints or node
// labels suit the workload, or no flavor provides a resource it asks for.
inline constexpr char kReasonNoMatchingFlavor[] = "NoMatchingFlavor";
// WorkloadQuotaReservedReasonSuspended: the LocalQueue or ClusterQueue is
// stopped (stopPolicy) or inactive.
inline constexpr char kReasonSuspended[] = "Suspended";
// WorkloadAdmissionGated: the kueue.x-k8s.io/admission-gated-by annotation
// (Kueue's AdmissionGatedBy gate); kq has no admission gates.
inline constexpr char kReasonAdmissionGated[] = "AdmissionGated";
// WorkloadQuotaReservedReasonWaitingForPodsReady: waitForPodsReady with
// blockAdmission holds new admissions; kq has no PodsReady yet.
inline constexpr char kReasonWaitingForPodsReady[] = "WaitingForPodsReady";
// Capacity tier, for the flavors the scheduler nominated, most severe first.
// WorkloadQuotaReservedReasonExceedsMaxQuota: more than the ClusterQueue
// (nominal + borrowingLimit) or its cohort could ever give.
inline constexpr char kReasonExceedsMaxQuota[] = "ExceedsMaxQuota";
// WorkloadQuotaReservedReasonWaitingForQuota: not enough unused quota now.
inline constexpr char kReasonWaitingForQuota[] = "WaitingForQuota";
// WorkloadQuotaReservedReasonTopologyPlacementFailed: TAS only; kq has no
// topology-aware scheduling and never writes it.
inline constexpr char kReasonTopologyPlacementFailed[] =
    "TopologyPlacementFailed";
// WorkloadQuotaReservedReasonWaitingForPreemptedWorkloads: preemptions were
// issued; waiting for the victims to release their quota.
inline constexpr char kReasonWaitingForPreemptedWorkloads[] =
    "WaitingForPreemptedWorkloads";
// WorkloadQuotaReservedReasonPendingEvaluation: queued, not evaluated yet
// (also after an eviction, and for a head with failed admission checks).
inline constexpr char kReasonPendingEvaluation[] = "PendingEvaluation";

// Kueue's fixed QuotaReserved=False messages (the workload controller's).
inline constexpr char kMessageDeactivated[] = "The workload is deactivated";
inline constexpr char kMessagePendingEvaluation[] =
    "Workload is pending evaluation in the scheduling queue";

// Admitted reasons (WorkloadAdmittedReason*; Kueue's SyncAdmittedCondition).
inline constexpr char kReasonAdmitted[] = "Admitted";
// No quota reservation, whatever the admission checks say (KEP-10852 drops
// the old NoReservationUnsatisfiedChecks).
inline constexpr char kReasonNoReservation[] = "NoReservation";
// Quota reserved, some admission check not Ready.
inline constexpr char kReasonUnsatisfiedAdmissionChecks[] =
    "UnsatisfiedAdmissionChecks";
// Quota reserved, delayed topology requests pending (TAS; kq never writes
// it).
inline constexpr char kReasonPendingDelayedTopologyRequests[] =
    "PendingDelayedTopologyRequests";
inline constexpr char kMessageAdmitted[] = "The workload is admitted";
inline constexpr char kMessageNoReservation[] =
    "The workload has no reservation";
inline constexpr char kMessageUnsatisfiedAdmissionChecks[] =
    "The workload has not all checks ready";

// Evicted reasons (WorkloadEvictedBy...), also Requeued=False's.
inline constexpr char kReasonPreempted[] = "Preempted";
inline constexpr char kReasonPodsReadyTimeout[] = "PodsReadyTimeout";
inline constexpr char kReasonAdmissionCheck[] = "AdmissionCheck";
inline constexpr char kReasonClusterQueueStopped[] = "ClusterQueueStopped";
inline constexpr char kReasonLocalQueueStopped[] = "LocalQueueStopped";
inline constexpr char kReasonNodeFailures[] = "NodeFailures";
// (kReasonDeactivated, above, is also an Evicted reason.)
// WorkloadDeactivated + "DueTo" + the deactivation target's reason.
inline constexpr char kReasonDeactivatedDueToAdmissionCheck[] =
    "DeactivatedDueToAdmissionCheck";
// A MultiKueue worker's copy deactivated because its manager evicted the
// workload (Kueue's DeactivationTarget with cause EvictedOnManagerCluster,
// ReasonWithCause "%sDueTo%s").
inline constexpr char kReasonDeactivatedDueToEvictedOnManagerCluster[] =
    "DeactivatedDueToEvictedOnManagerCluster";
// kq: a fenced MultiKueue copy whose manager stopped renewing its lease
// (lease mode), evicted and deactivated by the worker itself.
inline constexpr char kReasonManagerLost[] = "ManagerLost";

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
