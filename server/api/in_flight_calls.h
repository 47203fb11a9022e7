#pragma once

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/server_interceptor.h"

namespace kq::api {

// Counts kqd's own calls (the kq.v1 services) from the moment gRPC hands
// one over until gRPC has sent its status and let it go. A stopping kqd
// waits for these, and only these, before it closes connections: an open
// connection with no call on it is not work to wait for (see daemon.cc).
//
// Thread-safe.
class InFlightCalls {
 public:
  InFlightCalls() = default;
  InFlightCalls(const InFlightCalls&) = delete;
  InFlightCalls& operator=(const InFlightCalls&) = delete;

  // An interceptor factory for grpc::ServerBuilder that counts into this
  // object, which must outlive the server.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewCounter();

  // Waits until no call is in flight or `timeout` has passed; returns how
  // many calls are still in flight.
  int WaitUntilNone(absl::Duration timeout);

 private:
  class Counter;
  class Factory;

  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kq::api
