#include "server/metrics/metrics_observer.h"

#include <string>
#include <variant>

#include "server/metrics/transitions.h"

namespace kq::metrics {

void MetricsObserver::OnCommitted(const engine::CommittedBatch& batch) {
  for (const engine::SchedulingPass& pass : batch.passes) {
    metrics_.AdmissionAttempt(pass.reserved > 0, pass.duration);
  }
  metrics_.EngineBatch(batch.duration, batch.commit_duration,
                       !batch.events.empty(),
                       static_cast<int>(batch.passes.size()), batch.commands);
  for (const store::Event& event : batch.events) {
    if (const auto* wl = std::get_if<Workload>(&event.object)) {
      OnWorkload(batch, *wl);
      continue;
    }
    if (event.type != store::Event::Type::kDeleted) continue;
    const auto& object = std::get<ConfigObject>(event.object);
    if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
      metrics_.ClearClusterQueue(cq->meta.name);
    } else if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      metrics_.ClearLocalQueue({lq->meta.namespace_name, lq->meta.name});
    }
  }
}

void MetricsObserver::OnWorkload(const engine::CommittedBatch& batch,
                                 const Workload& wl) {
  const WorkloadTransitions t = TransitionsOf(wl, batch.time);
  if (!t.quota_reserved && !t.admitted && !t.finished && !t.evicted &&
      !t.preempted && !t.released_after_eviction) {
    return;
  }
  // Kueue labels by status.admission.clusterQueue; once the quota is
  // released that is gone, and the ClusterQueue the workload queues in is
  // the one it was admitted to.
  const std::string cluster_queue =
      wl.admission             ? wl.admission->cluster_queue
      : batch.state != nullptr ? batch.state->ClusterQueueForWorkload(wl)
                               : std::string();
  const LocalQueueRef lq{std::string(wl.meta.namespace_name),
                         std::string(wl.queue_name)};
  const std::string priority_class(wl.priority_class_name);
  if (t.quota_reserved) {
    metrics_.QuotaReservedWorkload(cluster_queue, lq, priority_class,
                                   t.queued_wait);
  }
  if (t.admitted) {
    metrics_.AdmittedWorkload(cluster_queue, lq, priority_class, t.queued_wait);
    if (t.checks_wait.has_value()) {
      metrics_.AdmissionChecksWaitTime(cluster_queue, lq, priority_class,
                                       *t.checks_wait);
    }
  }
  if (t.evicted) {
    metrics_.EvictedWorkload(cluster_queue, lq, t.eviction_reason,
                             t.underlying_cause, priority_class);
  }
  if (t.preempted && !t.preempting_cluster_queue.empty()) {
    metrics_.PreemptedWorkload(t.preempting_cluster_queue, t.preemption_reason);
  }
  if (t.released_after_eviction && !cluster_queue.empty()) {
    metrics_.EvictionLatency(cluster_queue, t.released_reason,
                             t.eviction_latency);
  }
  if (t.finished) {
    metrics_.FinishedWorkload(cluster_queue, lq, priority_class, t.execution);
  }
}

}  // namespace kq::metrics
