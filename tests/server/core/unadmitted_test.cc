// UnadmittedReasonOf: the labels of Kueue's kueue_unadmitted_workloads gauge
// from a workload's conditions (getUnadmittedWorkloadStatus and
// resolveUnadmittedUnderlyingCause, pkg/cache/queue/unadmitted_workloads.go;
// KEP-10852's table of reason / underlying_cause pairs).

#include "server/core/unadmitted.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

#include "server/core/conditions.h"
#include "server/core/objects.h"
#include "tests/testing/builders.h"

namespace kq {

inline void PrintTo(const UnadmittedReason& r, std::ostream* os) {
  *os << "{reason=" << r.reason << " underlying_cause=" << r.underlying_cause
      << "}";
}

namespace {

using ::kq::testing::AdmissionBuilder;
using ::kq::testing::WorkloadBuilder;

struct Case {
  std::string name;
  Workload workload;
  std::optional<UnadmittedReason> want;
};

class UnadmittedReasonOfTest : public ::testing::TestWithParam<Case> {};

TEST_P(UnadmittedReasonOfTest, Labels) {
  EXPECT_EQ(UnadmittedReasonOf(GetParam().workload), GetParam().want);
}

Admission Cq() {
  return AdmissionBuilder("cq").Assign("cpu", "default", "1").Build();
}

INSTANTIATE_TEST_SUITE_P(
    Kueue, UnadmittedReasonOfTest,
    ::testing::ValuesIn(std::vector<Case>{
        // No conditions (UnadmittedWorkloadsExplicitStatus off): counted as
        // not reserved, pending evaluation.
        {.name = "new_workload",
         .workload = WorkloadBuilder("wl").Build(),
         .want = UnadmittedReason{kReasonNoReservation,
                                  kReasonPendingEvaluation}},
        // KEP-10852's table: NoReservation / WaitingForQuota.
        {.name = "waiting_for_quota",
         .workload = WorkloadBuilder("wl")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonWaitingForQuota, "insufficient")
                         .Condition(kConditionAdmitted, kConditionFalse,
                                    kReasonNoReservation, kMessageNoReservation)
                         .Build(),
         .want = UnadmittedReason{kReasonNoReservation,
                                  kReasonWaitingForQuota}},
        // NoReservation / Misconfigured.
        {.name = "misconfigured",
         .workload = WorkloadBuilder("wl")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonMisconfigured,
                                    "LocalQueue lq doesn't exist")
                         .Condition(kConditionAdmitted, kConditionFalse,
                                    kReasonNoReservation, kMessageNoReservation)
                         .Build(),
         .want = UnadmittedReason{kReasonNoReservation, kReasonMisconfigured}},
        // A QuotaReserved=False without Admitted yet: the reason falls back
        // to NoReservation.
        {.name = "quota_reserved_false_without_admitted",
         .workload = WorkloadBuilder("wl")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonDeactivated, kMessageDeactivated)
                         .Build(),
         .want = UnadmittedReason{kReasonNoReservation, kReasonDeactivated}},
        // Any reason is passed through, a legacy one too.
        {.name = "legacy_pending_reason",
         .workload = WorkloadBuilder("wl")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    "Pending", "")
                         .Build(),
         .want = UnadmittedReason{kReasonNoReservation, "Pending"}},
        // UnsatisfiedAdmissionChecks / "": quota reserved, so the reason is
        // the whole story.
        {.name = "unsatisfied_admission_checks",
         .workload = WorkloadBuilder("wl")
                         .ReserveQuota(Cq())
                         .Condition(kConditionAdmitted, kConditionFalse,
                                    kReasonUnsatisfiedAdmissionChecks,
                                    kMessageUnsatisfiedAdmissionChecks)
                         .Build(),
         .want = UnadmittedReason{kReasonUnsatisfiedAdmissionChecks, ""}},
        // Quota reserved, Admitted not written yet.
        {.name = "reserved_without_admitted",
         .workload = WorkloadBuilder("wl").ReserveQuota(Cq()).Build(),
         .want = UnadmittedReason{kReasonNoReservation, ""}},
        // PendingDelayedTopologyRequests / "" (TAS in Kueue).
        {.name = "pending_delayed_topology_requests",
         .workload = WorkloadBuilder("wl")
                         .ReserveQuota(Cq())
                         .Condition(kConditionAdmitted, kConditionFalse,
                                    kReasonPendingDelayedTopologyRequests,
                                    "There are pending delayed topology "
                                    "requests")
                         .Build(),
         .want = UnadmittedReason{kReasonPendingDelayedTopologyRequests, ""}},
        // Not counted: admitted, even while it is being evicted.
        {.name = "admitted",
         .workload = WorkloadBuilder("wl").Admitted(Cq()).Build()},
        {.name = "admitted_and_evicted",
         .workload = WorkloadBuilder("wl")
                         .Admitted(Cq())
                         .Condition(kConditionEvicted, kConditionTrue,
                                    kReasonPreempted, "Preempted")
                         .Build()},
        // Not counted: finished, admitted or not.
        {.name = "finished",
         .workload = WorkloadBuilder("wl")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonWaitingForQuota, "insufficient")
                         .Finished("Failed")
                         .Build()},
        // Counted again once the eviction released the quota.
        {.name = "evicted_and_released",
         .workload = WorkloadBuilder("wl")
                         .Condition(kConditionEvicted, kConditionTrue,
                                    kReasonPreempted, "Preempted")
                         .Condition(kConditionQuotaReserved, kConditionFalse,
                                    kReasonPendingEvaluation, "Preempted")
                         .Condition(kConditionAdmitted, kConditionFalse,
                                    kReasonNoReservation, kMessageNoReservation)
                         .Build(),
         .want = UnadmittedReason{kReasonNoReservation,
                                  kReasonPendingEvaluation}},
    }),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kq
