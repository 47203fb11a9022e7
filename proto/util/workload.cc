#include "proto/util/workload.h"

namespace kq::proto_util {

const v1::Condition* FindCondition(const v1::Workload& wl,
                                   absl::string_view type) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool IsConditionTrue(const v1::Workload& wl, absl::string_view type) {
  const v1::Condition* c = FindCondition(wl, type);
  return c != nullptr && c->status() == "True";
}

bool HasQuotaReservation(const v1::Workload& wl) {
  return wl.status().has_admission() && IsConditionTrue(wl, "QuotaReserved");
}

bool IsAdmitted(const v1::Workload& wl) {
  return IsConditionTrue(wl, "Admitted");
}

bool IsEvicted(const v1::Workload& wl) {
  return IsConditionTrue(wl, "Evicted");
}

bool IsFinished(const v1::Workload& wl) {
  return IsConditionTrue(wl, "Finished");
}

bool IsActive(const v1::Workload& wl) {
  return !wl.spec().has_active() || wl.spec().active();
}

const v1::AdmissionCheckState* FindAdmissionCheck(const v1::Workload& wl,
                                                  absl::string_view check) {
  for (const v1::AdmissionCheckState& state : wl.status().admission_checks()) {
    if (state.name() == check) return &state;
  }
  return nullptr;
}

}  // namespace kq::proto_util
