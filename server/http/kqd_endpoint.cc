#include "server/http/kqd_endpoint.h"

#include "base/metrics.h"

namespace kq::http {

KqdEndpoint::KqdEndpoint(engine::Engine& engine,
                         const metrics::KqdMetrics& metrics)
    : engine_(engine),
      metrics_(metrics),
      listener_(ListenerOptions{.threads = 4, .name = "kqd http"}) {
  httplib::Server& server = listener_.server();
  server.Get("/metrics",
             [this](const httplib::Request&, httplib::Response& res) {
               res.status = 200;
               res.set_content(metrics_.Render(), kPrometheusContentType);
             });
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content("ok", kTextContentType);
  });
  server.Get("/readyz", [this](const httplib::Request&,
                               httplib::Response& res) {
    if (engine_.ready()) {
      res.status = 200;
      res.set_content("ok", kTextContentType);
      return;
    }
    res.status = 503;
    res.set_content(
        "not ready: the state is not loaded, or kqd could not store a change "
        "and refuses calls until it reloads (see its log)",
        kTextContentType);
  });
}

absl::Status KqdEndpoint::Start(const HostPort& address) {
  return listener_.Start(address);
}

}  // namespace kq::http
