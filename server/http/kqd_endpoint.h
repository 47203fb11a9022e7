#pragma once

// kqd's HTTP port (--http-listen): /metrics for Prometheus, /healthz and
// /readyz for probes, and Kueue's visibility API. Every answer is built off
// the engine thread: metrics from what the engine published, readiness from
// a flag; the visibility reads are engine calls like any gRPC read.

#include <memory>

#include "absl/status/status.h"

#include "server/engine/engine.h"
#include "server/http/http_server.h"
#include "server/metrics/kqd_metrics.h"

namespace kq::http {

class KqdEndpoint {
 public:
  // `engine` and `metrics` must outlive this.
  KqdEndpoint(engine::Engine& engine, const metrics::KqdMetrics& metrics);

  // Unavailable when it cannot bind `address`.
  absl::Status Start(const HostPort& address);
  int port() const { return listener_.port(); }
  // Idempotent.
  void Stop() { listener_.Stop(); }

 private:
  void ServeVisibility(const httplib::Request& req, httplib::Response& res);

  engine::Engine& engine_;
  const metrics::KqdMetrics& metrics_;
  Listener listener_;
};

}  // namespace kq::http
