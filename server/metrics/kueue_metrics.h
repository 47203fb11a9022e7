#pragma once

// Kueue's counters and histograms (pkg/metrics/metrics.go), with its names,
// labels and buckets, so that the dashboards, alerts and recording rules
// written for Kueue read kqd unchanged; plus kq's engine metrics. Recorded
// on the engine thread by MetricsObserver as batches commit; the gauges that
// follow the state live in queue_gauges.h.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/metrics/tracked_family.h"

namespace kq::metrics {

// Every series carries replica_role, as Kueue's do; a kqd without replicas
// is "standalone" (Kueue's roletracker).
inline constexpr char kReplicaRole[] = "replica_role";
inline constexpr char kStandalone[] = "standalone";

// Kueue's generateExponentialBuckets(n): 1, then 2.5 doubling, n bounds in
// all (1, 2.5, 5, 10, ... 10240 for 14; ... 40960 for 16).
std::vector<double> KueueExponentialBuckets(int count);
// client_golang's DefBuckets, which Kueue's histograms without explicit
// buckets use.
std::vector<double> PrometheusDefaultBuckets();

// A workload's LocalQueue, for the local_queue_* series.
struct LocalQueueRef {
  std::string namespace_name;
  std::string name;
};

class KueueMetrics {
 public:
  // Registers every family in `registry`, which must outlive this.
  explicit KueueMetrics(prometheus::Registry& registry);

  // Kueue's AdmissionAttempt: one scheduling cycle, "success" when it
  // reserved quota for a workload, "inadmissible" otherwise.
  void AdmissionAttempt(bool success, absl::Duration duration);
  // Kueue's QuotaReservedWorkload: `wait` from creation or the last
  // requeue.
  void QuotaReservedWorkload(const std::string& cluster_queue,
                             const LocalQueueRef& lq,
                             const std::string& priority_class,
                             absl::Duration wait);
  void AdmittedWorkload(const std::string& cluster_queue,
                        const LocalQueueRef& lq,
                        const std::string& priority_class, absl::Duration wait);
  // From quota reservation to admission.
  void AdmissionChecksWaitTime(const std::string& cluster_queue,
                               const LocalQueueRef& lq,
                               const std::string& priority_class,
                               absl::Duration wait);
  // Kueue's reportFinishedWorkload; `execution` when it was admitted.
  void FinishedWorkload(const std::string& cluster_queue,
                        const LocalQueueRef& lq,
                        const std::string& priority_class,
                        std::optional<absl::Duration> execution);
  void EvictedWorkload(const std::string& cluster_queue,
                       const LocalQueueRef& lq, const std::string& reason,
                       const std::string& underlying_cause,
                       const std::string& priority_class);
  void PreemptedWorkload(const std::string& preempting_cluster_queue,
                         const std::string& reason);
  // From Evicted=True until the quota was released.
  void EvictionLatency(const std::string& cluster_queue,
                       const std::string& reason, absl::Duration latency);

  // Kueue's ClearClusterQueueMetrics / ClearLocalQueueMetrics: the series of
  // a deleted queue go.
  void ClearClusterQueue(const std::string& cluster_queue);
  void ClearLocalQueue(const LocalQueueRef& lq);

  // kq's own: one engine batch.
  void EngineBatch(absl::Duration duration, absl::Duration commit_duration,
                   bool stored, int passes, size_t commands);

 private:
  using CounterFamily = TrackedFamily<prometheus::Counter>;
  using HistogramFamily = TrackedFamily<prometheus::Histogram>;

  prometheus::Counter& Count(CounterFamily& family, const std::string& owner,
                             prometheus::Labels labels);
  void Observe(HistogramFamily& family, const std::vector<double>& buckets,
               const std::string& owner, prometheus::Labels labels,
               absl::Duration value);
  static std::string OwnerOf(const LocalQueueRef& lq);

  const std::vector<double> buckets14_;
  const std::vector<double> buckets16_;
  const std::vector<double> default_buckets_;
  const std::vector<double> engine_buckets_;

  CounterFamily admission_attempts_;
  HistogramFamily admission_attempt_duration_;
  CounterFamily quota_reserved_;
  HistogramFamily quota_reserved_wait_;
  CounterFamily admitted_;
  HistogramFamily admission_wait_;
  HistogramFamily admission_checks_wait_;
  CounterFamily finished_;
  HistogramFamily execution_time_;
  CounterFamily evicted_;
  CounterFamily preempted_;
  HistogramFamily eviction_latency_;

  CounterFamily lq_quota_reserved_;
  HistogramFamily lq_quota_reserved_wait_;
  CounterFamily lq_admitted_;
  HistogramFamily lq_admission_wait_;
  HistogramFamily lq_admission_checks_wait_;
  CounterFamily lq_finished_;
  HistogramFamily lq_execution_time_;
  CounterFamily lq_evicted_;

  HistogramFamily batch_duration_;
  HistogramFamily commit_duration_;
  HistogramFamily passes_per_batch_;
  CounterFamily batches_;
  CounterFamily commands_;
};

}  // namespace kq::metrics
