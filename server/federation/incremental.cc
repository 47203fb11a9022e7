#include "server/federation/incremental.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "server/core/conditions.h"
#include "server/core/objects.h"

namespace kq::federation {
namespace {

constexpr char kNoMoreWorkers[] = "no more workers to nominate";

const AdmissionCheckState* FindCheck(const Workload& wl,
                                     const std::string& name) {
  if (name.empty()) return nullptr;
  for (const AdmissionCheckState& check : wl.admission_checks) {
    if (check.name == name) return &check;
  }
  return nullptr;
}

// Clears a recorded round; nothing when none is (so a second run is
// steady).
IncrementalDecision ClearRound(const ManagerState& state) {
  IncrementalDecision d;
  if (state.round_start.has_value()) {
    d.round_start = std::optional<absl::Time>();
  }
  return d;
}

}  // namespace

absl::Status NoMoreWorkersError() {
  return absl::OutOfRangeError(kNoMoreWorkers);
}

bool IsNoMoreWorkers(const absl::Status& status) {
  return status.code() == absl::StatusCode::kOutOfRange &&
         status.message() == kNoMoreWorkers;
}

IncrementalDecision IncrementalReconcile(const IncrementalInput& in) {
  if (in.workload == nullptr) {
    IncrementalDecision d;
    d.status = absl::NotFoundError("workload not found");
    return d;
  }
  // A deleted workload's round goes with it; kq keeps it in the workload.
  if (in.deleted) return IncrementalDecision();
  const Workload& wl = *in.workload;

  // Kueue's ShouldSkipClusterNomination.
  const AdmissionCheckState* acs = FindCheck(wl, in.check_name);
  if (acs == nullptr || acs->state != kCheckStatePending ||
      !in.state.cluster_name.empty()) {
    return IncrementalDecision();
  }
  if (in.clusters.empty()) {
    IncrementalDecision d;
    d.status = absl::FailedPreconditionError("no active clusters");
    return d;
  }
  if (IsConditionTrue(wl.conditions, kConditionFinished) || !HoldsQuota(wl)) {
    return ClearRound(in.state);
  }
  return NominateWorkers(in.state, in.clusters, in.settings, in.now);
}

IncrementalDecision NominateWorkers(const ManagerState& state,
                                    const std::vector<std::string>& clusters,
                                    const Settings& settings, absl::Time now) {
  IncrementalDecision d;
  // A round is in progress (Kueue: up to and including its timeout). A
  // recorded start without nominations is left from an earlier dispatch
  // (Kueue forgets it in memory when the quota goes; kq may not have run in
  // between), so it starts no wait.
  if (state.round_start.has_value() && !state.nominated_cluster_names.empty() &&
      now - *state.round_start <= settings.incremental_round_timeout) {
    d.requeue_after =
        settings.incremental_round_timeout - (now - *state.round_start);
    return d;
  }

  const std::set<std::string> nominated(state.nominated_cluster_names.begin(),
                                        state.nominated_cluster_names.end());
  std::vector<std::string> remaining;
  for (const std::string& cluster : clusters) {
    if (nominated.count(cluster) == 0) remaining.push_back(cluster);
  }
  if (!settings.respect_config_order) {
    std::sort(remaining.begin(), remaining.end());
  }
  if (remaining.empty()) {
    d.status = NoMoreWorkersError();
    return d;
  }
  const size_t step = settings.incremental_step_size >= 1
                          ? static_cast<size_t>(settings.incremental_step_size)
                          : static_cast<size_t>(kDefaultStepSize);
  if (remaining.size() > step) remaining.resize(step);

  std::vector<std::string> next = state.nominated_cluster_names;
  next.insert(next.end(), remaining.begin(), remaining.end());
  d.nominated_cluster_names = std::move(next);
  d.round_start = now;
  return d;
}

}  // namespace kq::federation
