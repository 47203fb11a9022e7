// MultiKueue copies on a worker (kq federation, federation.md 5.2-5.3): the
// calls a manager kqd makes to hold copies of its workloads here. Kueue's
// manager writes the worker's Workload objects through the Kubernetes API;
// kq's manager calls these, and each is safe to repeat, since a manager
// that lost an answer sends the call again.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "server/admission/internal.h"
#include "server/admission/state.h"
#include "server/core/conditions.h"

namespace kq::admission {

namespace {

std::string DescribeRef(const RemoteRef& ref) {
  return absl::StrCat(Describe(ref.key), " (origin \"", ref.origin,
                      "\", origin uid \"", ref.origin_uid, "\", epoch ",
                      ref.epoch, ")");
}

}  // namespace

std::string RelayRunnerId(const std::string& origin) {
  return absl::StrCat(kRelayRunnerPrefix, origin);
}

absl::Status ValidateRemoteRef(const RemoteRef& ref) {
  if (ref.key.first.empty()) {
    return absl::InvalidArgumentError("namespace: required");
  }
  if (ref.key.second.empty()) {
    return absl::InvalidArgumentError("name: required");
  }
  if (ref.origin.empty()) {
    return absl::InvalidArgumentError("origin: required");
  }
  if (ref.origin_uid.empty()) {
    return absl::InvalidArgumentError("origin_uid: required");
  }
  if (ref.epoch <= 0) {
    return absl::InvalidArgumentError("epoch: must be positive");
  }
  return absl::OkStatus();
}

absl::StatusOr<const Workload*> AdmissionState::CheckOwnedCopy(
    const RemoteRef& ref, const Workload* held, bool same_epoch) const {
  if (held == nullptr) return nullptr;
  if (!held->remote.has_value()) {
    // Kueue #12404: a workload of the worker's own under that name must not
    // let the worker win with quota for a job that never runs.
    return absl::FailedPreconditionError(absl::StrCat(
        Describe(ref.key),
        " exists on this worker and is not a MultiKueue copy; the worker "
        "cannot hold a copy under its name"));
  }
  const RemoteCopyStatus& remote = *held->remote;
  if (remote.origin != ref.origin || remote.origin_uid != ref.origin_uid) {
    return absl::FailedPreconditionError(absl::StrCat(
        Describe(ref.key), " is a copy of another manager workload (origin \"",
        remote.origin, "\", origin uid \"", remote.origin_uid,
        "\"), not of origin \"", ref.origin, "\" uid \"", ref.origin_uid,
        "\""));
  }
  if (same_epoch && remote.epoch != ref.epoch) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(ref.key), " is the copy of epoch ", remote.epoch,
                     ", not of epoch ", ref.epoch));
  }
  return held;
}

absl::StatusOr<Workload> AdmissionState::UpsertRemote(Workload copy,
                                                      const RemoteRef& ref,
                                                      const Uid& uid,
                                                      const Workload* stored,
                                                      absl::Time now) {
  KQ_RETURN_IF_ERROR(ValidateRemoteRef(ref));
  if (KeyOf(copy) != ref.key) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload.metadata: names ", Describe(KeyOf(copy)),
                     ", not ", Describe(ref.key)));
  }
  const Workload* held = workloads_.Find(ref.key);
  if (held == nullptr) held = change_log_.FindFinished(ref.key);
  if (held == nullptr) held = stored;
  KQ_ASSIGN_OR_RETURN(const Workload* owned,
                      CheckOwnedCopy(ref, held, /*same_epoch=*/false));
  if (owned != nullptr) {
    if (owned->remote->epoch == ref.epoch) return *owned;  // a repeat
    if (owned->remote->epoch > ref.epoch) {
      return absl::FailedPreconditionError(absl::StrCat(
          DescribeRef(ref), " is stale: this worker holds the copy of epoch ",
          owned->remote->epoch));
    }
    // Replacing needs the old row gone first (a name's uid never changes
    // under it in the store), which the manager does: it deletes a stale
    // copy before it sends the new epoch's.
    return absl::FailedPreconditionError(absl::StrCat(
        Describe(ref.key), " holds the copy of epoch ", owned->remote->epoch,
        "; delete it before sending epoch ", ref.epoch));
  }
  copy.meta.labels[kMultiKueueOriginLabel] = ref.origin;
  copy.remote.reset();
  copy.multikueue.reset();
  copy.runner.reset();
  copy.stop_deadline.reset();
  const Workload& added = AddWorkload(std::move(copy), uid, now);
  Workload& wl = Mutable(added);
  wl.remote = RemoteCopyStatus{ref.origin, ref.origin_uid, ref.epoch, false};
  return wl;
}

absl::StatusOr<bool> AdmissionState::DeleteRemote(const RemoteRef& ref,
                                                  const Workload* stored) {
  KQ_RETURN_IF_ERROR(ValidateRemoteRef(ref));
  const Workload* held = workloads_.Find(ref.key);
  const bool live = held != nullptr;
  if (!live) held = change_log_.FindFinished(ref.key);
  if (held == nullptr) held = stored;
  KQ_ASSIGN_OR_RETURN(const Workload* owned,
                      CheckOwnedCopy(ref, held, /*same_epoch=*/false));
  if (owned == nullptr) return false;
  // A copy of a newer epoch than the caller knows is not the caller's to
  // delete: a delayed request of an earlier dispatch must not remove it.
  if (owned->remote->epoch > ref.epoch) {
    return absl::FailedPreconditionError(absl::StrCat(
        DescribeRef(ref), " is stale: this worker holds the copy of epoch ",
        owned->remote->epoch));
  }
  Workload last = live ? TakeWorkload(ref.key) : *owned;
  change_log_.MarkWorkloadDeleted(ref.key, std::move(last));
  marked_since_index_.push_back(ref.key);
  needs_scheduling_ = true;
  return true;
}

absl::StatusOr<Workload*> AdmissionState::FindOwnedCopy(const RemoteRef& ref) {
  KQ_RETURN_IF_ERROR(ValidateRemoteRef(ref));
  Workload* held = workloads_.FindMutable(ref.key);
  if (held == nullptr) {
    if (change_log_.FindFinished(ref.key) != nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(Describe(ref.key), " finished"));
    }
    return absl::NotFoundError(
        absl::StrCat(Describe(ref.key), " not found on this worker"));
  }
  KQ_RETURN_IF_ERROR(CheckOwnedCopy(ref, held, /*same_epoch=*/true).status());
  return held;
}

absl::StatusOr<HeartbeatResult> AdmissionState::BindRemote(const RemoteRef& ref,
                                                           absl::Duration lease,
                                                           bool fence,
                                                           absl::Time now) {
  KQ_ASSIGN_OR_RETURN(Workload * found, FindOwnedCopy(ref));
  Workload& wl = *found;
  if (!wl.remote->bound) {
    // Kueue's win is Admitted on the worker
    // (MultiKueueWaitForWorkloadAdmitted); a copy that lost it since the
    // manager looked must not start.
    if (IsEvicting(wl) || !IsConditionTrue(wl.conditions, kConditionAdmitted)) {
      return absl::FailedPreconditionError(
          absl::StrCat(DescribeRef(ref),
                       " is not admitted on this worker; only an "
                       "admitted copy can be bound"));
    }
    wl.remote->bound = true;
    wl.remote->fenced = fence;
    MarkWorkload(ref.key, Change::kModified);
  }
  return Heartbeat(ref.key, RelayRunnerId(ref.origin), lease,
                   /*stopped=*/false, now);
}

absl::StatusOr<HeartbeatResult> AdmissionState::RenewRemote(
    const RemoteRef& ref, absl::Duration lease, bool stopped, absl::Time now) {
  KQ_ASSIGN_OR_RETURN(Workload * found, FindOwnedCopy(ref));
  if (!found->remote->bound) {
    return absl::FailedPreconditionError(
        absl::StrCat(DescribeRef(ref), " is not bound"));
  }
  return Heartbeat(ref.key, RelayRunnerId(ref.origin), lease, stopped, now);
}

absl::StatusOr<Workload> AdmissionState::DeactivateRemote(
    const RemoteRef& ref, const std::string& message, absl::Time now) {
  KQ_ASSIGN_OR_RETURN(Workload * found, FindOwnedCopy(ref));
  Workload& wl = *found;
  if (!wl.active) return wl;  // a repeat
  // Kueue's DeactivationTarget with cause EvictedOnManagerCluster: the
  // worker's workload controller deactivates and evicts with the reason
  // "DeactivatedDueToEvictedOnManagerCluster".
  wl.active = false;
  wl.requeue_state.reset();
  queues_.Remove(ref.key);
  last_assignments_.erase(ref.key);
  MarkWorkload(ref.key, Change::kModified);
  if (!IsEvicting(wl)) {
    Evict(wl, kReasonDeactivatedDueToEvictedOnManagerCluster,
          absl::StrCat("The workload is deactivated due to ", message), now);
    if (HoldsQuota(wl)) {
      StopOrRelease(wl, now);
    } else {
      SyncUnreservedConditions(wl, now);
    }
  }
  return wl;
}

bool AdmissionState::FenceLapsedCopy(Workload& wl, absl::Time now) {
  if (!IsFencedCopy(wl) || wl.runner->lease_expire_time > now) return false;
  const NamespacedName key = KeyOf(wl);
  // Deactivated, not requeued: admitted here again without its manager it
  // would hold quota for a job that may be running elsewhere by then. The
  // manager sees the eviction when it is back, and dispatches again.
  wl.active = false;
  wl.remote->bound = false;
  queues_.Remove(key);
  last_assignments_.erase(key);
  Evict(wl, kReasonManagerLost,
        absl::StrCat("The MultiKueue manager (origin \"", wl.remote->origin,
                     "\") did not renew its lease (it lapsed at ",
                     absl::FormatTime(wl.runner->lease_expire_time),
                     "): the copy stopped here so that the workload cannot "
                     "run in two places"),
        now);
  StopOrRelease(wl, now);
  return true;
}

bool IsRelayRunner(const std::string& runner_id) {
  return absl::StartsWith(runner_id, kRelayRunnerPrefix);
}

}  // namespace kq::admission
