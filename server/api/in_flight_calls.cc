#include "server/api/in_flight_calls.h"

#include "absl/strings/match.h"

namespace kq::api {

// Lives as long as gRPC keeps the call's ServerRpcInfo: from the call's
// arrival until its status was sent (or the call was cancelled) and gRPC
// released it.
class InFlightCalls::Counter final : public grpc::experimental::Interceptor {
 public:
  explicit Counter(InFlightCalls& calls) : calls_(calls) {
    absl::MutexLock lock(&calls_.mu_);
    ++calls_.count_;
  }
  ~Counter() override {
    absl::MutexLock lock(&calls_.mu_);
    --calls_.count_;
  }

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    methods->Proceed();
  }

 private:
  InFlightCalls& calls_;
};

class InFlightCalls::Factory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(InFlightCalls& calls) : calls_(calls) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // Health checks and reflection are gRPC's: a client may hold a health
    // Watch open for as long as it likes, and none of them is kqd's work.
    if (!absl::StartsWith(info->method(), "/kq.")) return nullptr;
    return new Counter(calls_);
  }

 private:
  InFlightCalls& calls_;
};

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
InFlightCalls::NewCounter() {
  return std::make_unique<Factory>(*this);
}

int InFlightCalls::WaitUntilNone(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(
                           +[](int* count) { return *count == 0; }, &count_),
                       timeout);
  return count_;
}

}  // namespace kq::api
