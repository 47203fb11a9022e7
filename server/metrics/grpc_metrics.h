#pragma once

// kq's gRPC metrics: kq_grpc_requests_total{method,code},
// kq_grpc_request_duration_seconds{method} and kq_grpc_streams_open{method}
// (Watch), recorded by a server interceptor on gRPC's threads.

#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/server_interceptor.h"

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kq::metrics {

class GrpcMetrics {
 public:
  // Registers its families in `registry`, which must outlive this.
  explicit GrpcMetrics(prometheus::Registry& registry);

  // An interceptor factory for grpc::ServerBuilder recording into this
  // object, which must outlive the server. Only kq's own services count.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewInterceptorFactory();

  // For the interceptor.
  void Finished(const std::string& method, int code, double seconds);
  prometheus::Gauge& StreamsOpen(const std::string& method);

 private:
  class Interceptor;
  class Factory;

  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& durations_;
  prometheus::Family<prometheus::Gauge>& streams_;

  absl::Mutex mu_;
  // Series by method (and code), so that a call finds its series without
  // prometheus-cpp making one to look it up.
  absl::flat_hash_map<std::pair<std::string, int>, prometheus::Counter*>
      request_series_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, prometheus::Histogram*> duration_series_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, prometheus::Gauge*> stream_series_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace kq::metrics
