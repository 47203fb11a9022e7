#pragma once

// What one committed batch did to a workload, read from the workload as the
// batch stored it: a condition whose lastTransitionTime is the batch's time
// turned in that batch (the engine stamps every change of a batch with its
// time). These are the moments Kueue records its workload metrics at
// (scheduler.go recordQuotaReservationMetrics, workload_controller.go,
// pkg/workload/evict/evict.go). Pure.

#include <optional>
#include <string>

#include "absl/time/time.h"

#include "server/core/objects.h"

namespace kq::metrics {

struct WorkloadTransitions {
  // QuotaReserved turned True; `queued_wait` from creation or the last
  // Requeued transition (Kueue's QueuedWaitTime).
  bool quota_reserved = false;
  // Admitted turned True; `checks_wait` from the quota reservation, recorded
  // when the workload has admission checks (as Kueue does).
  bool admitted = false;
  absl::Duration queued_wait;
  std::optional<absl::Duration> checks_wait;
  // Finished turned True; `execution` when it was admitted (Kueue's
  // TotalExecutionTime without accumulatedPastExecutionTimeSeconds, which
  // kq does not keep: the last admission to the end).
  bool finished = false;
  std::optional<absl::Duration> execution;
  // Evicted turned True, with Kueue's metric labels: a "DeactivatedDueToX"
  // condition reason counts as reason Deactivated, underlying_cause X.
  bool evicted = false;
  std::string eviction_reason;
  std::string underlying_cause;
  // Preempted turned True: its reason (InClusterQueue, ...) and the
  // preemptor's ClusterQueue, the last element of the message's preemptor
  // path.
  bool preempted = false;
  std::string preemption_reason;
  std::string preempting_cluster_queue;
  // The quota was released while Evicted is True (Kueue's
  // EvictionPendingLatency), with the Evicted condition's reason.
  bool released_after_eviction = false;
  std::string released_reason;
  absl::Duration eviction_latency;
};

WorkloadTransitions TransitionsOf(const Workload& wl, absl::Time batch_time);

// The ClusterQueue named last in Kueue's preemption message's "preemptor
// path: /cohort/.../cq"; empty when the message has none.
std::string PreemptingClusterQueue(const std::string& message);

}  // namespace kq::metrics
