#include "server/metrics/grpc_metrics.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "server/metrics/kueue_metrics.h"

namespace kq::metrics {

// Lives from the call's arrival until gRPC releases it.
class GrpcMetrics::Interceptor final : public grpc::experimental::Interceptor {
 public:
  Interceptor(GrpcMetrics& metrics, std::string method, bool streaming)
      : metrics_(metrics),
        method_(std::move(method)),
        start_(absl::Now()),
        stream_(streaming ? &metrics.StreamsOpen(method_) : nullptr) {
    if (stream_ != nullptr) stream_->Increment();
  }
  ~Interceptor() override {
    if (stream_ != nullptr) stream_->Decrement();
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_.Finished(method_, methods->GetSendStatus().error_code(),
                        absl::ToDoubleSeconds(absl::Now() - start_));
    }
    methods->Proceed();
  }

 private:
  GrpcMetrics& metrics_;
  const std::string method_;
  const absl::Time start_;
  prometheus::Gauge* stream_;
};

class GrpcMetrics::Factory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(GrpcMetrics& metrics) : metrics_(metrics) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (!absl::StartsWith(info->method(), "/kq.")) return nullptr;
    const bool streaming =
        info->type() ==
            grpc::experimental::ServerRpcInfo::Type::SERVER_STREAMING ||
        info->type() == grpc::experimental::ServerRpcInfo::Type::BIDI_STREAMING;
    return new Interceptor(metrics_, info->method(), streaming);
  }

 private:
  GrpcMetrics& metrics_;
};

GrpcMetrics::GrpcMetrics(prometheus::Registry& registry)
    : requests_(prometheus::BuildCounter()
                    .Name("kq_grpc_requests_total")
                    .Help("gRPC calls to kqd's services, by full method name "
                          "and status code.")
                    .Register(registry)),
      durations_(prometheus::BuildHistogram()
                     .Name("kq_grpc_request_duration_seconds")
                     .Help("From a gRPC call's arrival to its status, by "
                           "method (streams last as long as they are open).")
                     .Register(registry)),
      streams_(prometheus::BuildGauge()
                   .Name("kq_grpc_streams_open")
                   .Help("Server streams (Watch) open, by method.")
                   .Register(registry)) {}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
GrpcMetrics::NewInterceptorFactory() {
  return std::make_unique<Factory>(*this);
}

void GrpcMetrics::Finished(const std::string& method, int code,
                           double seconds) {
  prometheus::Counter* counter;
  prometheus::Histogram* histogram;
  {
    absl::MutexLock lock(&mu_);
    prometheus::Counter*& c = request_series_[{method, code}];
    if (c == nullptr) {
      c = &requests_.Add({{"method", method},
                          {"code", absl::StatusCodeToString(
                                       static_cast<absl::StatusCode>(code))},
                          {kReplicaRole, kStandalone}});
    }
    counter = c;
    prometheus::Histogram*& h = duration_series_[method];
    if (h == nullptr) {
      // 100 us to 10 s: most calls answer after one engine batch.
      h = &durations_.Add({{"method", method}, {kReplicaRole, kStandalone}},
                          prometheus::Histogram::BucketBoundaries{
                              .0001, .00025, .0005, .001, .0025, .005, .01,
                              .025, .05, .1, .25, .5, 1, 2.5, 10});
    }
    histogram = h;
  }
  counter->Increment();
  histogram->Observe(seconds);
}

prometheus::Gauge& GrpcMetrics::StreamsOpen(const std::string& method) {
  absl::MutexLock lock(&mu_);
  prometheus::Gauge*& g = stream_series_[method];
  if (g == nullptr) {
    g = &streams_.Add({{"method", method}, {kReplicaRole, kStandalone}});
  }
  return *g;
}

}  // namespace kq::metrics
