#pragma once

// The shim's HTTP endpoints: Kueue's mutating admission webhook for batch/v1
// Jobs over HTTPS (the API server calls it with the caBundle of the
// MutatingWebhookConfiguration), plus health and metrics, optionally also on
// a plain-HTTP port for kubelet probes and Prometheus.
//
//   HTTPS  POST /mutate-batch-v1-job  AdmissionReview in, AdmissionReview out
//                                     (see MutateJob); 415 unless the body is
//                                     application/json, 400 when it is not an
//                                     AdmissionReview
//   both   GET  /healthz              200 "ok" while the process serves
//   both   GET  /readyz               200 "ok" when `readiness` returns OK,
//                                     else 503 with its message
//   both   GET  /metrics              Metrics::Global() in the Prometheus
//                                     text format 0.0.4
//
// Every webhook request counts in kq_shim_webhook_requests_total{result}
// (result: "patched", "allowed" without a patch, "denied" by the webhook,
// "invalid" for a request refused with 400/415) and adds its handling time to
// kq_shim_webhook_request_duration_seconds_total, and logs one line naming
// the Job (namespace/name) and the decision.
//
// Example:
//   ShimServerOptions options;
//   options.https_port = 9443;
//   options.tls_cert_file = "/tmp/k8s-webhook-server/serving-certs/tls.crt";
//   options.tls_key_file = "/tmp/k8s-webhook-server/serving-certs/tls.key";
//   options.http_port = 8081;
//   options.readiness = [&] { return shim.Ready(); };
//   ShimServer server(std::move(options));
//   if (absl::Status started = server.Start(); !started.ok()) return started;
//   ...
//   server.Stop();

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

#include "shim/webhook/job_webhook.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace kq::shim::webhook {

struct ShimServerOptions {
  // Address both listeners bind to ("0.0.0.0" for every interface, as a
  // Pod needs; "127.0.0.1" in tests).
  std::string address = "0.0.0.0";
  // The webhook's HTTPS port; 0 picks a free one (see https_port()); -1
  // serves no webhook (health and metrics on http_port only).
  int https_port = 9443;
  // PEM serving certificate (with its chain) and private key. The
  // certificate must name the Service DNS name the webhook configuration
  // uses. Read once at Start().
  std::string tls_cert_file;
  std::string tls_key_file;
  // Plain-HTTP port for /healthz, /readyz and /metrics (never the webhook);
  // -1 disables it, 0 picks a free one.
  int http_port = -1;
  // How Jobs are defaulted.
  JobWebhookOptions webhook;
  // Readiness (e.g. kqd reachable and the Job informer synced): OK when
  // ready, otherwise a status whose message says why not. Unset means
  // ready. Called on every /readyz, from server threads.
  std::function<absl::Status()> readiness;
};

// Owns the listeners and their threads. Start() and Stop() are thread-safe;
// request handling runs on the servers' worker threads and calls the
// callbacks in the options concurrently.
class ShimServer {
 public:
  explicit ShimServer(ShimServerOptions options);
  // Stops the server if it is running.
  ~ShimServer();
  ShimServer(const ShimServer&) = delete;
  ShimServer& operator=(const ShimServer&) = delete;

  // Loads the certificate, binds the ports and starts serving; returns once
  // both listeners accept connections. INVALID_ARGUMENT when the
  // certificate or key cannot be loaded, UNAVAILABLE when a port cannot be
  // bound, FAILED_PRECONDITION when already started. After a failure
  // nothing is left running.
  absl::Status Start();

  // Closes the listeners and joins every thread. Requests in flight finish;
  // an idle keep-alive connection delays the return by at most one second.
  // Idempotent; a stopped server cannot be started again.
  void Stop();

  // The bound ports, valid after Start() succeeded (-1 before, and for the
  // HTTP port when it is disabled).
  int https_port() const;
  int http_port() const;

 private:
  void HandleMutate(const httplib::Request& request,
                    httplib::Response& response) const;
  void HandleReadyz(httplib::Response& response) const;
  void RegisterHealthRoutes(httplib::Server& server) const;

  const ShimServerOptions options_;
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<httplib::Server> https_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<httplib::Server> http_ ABSL_GUARDED_BY(mu_);
  std::thread https_thread_ ABSL_GUARDED_BY(mu_);
  std::thread http_thread_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> https_port_{-1};
  std::atomic<int> http_port_{-1};
};

}  // namespace kq::shim::webhook
