#pragma once

// Kueue's workload predicates (pkg/workload/workload.go and
// pkg/workload/admissionchecks.go) on a v1::Workload, under Kueue's names,
// for the sides of the API that hold workloads as messages (the shim, the
// CLI). The server's own are on its core types (server/core/objects.h).

#include "absl/strings/string_view.h"
#include "kq/v1/workload.pb.h"

namespace kq::proto_util {

// The condition of `type`, or null.
const v1::Condition* FindCondition(const v1::Workload& wl,
                                   absl::string_view type);
// Whether the condition of `type` is present with status "True".
bool IsConditionTrue(const v1::Workload& wl, absl::string_view type);

// status.admission is set and QuotaReserved is True.
bool HasQuotaReservation(const v1::Workload& wl);
bool IsAdmitted(const v1::Workload& wl);
bool IsEvicted(const v1::Workload& wl);
bool IsFinished(const v1::Workload& wl);
// spec.active absent or true.
bool IsActive(const v1::Workload& wl);
// The state of the admission check named `check`, or null.
const v1::AdmissionCheckState* FindAdmissionCheck(const v1::Workload& wl,
                                                  absl::string_view check);

}  // namespace kq::proto_util
