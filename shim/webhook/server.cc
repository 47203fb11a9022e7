#include "shim/webhook/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>
#include <exception>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

#include "base/metrics.h"
#include "server/http/http_server.h"

namespace kq::shim::webhook {
namespace {

constexpr char kMutatePath[] = "/mutate-batch-v1-job";
constexpr char kRequestsTotal[] = "kq_shim_webhook_requests_total";
constexpr char kDurationTotal[] =
    "kq_shim_webhook_request_duration_seconds_total";
using http::kJsonContentType;
using http::kTextContentType;
// As controller-runtime: an AdmissionReview carries at most two objects of
// at most 3 MiB each, plus the request's own fields.
constexpr size_t kMaxRequestBytes = 7 * 1024 * 1024;

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// An AdmissionReview refusing a request that never reached MutateJob, so
// the API server shows the reason in its error.
std::string RefusalReview(int code, absl::string_view message) {
  return Dump(
      {{"apiVersion", "admission.k8s.io/v1"},
       {"kind", "AdmissionReview"},
       {"response",
        {{"uid", ""},
         {"allowed", false},
         {"status", {{"code", code}, {"message", std::string(message)}}}}}});
}

// "namespace/name" of the Job in a request, for logs; generateName when the
// API server has not named it yet.
std::string JobKey(const json& review) {
  const json* object = nullptr;
  std::string request_ns;
  if (auto request = review.find("request");
      request != review.end() && request->is_object()) {
    if (auto ns = request->find("namespace");
        ns != request->end() && ns->is_string()) {
      request_ns = ns->get<std::string>();
    }
    if (auto it = request->find("object"); it != request->end()) {
      object = &*it;
    }
  }
  std::string ns = request_ns;
  std::string name;
  if (object != nullptr && object->is_object()) {
    if (auto metadata = object->find("metadata");
        metadata != object->end() && metadata->is_object()) {
      auto field = [&](const char* key) {
        auto it = metadata->find(key);
        return it != metadata->end() && it->is_string() ? it->get<std::string>()
                                                        : std::string();
      };
      if (!field("namespace").empty()) ns = field("namespace");
      name = field("name");
      if (name.empty() && !field("generateName").empty()) {
        name = field("generateName") + "*";
      }
    }
  }
  return absl::StrCat(ns, "/", name);
}

// The operations of a JSONPatch response as "op path" strings.
std::string DescribePatch(const json& response) {
  std::string decoded;
  auto patch = response.find("patch");
  if (patch == response.end() || !patch->is_string() ||
      !absl::Base64Unescape(patch->get<std::string>(), &decoded)) {
    return "";
  }
  json ops = json::parse(decoded, nullptr, /*allow_exceptions=*/false);
  if (!ops.is_array()) return "";
  std::vector<std::string> parts;
  for (const json& op : ops) {
    if (!op.is_object()) continue;
    parts.push_back(absl::StrCat(
        op.value("op", ""), " ", op.value("path", ""),
        op.contains("value") ? absl::StrCat("=", Dump(op["value"])) : ""));
  }
  return absl::StrJoin(parts, ", ");
}

void Record(absl::string_view result, absl::Time start) {
  Metrics& metrics = Metrics::Global();
  metrics.Increment(kRequestsTotal, {{"result", std::string(result)}});
  metrics.Increment(kDurationTotal, {},
                    absl::ToDoubleSeconds(absl::Now() - start));
}

http::ListenerOptions ListenerOptionsFor(absl::string_view name) {
  http::ListenerOptions options;
  options.max_request_bytes = kMaxRequestBytes;
  options.name = std::string(name);
  return options;
}

}  // namespace

ShimServer::ShimServer(ShimServerOptions options)
    : options_(std::move(options)) {
  Metrics& metrics = Metrics::Global();
  metrics.Describe(kRequestsTotal, "counter",
                   "Admission requests to the batch/v1 Job mutating webhook, "
                   "by result (patched, allowed, denied, invalid).");
  metrics.Describe(kDurationTotal, "counter",
                   "Total seconds spent handling webhook requests; divide by "
                   "kq_shim_webhook_requests_total for the mean latency.");
}

ShimServer::~ShimServer() { Stop(); }

int ShimServer::https_port() const { return https_port_.load(); }
int ShimServer::http_port() const { return http_port_.load(); }

void ShimServer::HandleMutate(const httplib::Request& request,
                              httplib::Response& response) const {
  const absl::Time start = absl::Now();
  const std::string content_type = request.get_header_value("Content-Type");
  const std::string media_type =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(
          absl::string_view(content_type).substr(0, content_type.find(';'))));
  if (media_type != kJsonContentType) {
    std::string message = absl::StrCat("contentType=", content_type,
                                       ", expected application/json");
    spdlog::warn("webhook {}: refused: {}", kMutatePath, message);
    response.status = 415;
    response.set_content(RefusalReview(415, message), kJsonContentType);
    Record("invalid", start);
    return;
  }
  json review = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) {
    spdlog::warn("webhook {}: refused: the body is not valid JSON",
                 kMutatePath);
    response.status = 400;
    response.set_content(RefusalReview(400, "the body is not valid JSON"),
                         kJsonContentType);
    Record("invalid", start);
    return;
  }
  absl::StatusOr<json> answer = MutateJob(review, options_.webhook);
  if (!answer.ok()) {
    spdlog::warn("webhook {}: refused: {}", kMutatePath,
                 std::string(answer.status().message()));
    response.status = 400;
    response.set_content(RefusalReview(400, answer.status().message()),
                         kJsonContentType);
    Record("invalid", start);
    return;
  }

  const json& result = (*answer)["response"];
  const std::string job = JobKey(review);
  const std::string uid = result.value("uid", "");
  std::string decision;
  if (!result.value("allowed", false)) {
    decision = "denied";
    const json& status = result.contains("status") ? result["status"] : json();
    spdlog::warn("webhook: job {} uid={} denied: code={} {}", job, uid,
                 status.is_object() ? status.value("code", 0) : 0,
                 status.is_object() ? status.value("message", "") : "");
  } else if (result.contains("patch")) {
    decision = "patched";
    spdlog::info("webhook: job {} uid={} patched: {}", job, uid,
                 DescribePatch(result));
  } else {
    decision = "allowed";
    spdlog::info("webhook: job {} uid={} allowed unchanged", job, uid);
  }
  response.status = 200;
  response.set_content(Dump(*answer), kJsonContentType);
  Record(decision, start);
}

void ShimServer::HandleReadyz(httplib::Response& response) const {
  absl::Status ready =
      options_.readiness ? options_.readiness() : absl::OkStatus();
  if (ready.ok()) {
    response.status = 200;
    response.set_content("ok", kTextContentType);
    return;
  }
  response.status = 503;
  response.set_content(absl::StrCat("not ready: ", ready.message()),
                       kTextContentType);
}

void ShimServer::RegisterHealthRoutes(httplib::Server& server) const {
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content("ok", kTextContentType);
  });
  server.Get("/readyz", [this](const httplib::Request&,
                               httplib::Response& res) { HandleReadyz(res); });
  server.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(Metrics::Global().RenderPrometheus(),
                    kPrometheusContentType);
  });
}

absl::Status ShimServer::Start() {
  absl::MutexLock lock(&mu_);
  if (started_) {
    return absl::FailedPreconditionError("the shim server was already started");
  }
  started_ = true;
  // https_port < 0: health and metrics only (no webhook, no certificate).
  std::unique_ptr<httplib::Server> https;
  int bound_https_port = -1;
  if (options_.https_port >= 0) {
    if (options_.tls_cert_file.empty() || options_.tls_key_file.empty()) {
      return absl::InvalidArgumentError(
          "the webhook needs a TLS certificate and key file");
    }
    auto ssl = std::make_unique<httplib::SSLServer>(
        options_.tls_cert_file.c_str(), options_.tls_key_file.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot load the TLS certificate ", options_.tls_cert_file,
          " and key ", options_.tls_key_file));
    }
    https = std::move(ssl);
    http::Configure(*https, ListenerOptionsFor("webhook"));
    https->Post(kMutatePath,
                [this](const httplib::Request& req, httplib::Response& res) {
                  HandleMutate(req, res);
                });
    RegisterHealthRoutes(*https);
    absl::StatusOr<int> port =
        http::Bind(*https, {options_.address, options_.https_port}, "HTTPS");
    if (!port.ok()) return port.status();
    bound_https_port = *port;
  } else if (options_.http_port < 0) {
    return absl::InvalidArgumentError(
        "nothing to serve: neither the webhook nor the health port is on");
  }

  std::unique_ptr<httplib::Server> http;
  int http_port = -1;
  if (options_.http_port >= 0) {
    http = std::make_unique<httplib::Server>();
    http::Configure(*http, ListenerOptionsFor("health"));
    RegisterHealthRoutes(*http);
    absl::StatusOr<int> bound =
        http::Bind(*http, {options_.address, options_.http_port}, "HTTP");
    if (!bound.ok()) {
      // The HTTPS socket is bound but nobody listens yet: run and stop it
      // so its socket is closed.
      if (https != nullptr) {
        std::thread thread = http::Serve(*https);
        http::StopServing(https, thread);
      }
      return bound.status();
    }
    http_port = *bound;
  }

  if (https != nullptr) {
    https_ = std::move(https);
    https_thread_ = http::Serve(*https_);
    https_port_ = bound_https_port;
  }
  if (http != nullptr) {
    http_ = std::move(http);
    http_thread_ = http::Serve(*http_);
    http_port_ = http_port;
  }
  spdlog::info(
      "shim server: webhook {}{}",
      https_ != nullptr ? absl::StrCat("https://", options_.address, ":",
                                       https_port_.load(), kMutatePath)
                        : std::string("off"),
      http_ != nullptr ? absl::StrCat(", health and metrics http://",
                                      options_.address, ":", http_port_.load())
                       : std::string());
  return absl::OkStatus();
}

void ShimServer::Stop() {
  absl::MutexLock lock(&mu_);
  if (https_ == nullptr && http_ == nullptr) return;
  http::StopServing(https_, https_thread_);
  http::StopServing(http_, http_thread_);
  spdlog::info("shim server: stopped");
}

}  // namespace kq::shim::webhook
