#include "server/http/kqd_endpoint.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

#include "base/metrics.h"
#include "server/visibility/visibility.h"

namespace kq::http {

namespace {

ListenerOptions EndpointListener(auth::TlsFiles* tls) {
  ListenerOptions options{.threads = 4, .name = "kqd http"};
  if (tls != nullptr) {
    options.tls = [tls](SSL_CTX& ctx) { return tls->SetUp(ctx); };
  }
  return options;
}

// A Kubernetes Status, as kube-apiserver refuses a request.
std::string StatusJson(int code, const std::string& reason,
                       const std::string& message) {
  return nlohmann::json{{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"metadata", nlohmann::json::object()},
                        {"status", "Failure"},
                        {"message", message},
                        {"reason", reason},
                        {"code", code}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The request a visibility path makes: get on the pendingworkloads
// subresource of a ClusterQueue or of a namespace's LocalQueue. Other
// paths are the cluster-scope get of the subresource, which the
// visibility module answers 404 for those allowed to ask.
auth::Attributes VisibilityRequest(absl::string_view path) {
  auth::Attributes a;
  a.verb = "get";
  a.api_group = auth::kVisibilityGroup;
  a.subresource = "pendingworkloads";
  a.resource = "clusterqueues";
  std::vector<std::string> parts = absl::StrSplit(
      path.substr(std::string_view(visibility::kPathPrefix).size()), '/');
  if (parts.size() >= 5 && parts[0] == "namespaces" &&
      parts[2] == "localqueues") {
    a.resource = "localqueues";
    a.namespace_name = parts[1];
    a.name = parts[3];
  } else if (parts.size() >= 3 && parts[0] == "clusterqueues") {
    a.name = parts[1];
  }
  return a;
}

}  // namespace

KqdEndpoint::KqdEndpoint(engine::Engine& engine,
                         const metrics::KqdMetrics& metrics,
                         EndpointSecurity security)
    : engine_(engine),
      metrics_(metrics),
      security_(security),
      listener_(EndpointListener(security.tls)) {
  httplib::Server& server = listener_.server();
  server.Get("/metrics",
             [this](const httplib::Request& req, httplib::Response& res) {
               auth::Attributes asked;
               asked.verb = "get";
               asked.path = "/metrics";
               auth::AuditEvent event;
               if (!Allow(req, res, asked, &event)) return;
               res.status = 200;
               res.set_content(metrics_.Render(), kPrometheusContentType);
               Audit(std::move(event), res);
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

bool KqdEndpoint::Allow(const httplib::Request& req, httplib::Response& res,
                        const auth::Attributes& request,
                        auth::AuditEvent* event) {
  event->audit_id = auth::NewAuditId();
  event->received = absl::Now();
  event->method = absl::StrCat(req.method, " ", req.path);
  event->source_ip = req.remote_addr;
  event->user_agent = req.get_header_value("User-Agent");
  auth::DescribeRequest(request, *event);
  if (security_.access == nullptr || !security_.access->enabled()) {
    event->principal = auth::Anonymous();
    event->allowed = true;
    event->reason = "authorization is off";
    return true;
  }
  auth::Credentials credentials;
  credentials.verified_certificate = auth::VerifiedPeerCertificate(req.ssl);
  if (req.has_header("Authorization")) {
    credentials.authorization = req.get_header_value("Authorization");
  }
  if (req.has_header("Impersonate-User")) {
    credentials.impersonate_user = req.get_header_value("Impersonate-User");
  }
  for (size_t i = 0; i < req.get_header_value_count("Impersonate-Group"); ++i) {
    credentials.impersonate_groups.push_back(
        req.get_header_value("Impersonate-Group", i));
  }
  absl::StatusOr<auth::Principal> principal =
      security_.access->Authenticate(credentials);
  if (!principal.ok()) {
    const bool denied =
        principal.status().code() == absl::StatusCode::kPermissionDenied;
    const int code = denied ? 403 : 401;
    res.status = code;
    res.set_content(StatusJson(code, denied ? "Forbidden" : "Unauthorized",
                               std::string(principal.status().message())),
                    kJsonContentType);
    event->reason = std::string(principal.status().message());
    Audit(std::move(*event), res);
    return false;
  }
  event->principal = *principal;
  const auth::Decision decision =
      security_.access->Authorize(*principal, request);
  event->allowed = decision.allowed;
  event->reason = decision.reason;
  if (!decision.allowed) {
    res.status = 403;
    res.set_content(StatusJson(403, "Forbidden", decision.reason),
                    kJsonContentType);
    Audit(std::move(*event), res);
    return false;
  }
  return true;
}

void KqdEndpoint::Audit(auth::AuditEvent event, const httplib::Response& res) {
  if (security_.audit == nullptr) return;
  event.completed = absl::Now();
  event.code = res.status;
  if (res.status >= 400) {
    // The refusal's message, not the body of an answer.
    auto message = nlohmann::json::parse(res.body, nullptr, false);
    if (message.is_object() && message.contains("message") &&
        message["message"].is_string()) {
      event.message = message["message"].get<std::string>();
    }
  }
  security_.audit->Record(std::move(event));
}

void KqdEndpoint::ServeVisibility(const httplib::Request& req,
                                  httplib::Response& res) {
  auth::AuditEvent event;
  if (!Allow(req, res, VisibilityRequest(req.path), &event)) return;
  visibility::Query query;
  // Kubernetes reads the first of a repeated parameter.
  for (const auto& [name, value] : req.params) query.emplace(name, value);
  const visibility::HttpAnswer answer =
      visibility::Serve(engine_, req.method, req.path, query);
  res.status = answer.status;
  res.set_content(answer.body, kJsonContentType);
  Audit(std::move(event), res);
}

absl::Status KqdEndpoint::Start(const HostPort& address) {
  return listener_.Start(address);
}

}  // namespace kq::http
