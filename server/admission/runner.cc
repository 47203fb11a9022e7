// The runner handshake (kq's own: Kueue learns that a job stopped from its
// pods) and the clock: what is due when, without a command.

#include "absl/strings/str_cat.h"

#include "server/admission/internal.h"
#include "server/admission/state.h"

namespace kq::admission {

std::optional<absl::Time> AdmissionState::NextWakeup() {
  IndexTimedWorkloads();
  std::optional<absl::Time> next;
  auto consider = [&next](absl::Time at) {
    if (!next.has_value() || at < *next) next = at;
  };
  auto visit = [&](const NamespacedName& key) {
    const Workload* found = workloads_.Find(key);
    if (found == nullptr) return;
    const Workload& wl = *found;
    if (wl.stop_deadline.has_value()) {
      consider(*wl.stop_deadline);
      if (wl.runner.has_value()) consider(wl.runner->lease_expire_time);
      return;
    }
    if (IsFencedCopy(wl)) {
      consider(wl.runner->lease_expire_time);
      return;
    }
    if (!wl.active || HoldsQuota(wl) || !WaitsForCheckBackoff(wl)) return;
    consider(RequeueAt(wl).value_or(absl::InfinitePast()));
  };
  for (const NamespacedName& key : timed_workloads_) visit(key);
  return next;
}

bool AdmissionState::IsFencedCopy(const Workload& wl) {
  return wl.remote.has_value() && wl.remote->bound && wl.remote->fenced &&
         wl.runner.has_value() && !IsEvicting(wl) && HoldsQuota(wl);
}

bool AdmissionState::IsTimed(const Workload& wl) {
  return wl.stop_deadline.has_value() || IsFencedCopy(wl) ||
         (wl.active && !HoldsQuota(wl) && WaitsForCheckBackoff(wl));
}

void AdmissionState::IndexTimedWorkloads() {
  for (const NamespacedName& key : marked_since_index_) {
    const Workload* wl = workloads_.Find(key);
    const bool timed = wl != nullptr && IsTimed(*wl);
    if (timed) {
      timed_workloads_.insert(key);
    } else {
      timed_workloads_.erase(key);
    }
  }
  marked_since_index_.clear();
}

absl::StatusOr<HeartbeatResult> AdmissionState::Heartbeat(
    const NamespacedName& key, const std::string& runner_id,
    absl::Duration lease, bool stopped, absl::Time now) {
  if (runner_id.empty()) {
    return absl::InvalidArgumentError("runner_id: required");
  }
  if (lease <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("lease: must be positive");
  }
  Workload* found = workloads_.FindMutable(key);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = *found;
  if (wl.remote.has_value()) {
    // A MultiKueue copy runs only through its manager, which binds the copy
    // that won and relays its own runner's lease; any other runner here
    // could start a copy that lost, or run a job twice.
    if (!wl.remote->bound) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key), " is an unbound MultiKueue copy of origin \"",
          wl.remote->origin, "\": it has not won and must not run"));
    }
    if (runner_id != RelayRunnerId(wl.remote->origin)) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key), " is a MultiKueue copy of origin \"",
          wl.remote->origin,
          "\": it runs through its manager; attach the runner there"));
    }
  }
  const bool other_runner = wl.runner.has_value() &&
                            wl.runner->id != runner_id &&
                            wl.runner->lease_expire_time > now;
  if (other_runner) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " is run by runner \"", wl.runner->id,
                     "\" (lease until ",
                     absl::FormatTime(wl.runner->lease_expire_time), ")"));
  }
  if (!HoldsQuota(wl)) {
    // Released already (the lease lapsed or the grace period ended while
    // it was being evicted): whatever still runs must stop.
    if (stopped) return HeartbeatResult{wl, false};
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " holds no quota: stop it"));
  }
  if (stopped) {
    if (!IsEvicting(wl)) {
      return absl::FailedPreconditionError(absl::StrCat(
          Describe(key),
          " is not being evicted; report its end with FinishWorkload"));
    }
    ReleaseEvicted(wl, now);
    return HeartbeatResult{wl, false};
  }
  if (!IsEvicting(wl) && !IsConditionTrue(wl.conditions, kConditionAdmitted)) {
    return absl::FailedPreconditionError(absl::StrCat(
        Describe(key), " is not admitted yet (admission checks pending)"));
  }
  wl.runner = Runner{runner_id, now + lease};
  MarkWorkload(key, Change::kModified);
  return HeartbeatResult{wl, IsEvicting(wl)};
}

}  // namespace kq::admission
