#include "server/federation/manager/federation_metrics.h"

#include <utility>

#include "prometheus/counter.h"
#include "prometheus/gauge.h"

namespace kq::federation {

FederationMetrics::FederationMetrics(prometheus::Registry& registry,
                                     std::string replica_role)
    : role_(std::move(replica_role)),
      dispatched_(prometheus::BuildCounter()
                      .Name("kueue_multikueue_workloads_dispatched_total")
                      .Help("The number of times a workload was dispatched "
                            "to a worker cluster by MultiKueue")
                      .Register(registry)),
      admitted_(prometheus::BuildCounter()
                    .Name("kueue_multikueue_workloads_admitted_total")
                    .Help("The number of times a workload was admitted on a "
                          "worker cluster by MultiKueue; a workload evicted "
                          "and admitted again counts again")
                    .Register(registry)),
      connected_(prometheus::BuildGauge()
                     .Name("kq_multikueue_cluster_connected")
                     .Help("1 while the manager is connected to the worker "
                           "of the MultiKueueCluster, else 0")
                     .Register(registry)) {}

void FederationMetrics::Dispatched(const std::string& cluster_queue,
                                   const std::string& cluster) {
  dispatched_
      .Add({{"cluster_queue", cluster_queue},
            {"cluster", cluster},
            {"replica_role", role_}})
      .Increment();
}

void FederationMetrics::Admitted(const std::string& cluster_queue,
                                 const std::string& cluster) {
  admitted_
      .Add({{"cluster_queue", cluster_queue},
            {"cluster", cluster},
            {"replica_role", role_}})
      .Increment();
}

void FederationMetrics::SetConnected(const std::string& cluster,
                                     bool connected) {
  connected_.Add({{"cluster", cluster}, {"replica_role", role_}})
      .Set(connected ? 1 : 0);
}

void FederationMetrics::RemoveCluster(const std::string& cluster) {
  prometheus::Gauge& gauge =
      connected_.Add({{"cluster", cluster}, {"replica_role", role_}});
  connected_.Remove(&gauge);
}

}  // namespace kq::federation
