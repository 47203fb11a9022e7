#pragma once

// kqd's HTTP port (--http-listen): /metrics for Prometheus, /healthz and
// /readyz for probes, and Kueue's visibility API. Every answer is built off
// the engine thread: metrics from what the engine published, readiness from
// a flag; the visibility reads are engine calls like any gRPC read.

#include <memory>

#include "absl/status/status.h"

#include "server/auth/access.h"
#include "server/auth/audit_log.h"
#include "server/auth/tls.h"
#include "server/engine/engine.h"
#include "server/http/http_server.h"
#include "server/metrics/kqd_metrics.h"

namespace kq::http {

// What guards the port; each part may be null (plain HTTP, no
// authentication, no audit log) and must outlive the endpoint. With
// access on, /metrics needs `get` on the path /metrics (Kueue's
// kueue-metrics-reader) and the visibility API the pendingworkloads
// subresource of the queue, as kube-apiserver asks of Kueue's; /healthz
// and /readyz stay open for probes, as kube-apiserver's do.
struct EndpointSecurity {
  auth::Access* access = nullptr;
  auth::AuditLog* audit = nullptr;
  auth::TlsFiles* tls = nullptr;
};

class KqdEndpoint {
 public:
  // `engine` and `metrics` must outlive this.
  KqdEndpoint(engine::Engine& engine, const metrics::KqdMetrics& metrics,
              EndpointSecurity security = {});

  // Unavailable when it cannot bind `address`.
  absl::Status Start(const HostPort& address);
  int port() const { return listener_.port(); }
  // Idempotent.
  void Stop() { listener_.Stop(); }

 private:
  void ServeVisibility(const httplib::Request& req, httplib::Response& res);
  // Authenticates and authorizes `request`, writing the refusal (401 or
  // 403 as a Kubernetes Status) and the audit event. False: refused.
  bool Allow(const httplib::Request& req, httplib::Response& res,
             const auth::Attributes& request, auth::AuditEvent* event);
  void Audit(auth::AuditEvent event, const httplib::Response& res);

  engine::Engine& engine_;
  const metrics::KqdMetrics& metrics_;
  EndpointSecurity security_;
  Listener listener_;
};

}  // namespace kq::http
