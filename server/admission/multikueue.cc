// The MultiKueue manager's writes to its own workloads (kq federation): the
// check state, the nominations, the winning cluster and the worker's
// admission that server/federation decides, applied with the checks
// Kueue's Workload webhook and CEL rules make on status.clusterName.

#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "server/admission/state.h"
#include "server/core/conditions.h"

namespace kq::admission {

namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Kueue's CEL rules on WorkloadStatus and the webhook's
// validateClusterNameUpdate (pkg/webhooks/workload_webhook.go), with the
// messages they give.
absl::Status CheckClusterNameUpdate(const MultiKueueStatus& before,
                                    const MultiKueueStatus& after) {
  if (!after.cluster_name.empty() && !after.nominated_cluster_names.empty()) {
    return absl::InvalidArgumentError(
        "status: Invalid value: clusterName and nominatedClusterNames are "
        "mutually exclusive");
  }
  if (!before.cluster_name.empty() && !after.cluster_name.empty() &&
      before.cluster_name != after.cluster_name) {
    return absl::InvalidArgumentError(
        "status.clusterName: Invalid value: clusterName is immutable once "
        "set");
  }
  if (before.cluster_name.empty() && !after.cluster_name.empty() &&
      !Contains(before.nominated_cluster_names, after.cluster_name)) {
    return absl::InvalidArgumentError(
        "status.clusterName: Invalid value: when setting clusterName it must "
        "be one of the nominatedClusterNames");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Workload> AdmissionState::ApplyMultiKueueChange(
    const MultiKueueChange& change, absl::Time now) {
  Workload* found = workloads_.FindMutable(change.key);
  if (found == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(Describe(change.key), " not found"));
  }
  Workload& wl = *found;
  // Decided on an older state of the workload: what it decided on may no
  // longer hold (an eviction cleared the nomination since), and the
  // federation controller decides again from the newer state.
  if (wl.meta.uid != change.uid || wl.meta.revision != change.revision) {
    return absl::AbortedError(
        absl::StrCat(Describe(change.key), " changed since revision ",
                     change.revision, " (now ", wl.meta.revision, ")"));
  }
  if (change.finish.has_value()) {
    // Kueue's rule R3: the worker's Finished reason and message.
    return FinishWorkload(change.key, change.finish->first,
                          change.finish->second, now);
  }
  if (change.status.has_value()) {
    const MultiKueueStatus before =
        wl.multikueue.has_value() ? *wl.multikueue : MultiKueueStatus{};
    KQ_RETURN_IF_ERROR(CheckClusterNameUpdate(before, *change.status));
    if (before != *change.status) {
      wl.multikueue = *change.status;
      MarkWorkload(change.key, Change::kModified);
    }
  }
  if (change.check_state.has_value()) {
    const AdmissionCheckState& check = *change.check_state;
    const AdmissionCheckState* current = nullptr;
    for (const AdmissionCheckState& c : wl.admission_checks) {
      if (c.name == check.name) current = &c;
    }
    if (current == nullptr) {
      return absl::NotFoundError(
          absl::StrCat(Describe(change.key), " has no admission check \"",
                       check.name, "\" in status.admissionChecks"));
    }
    if (current->state != check.state || current->message != check.message) {
      KQ_RETURN_IF_ERROR(SetAdmissionCheckState(change.key, check.name,
                                                check.state, check.message,
                                                std::nullopt, now)
                             .status());
    }
  }
  return *workloads_.Find(change.key);
}

absl::StatusOr<Workload> AdmissionState::SetNominatedClusters(
    const NamespacedName& key, const std::vector<std::string>& names) {
  Workload* found = workloads_.FindMutable(key);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Workload& wl = *found;
  const std::string& dispatcher = configuration_.multi_kueue.dispatcher_name;
  if (dispatcher == kMultiKueueDispatcherAllAtOnce ||
      dispatcher == kMultiKueueDispatcherIncremental) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MultiKueue dispatcher is \"", dispatcher,
        "\", which nominates the workers itself; an external dispatcher "
        "needs multiKueue.dispatcherName set to its own name"));
  }
  bool has_check = false;
  for (const AdmissionCheckState& check : wl.admission_checks) {
    auto ac = admission_checks_.find(check.name);
    if (ac != admission_checks_.end() &&
        ac->second.controller_name == kMultiKueueControllerName) {
      has_check = true;
    }
  }
  if (!has_check) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " has no MultiKueue admission check"));
  }
  // Kueue's CRD: maxItems 20, items of 1 to 256 characters, a set.
  if (names.size() > 20) {
    return absl::InvalidArgumentError(
        absl::StrCat("status.nominatedClusterNames: Too many: ", names.size(),
                     ": must have at most 20 items"));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty() || names[i].size() > 256) {
      return absl::InvalidArgumentError(
          absl::StrCat("status.nominatedClusterNames[", i,
                       "]: Invalid value: must be 1 to 256 characters"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (names[j] == names[i]) {
        return absl::InvalidArgumentError(
            absl::StrCat("status.nominatedClusterNames[", i,
                         "]: Duplicate value: \"", names[i], "\""));
      }
    }
  }
  MultiKueueStatus status =
      wl.multikueue.has_value() ? *wl.multikueue : MultiKueueStatus{};
  status.nominated_cluster_names = names;
  KQ_RETURN_IF_ERROR(CheckClusterNameUpdate(
      wl.multikueue.has_value() ? *wl.multikueue : MultiKueueStatus{}, status));
  if (wl.multikueue.has_value() && *wl.multikueue == status) return wl;
  wl.multikueue = std::move(status);
  MarkWorkload(key, Change::kModified);
  return wl;
}

}  // namespace kq::admission
