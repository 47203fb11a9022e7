#include "server/core/unadmitted.h"

#include "server/core/conditions.h"

namespace kq {

std::optional<UnadmittedReason> UnadmittedReasonOf(const Workload& workload) {
  // workload.IsAdmitted, workloadfinish.IsFinished.
  if (IsConditionTrue(workload.conditions, kConditionAdmitted) ||
      IsConditionTrue(workload.conditions, kConditionFinished)) {
    return std::nullopt;
  }
  UnadmittedReason out;
  const Condition* admitted =
      FindCondition(workload.conditions, kConditionAdmitted);
  // Without UnadmittedWorkloadsExplicitStatus a new workload has no
  // conditions: Kueue counts it as NoReservation.
  out.reason = admitted != nullptr ? admitted->reason : kReasonNoReservation;
  const Condition* reserved =
      FindCondition(workload.conditions, kConditionQuotaReserved);
  if (reserved == nullptr) {
    // Not evaluated yet (or its conditions not written yet).
    out.underlying_cause = kReasonPendingEvaluation;
  } else if (reserved->status != kConditionTrue) {
    out.underlying_cause = reserved->reason;
  }
  return out;
}

}  // namespace kq
