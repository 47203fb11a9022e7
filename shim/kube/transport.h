#pragma once

// The HTTP(S) layer under Client: TLS and authentication from a Config,
// pooled libcurl handles, bounded retries with jittered backoff, and the
// mapping of HTTP statuses to absl codes that client.h documents. Client
// builds the Kubernetes verbs on it; tests use it for the fixture's
// control endpoints, which are not Kubernetes resources.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "shim/kube/client.h"

namespace kq::shim::kube {

struct HttpRequest {
  // GET, POST, PUT, PATCH or DELETE.
  std::string method = "GET";
  // Absolute path and query, appended to Config::server
  // ("/apis/batch/v1/namespaces/ns/jobs?limit=500").
  std::string path;
  // Sent when non-empty, with `content_type`.
  std::string body;
  std::string content_type = "application/json";
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

// One API server's HTTP endpoint. Thread-safe: every call borrows its own
// libcurl handle from a small pool, so connections are kept and reused.
class HttpTransport {
 public:
  // Reads the CA, client certificate and key files once (as client-go
  // does); INVALID_ARGUMENT for a malformed server URL or a certificate
  // without its key, FAILED_PRECONDITION for an unreadable file.
  static absl::StatusOr<std::unique_ptr<HttpTransport>> Create(
      const Config& config, const ClientOptions& options);
  ~HttpTransport();

  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Sends `request`, retrying 429, 5xx and connection failures up to
  // ClientOptions::max_attempts times (Retry-After wins over the backoff
  // when the server sends it). A 2xx status returns the response; any other
  // status returns the error client.h maps it to. A certificate the CA does
  // not verify is UNAVAILABLE at once: retrying cannot fix it.
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request);

  // Sends `request` and hands a 2xx body to `on_data` piece by piece as it
  // arrives. Returns OK when the server ends the body or `on_data` returns
  // false, CANCELLED within about 100 ms of `stop` becoming true, the
  // mapped error for a non-2xx status, and UNAVAILABLE when the connection
  // breaks after data was delivered (failures before any data are retried
  // as Send does). `timeout` bounds the whole exchange; reaching it after
  // data was delivered counts as the server ending the body.
  absl::Status Stream(const HttpRequest& request, absl::Duration timeout,
                      const std::atomic<bool>* stop,
                      const std::function<bool(absl::string_view)>& on_data);

 private:
  struct Impl;
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The absl status for a non-2xx answer to `request`, from the HTTP status
// and the API server's Status body (its message, and its reason to tell
// AlreadyExists from Conflict on 409).
absl::Status StatusFromHttp(const HttpRequest& request, int http_status,
                            absl::string_view body);

// Percent-encodes a query parameter value (RFC 3986 unreserved characters
// stay as they are).
std::string QueryEscape(absl::string_view value);

}  // namespace kq::shim::kube
