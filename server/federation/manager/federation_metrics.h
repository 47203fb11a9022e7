#pragma once

// kq federation's metrics on a manager: Kueue's two MultiKueue counters
// (pkg/metrics/metrics.go) and the worker gauge Kueue's users asked for in
// #11132, on kqd's registry.

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace kq::federation {

// Thread-safe (prometheus-cpp's families are).
class FederationMetrics {
 public:
  // `registry` must outlive this; `replica_role` is Kueue's label value
  // ("standalone" for one kqd).
  FederationMetrics(prometheus::Registry& registry, std::string replica_role);

  // multikueue_workloads_dispatched_total: one copy created on `cluster`.
  void Dispatched(const std::string& cluster_queue, const std::string& cluster);
  // multikueue_workloads_admitted_total: the check turned Ready.
  void Admitted(const std::string& cluster_queue, const std::string& cluster);
  // kq_multikueue_cluster_connected{cluster}: 1 while connected, else 0.
  void SetConnected(const std::string& cluster, bool connected);
  void RemoveCluster(const std::string& cluster);

 private:
  const std::string role_;
  prometheus::Family<prometheus::Counter>& dispatched_;
  prometheus::Family<prometheus::Counter>& admitted_;
  prometheus::Family<prometheus::Gauge>& connected_;
};

}  // namespace kq::federation
