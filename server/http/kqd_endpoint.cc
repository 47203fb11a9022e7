#include "server/http/kqd_endpoint.h"

#include <map>
#include <string>

#include "base/metrics.h"
#include "server/visibility/visibility.h"

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
  // Kueue's on-demand visibility API, as its aggregated API server serves
  // it (every method, so that a write is refused as Kubernetes does).
  const std::string visibility_paths =
      std::string(visibility::kPathPrefix) + ".*";
  auto visibility = [this](const httplib::Request& req,
                           httplib::Response& res) {
    ServeVisibility(req, res);
  };
  server.Get(visibility_paths, visibility);
  server.Post(visibility_paths, visibility);
  server.Put(visibility_paths, visibility);
  server.Patch(visibility_paths, visibility);
  server.Delete(visibility_paths, visibility);
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

void KqdEndpoint::ServeVisibility(const httplib::Request& req,
                                  httplib::Response& res) {
  visibility::Query query;
  // Kubernetes reads the first of a repeated parameter.
  for (const auto& [name, value] : req.params) query.emplace(name, value);
  const visibility::HttpAnswer answer =
      visibility::Serve(engine_, req.method, req.path, query);
  res.status = answer.status;
  res.set_content(answer.body, kJsonContentType);
}

absl::Status KqdEndpoint::Start(const HostPort& address) {
  return listener_.Start(address);
}

}  // namespace kq::http
