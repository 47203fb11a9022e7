#include "server/metrics/kueue_metrics.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kq::metrics {
namespace {

prometheus::Family<prometheus::Counter>& CounterOf(
    prometheus::Registry& registry, const std::string& name,
    const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Histogram>& HistogramOf(
    prometheus::Registry& registry, const std::string& name,
    const std::string& help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
}

constexpr char kEvictionReasons[] =
    "reason is Preempted, PodsReadyTimeout, AdmissionCheck, "
    "ClusterQueueStopped, LocalQueueStopped, NodeFailures or Deactivated; "
    "underlying_cause is empty or, for Deactivated, AdmissionCheck, "
    "MaximumExecutionTimeExceeded or RequeuingLimitExceeded.";

}  // namespace

std::vector<double> KueueExponentialBuckets(int count) {
  std::vector<double> out{1};
  double bound = 2.5;
  for (int i = 1; i < count; ++i, bound *= 2) out.push_back(bound);
  return out;
}

std::vector<double> PrometheusDefaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

KueueMetrics::KueueMetrics(prometheus::Registry& r)
    : buckets14_(KueueExponentialBuckets(14)),
      buckets16_(KueueExponentialBuckets(16)),
      default_buckets_(PrometheusDefaultBuckets()),
      // 50 us to about 1.6 s: a batch takes milliseconds.
      engine_buckets_(prometheus::Histogram::BucketBoundaries{
          .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1,
          .25, .5, 1, 2.5}),
      admission_attempts_(CounterOf(
          r, "kueue_admission_attempts_total",
          "Scheduling cycles, by result: success when the cycle reserved "
          "quota for a workload, inadmissible otherwise.")),
      admission_attempt_duration_(
          HistogramOf(r, "kueue_admission_attempt_duration_seconds",
                      "How long one scheduling cycle took, by result.")),
      quota_reserved_(CounterOf(
          r, "kueue_quota_reserved_workloads_total",
          "Workloads that got a quota reservation, per cluster_queue.")),
      quota_reserved_wait_(
          HistogramOf(r, "kueue_quota_reserved_wait_time_seconds",
                      "From a workload's creation or last requeue to its quota "
                      "reservation, per cluster_queue.")),
      admitted_(CounterOf(r, "kueue_admitted_workloads_total",
                          "Workloads admitted, per cluster_queue.")),
      admission_wait_(HistogramOf(
          r, "kueue_admission_wait_time_seconds",
          "From a workload's creation or last requeue to its admission, per "
          "cluster_queue.")),
      admission_checks_wait_(HistogramOf(
          r, "kueue_admission_checks_wait_time_seconds",
          "From a workload's quota reservation to its admission, per "
          "cluster_queue.")),
      finished_(CounterOf(r, "kueue_finished_workloads_total",
                          "Workloads finished, per cluster_queue.")),
      execution_time_(
          HistogramOf(r, "kueue_execution_time_seconds",
                      "From a finished workload's admission to its end, per "
                      "cluster_queue.")),
      evicted_(CounterOf(
          r, "kueue_evicted_workloads_total",
          absl::StrCat("Evictions, per cluster_queue; ", kEvictionReasons))),
      preempted_(CounterOf(
          r, "kueue_preempted_workloads_total",
          "Workloads preempted, per preempting_cluster_queue; reason is "
          "InClusterQueue, InCohortReclamation, InCohortFairSharing or "
          "InCohortReclaimWhileBorrowing.")),
      eviction_latency_(HistogramOf(
          r, "kueue_workload_eviction_latency_seconds",
          "From a workload's eviction (Evicted=True) until its quota was "
          "released and it was pending again, per cluster_queue and "
          "reason.")),
      lq_quota_reserved_(CounterOf(
          r, "kueue_local_queue_quota_reserved_workloads_total",
          "Workloads that got a quota reservation, per local_queue.")),
      lq_quota_reserved_wait_(
          HistogramOf(r, "kueue_local_queue_quota_reserved_wait_time_seconds",
                      "From a workload's creation or last requeue to its quota "
                      "reservation, per local_queue.")),
      lq_admitted_(CounterOf(r, "kueue_local_queue_admitted_workloads_total",
                             "Workloads admitted, per local_queue.")),
      lq_admission_wait_(HistogramOf(
          r, "kueue_local_queue_admission_wait_time_seconds",
          "From a workload's creation or last requeue to its admission, per "
          "local_queue.")),
      lq_admission_checks_wait_(HistogramOf(
          r, "kueue_local_queue_admission_checks_wait_time_seconds",
          "From a workload's quota reservation to its admission, per "
          "local_queue.")),
      lq_finished_(CounterOf(r, "kueue_local_queue_finished_workloads_total",
                             "Workloads finished, per local_queue.")),
      lq_execution_time_(
          HistogramOf(r, "kueue_local_queue_execution_time_seconds",
                      "From a finished workload's admission to its end, per "
                      "local_queue.")),
      lq_evicted_(CounterOf(
          r, "kueue_local_queue_evicted_workloads_total",
          absl::StrCat("Evictions, per local_queue; ", kEvictionReasons))),
      batch_duration_(HistogramOf(
          r, "kq_engine_batch_duration_seconds",
          "One engine batch, from taking its commands to the end of its "
          "commit, by whether it stored anything.")),
      commit_duration_(HistogramOf(r, "kq_store_commit_duration_seconds",
                                   "The store's commit of one batch.")),
      passes_per_batch_(
          HistogramOf(r, "kq_engine_batch_scheduling_passes",
                      "Scheduling passes (Kueue's cycles) run by one batch.")),
      batches_(CounterOf(r, "kq_engine_batches_total",
                         "Engine batches, by whether they stored anything.")),
      commands_(CounterOf(r, "kq_engine_commands_total",
                          "Commands (calls that read or change the state) "
                          "applied by the engine.")) {}

std::string KueueMetrics::OwnerOf(const LocalQueueRef& lq) {
  return absl::StrCat(lq.namespace_name, "/", lq.name);
}

prometheus::Counter& KueueMetrics::Count(CounterFamily& family,
                                         const std::string& owner,
                                         prometheus::Labels labels) {
  labels.emplace(kReplicaRole, kStandalone);
  return family.Get(owner, labels);
}

void KueueMetrics::Observe(HistogramFamily& family,
                           const std::vector<double>& buckets,
                           const std::string& owner, prometheus::Labels labels,
                           absl::Duration value) {
  labels.emplace(kReplicaRole, kStandalone);
  // As Kueue: clock skew must not make a negative sample.
  family.Get(owner, labels, buckets)
      .Observe(std::max(0.0, absl::ToDoubleSeconds(value)));
}

void KueueMetrics::AdmissionAttempt(bool success, absl::Duration duration) {
  const std::string result = success ? "success" : "inadmissible";
  Count(admission_attempts_, "", {{"result", result}}).Increment();
  Observe(admission_attempt_duration_, default_buckets_, "",
          {{"result", result}}, duration);
}

void KueueMetrics::QuotaReservedWorkload(const std::string& cluster_queue,
                                         const LocalQueueRef& lq,
                                         const std::string& priority_class,
                                         absl::Duration wait) {
  prometheus::Labels cq{{"cluster_queue", cluster_queue},
                        {"priority_class", priority_class}};
  Count(quota_reserved_, cluster_queue, cq).Increment();
  Observe(quota_reserved_wait_, buckets14_, cluster_queue, cq, wait);
  prometheus::Labels local{{"name", lq.name},
                           {"namespace", lq.namespace_name},
                           {"priority_class", priority_class}};
  Count(lq_quota_reserved_, OwnerOf(lq), local).Increment();
  Observe(lq_quota_reserved_wait_, buckets14_, OwnerOf(lq), local, wait);
}

void KueueMetrics::AdmittedWorkload(const std::string& cluster_queue,
                                    const LocalQueueRef& lq,
                                    const std::string& priority_class,
                                    absl::Duration wait) {
  prometheus::Labels cq{{"cluster_queue", cluster_queue},
                        {"priority_class", priority_class}};
  Count(admitted_, cluster_queue, cq).Increment();
  Observe(admission_wait_, buckets16_, cluster_queue, cq, wait);
  prometheus::Labels local{{"name", lq.name},
                           {"namespace", lq.namespace_name},
                           {"priority_class", priority_class}};
  Count(lq_admitted_, OwnerOf(lq), local).Increment();
  // Kueue's LocalQueue form has 14 buckets where the ClusterQueue's has 16.
  Observe(lq_admission_wait_, buckets14_, OwnerOf(lq), local, wait);
}

void KueueMetrics::AdmissionChecksWaitTime(const std::string& cluster_queue,
                                           const LocalQueueRef& lq,
                                           const std::string& priority_class,
                                           absl::Duration wait) {
  Observe(
      admission_checks_wait_, buckets14_, cluster_queue,
      {{"cluster_queue", cluster_queue}, {"priority_class", priority_class}},
      wait);
  Observe(lq_admission_checks_wait_, buckets14_, OwnerOf(lq),
          {{"name", lq.name},
           {"namespace", lq.namespace_name},
           {"priority_class", priority_class}},
          wait);
}

void KueueMetrics::FinishedWorkload(const std::string& cluster_queue,
                                    const LocalQueueRef& lq,
                                    const std::string& priority_class,
                                    std::optional<absl::Duration> execution) {
  prometheus::Labels cq{{"cluster_queue", cluster_queue},
                        {"priority_class", priority_class}};
  prometheus::Labels local{{"name", lq.name},
                           {"namespace", lq.namespace_name},
                           {"priority_class", priority_class}};
  Count(finished_, cluster_queue, cq).Increment();
  Count(lq_finished_, OwnerOf(lq), local).Increment();
  if (execution.has_value()) {
    Observe(execution_time_, buckets16_, cluster_queue, cq, *execution);
    Observe(lq_execution_time_, buckets16_, OwnerOf(lq), local, *execution);
  }
}

void KueueMetrics::EvictedWorkload(const std::string& cluster_queue,
                                   const LocalQueueRef& lq,
                                   const std::string& reason,
                                   const std::string& underlying_cause,
                                   const std::string& priority_class) {
  Count(evicted_, cluster_queue,
        {{"cluster_queue", cluster_queue},
         {"reason", reason},
         {"underlying_cause", underlying_cause},
         {"priority_class", priority_class}})
      .Increment();
  Count(lq_evicted_, OwnerOf(lq),
        {{"name", lq.name},
         {"namespace", lq.namespace_name},
         {"reason", reason},
         {"underlying_cause", underlying_cause},
         {"priority_class", priority_class}})
      .Increment();
}

void KueueMetrics::PreemptedWorkload(
    const std::string& preempting_cluster_queue, const std::string& reason) {
  Count(preempted_, preempting_cluster_queue,
        {{"preempting_cluster_queue", preempting_cluster_queue},
         {"reason", reason}})
      .Increment();
}

void KueueMetrics::EvictionLatency(const std::string& cluster_queue,
                                   const std::string& reason,
                                   absl::Duration latency) {
  Observe(eviction_latency_, buckets14_, cluster_queue,
          {{"cluster_queue", cluster_queue}, {"reason", reason}}, latency);
}

void KueueMetrics::ClearClusterQueue(const std::string& cluster_queue) {
  for (CounterFamily* family :
       {&quota_reserved_, &admitted_, &finished_, &evicted_, &preempted_}) {
    family->RemoveOwner(cluster_queue);
  }
  for (HistogramFamily* family :
       {&quota_reserved_wait_, &admission_wait_, &admission_checks_wait_,
        &execution_time_, &eviction_latency_}) {
    family->RemoveOwner(cluster_queue);
  }
}

void KueueMetrics::ClearLocalQueue(const LocalQueueRef& lq) {
  const std::string owner = OwnerOf(lq);
  for (CounterFamily* family :
       {&lq_quota_reserved_, &lq_admitted_, &lq_finished_, &lq_evicted_}) {
    family->RemoveOwner(owner);
  }
  for (HistogramFamily* family :
       {&lq_quota_reserved_wait_, &lq_admission_wait_,
        &lq_admission_checks_wait_, &lq_execution_time_}) {
    family->RemoveOwner(owner);
  }
}

void KueueMetrics::EngineBatch(absl::Duration duration,
                               absl::Duration commit_duration, bool stored,
                               int passes, size_t commands) {
  const std::string result = stored ? "true" : "false";
  Count(batches_, "", {{"stored", result}}).Increment();
  Observe(batch_duration_, engine_buckets_, "", {{"stored", result}}, duration);
  if (stored) {
    Observe(commit_duration_, engine_buckets_, "", {}, commit_duration);
  }
  static const std::vector<double> kPassBuckets{0, 1, 2, 4, 8, 16, 32, 64, 128};
  passes_per_batch_.Get("", {{kReplicaRole, kStandalone}}, kPassBuckets)
      .Observe(passes);
  if (commands > 0) {
    Count(commands_, "", {}).Increment(static_cast<double>(commands));
  }
}

}  // namespace kq::metrics
