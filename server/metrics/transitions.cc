#include "server/metrics/transitions.h"

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

#include "server/core/conditions.h"

namespace kq::metrics {
namespace {

constexpr absl::string_view kDeactivatedDueTo = "DeactivatedDueTo";

}  // namespace

std::string PreemptingClusterQueue(const std::string& message) {
  constexpr absl::string_view kPath = "preemptor path: ";
  const absl::string_view text(message);
  const size_t at = text.find(kPath);
  if (at == absl::string_view::npos) return "";
  absl::string_view path = text.substr(at + kPath.size());
  path = path.substr(0, path.find(';'));
  const size_t slash = path.rfind('/');
  if (slash != absl::string_view::npos) path = path.substr(slash + 1);
  return std::string(path);
}

WorkloadTransitions TransitionsOf(const Workload& wl, absl::Time now) {
  WorkloadTransitions out;
  absl::Time queued_at = wl.meta.creation_timestamp;
  if (const Condition* requeued =
          FindCondition(wl.conditions, kConditionRequeued)) {
    queued_at = requeued->last_transition_time;
  }
  out.queued_wait = now - queued_at;
  const Condition* reserved =
      FindCondition(wl.conditions, kConditionQuotaReserved);
  out.quota_reserved =
      FindConditionTurnedTrue(wl.conditions, kConditionQuotaReserved, now) !=
      nullptr;
  if (FindConditionTurnedTrue(wl.conditions, kConditionAdmitted, now) !=
      nullptr) {
    out.admitted = true;
    if (!wl.admission_checks.empty() && reserved != nullptr) {
      out.checks_wait = now - reserved->last_transition_time;
    }
  }
  if (FindConditionTurnedTrue(wl.conditions, kConditionFinished, now) !=
      nullptr) {
    out.finished = true;
    if (const Condition* admitted =
            FindCondition(wl.conditions, kConditionAdmitted);
        admitted != nullptr && admitted->status == kConditionTrue) {
      out.execution = now - admitted->last_transition_time;
    }
  }
  const Condition* evicted = FindCondition(wl.conditions, kConditionEvicted);
  if (const Condition* c =
          FindConditionTurnedTrue(wl.conditions, kConditionEvicted, now)) {
    out.evicted = true;
    if (absl::StartsWith(c->reason, kDeactivatedDueTo)) {
      out.eviction_reason = kReasonDeactivated;
      out.underlying_cause = std::string(
          absl::string_view(c->reason).substr(kDeactivatedDueTo.size()));
    } else {
      out.eviction_reason = c->reason;
    }
  }
  if (const Condition* c =
          FindConditionTurnedTrue(wl.conditions, kConditionPreempted, now)) {
    out.preempted = true;
    out.preemption_reason = c->reason;
    out.preempting_cluster_queue = PreemptingClusterQueue(c->message);
  }
  if (reserved != nullptr && reserved->status == kConditionFalse &&
      reserved->last_transition_time == now && evicted != nullptr &&
      evicted->status == kConditionTrue) {
    out.released_after_eviction = true;
    out.released_reason = evicted->reason;
    out.eviction_latency = now - evicted->last_transition_time;
  }
  return out;
}

}  // namespace kq::metrics
