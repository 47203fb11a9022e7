#pragma once

// Who is calling and whether they may: authentication (a verified client
// certificate, else a bearer token; then impersonation) and authorization
// (RBAC), the same for the gRPC and HTTP ports. Kubernetes' order: a
// request is authenticated, then authorized, before anything looks at its
// body or at what exists, so a refusal reveals nothing about other
// namespaces. Thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

#include "server/auth/auth_metrics.h"
#include "server/auth/policy_files.h"
#include "server/auth/principal.h"
#include "server/auth/rbac.h"

namespace kq::auth {

// The workload annotation naming who submitted it, which the owner rule
// reads. kqd sets it from the caller's identity and ignores a client's.
inline constexpr char kSubmitterAnnotation[] = "kq.dev/submitter";

// What a call presented.
struct Credentials {
  // The client certificate, PEM, only when the TLS handshake verified it.
  std::string verified_certificate;
  // The `authorization` header or metadata, when sent.
  std::optional<std::string> authorization;
  // `impersonate-user` and `impersonate-group`.
  std::optional<std::string> impersonate_user;
  std::vector<std::string> impersonate_groups;
};

struct AccessOptions {
  // Off: every caller is system:anonymous and may do anything (kqd then
  // serves only loopback unless told otherwise).
  bool enabled = false;
  // The submitter of a workload may run it (Heartbeat, Finish,
  // SetReclaimablePods) without kq-runner-role.
  bool owner_may_run = true;
};

// kq's refusals, so that every port and client words them alike.
inline constexpr char kUnauthenticatedPrefix[] =
    "kq: request could not be authenticated: ";

class Access {
 public:
  // `files` and `metrics` (may be null) must outlive this.
  Access(AccessOptions options, const PolicyFiles* files, AuthMetrics* metrics);

  bool enabled() const { return options_.enabled; }
  bool owner_may_run() const { return options_.owner_may_run; }

  // The caller, or UNAUTHENTICATED with kq's message (never echoing what
  // was sent), or PERMISSION_DENIED when impersonation is not allowed.
  absl::StatusOr<Principal> Authenticate(const Credentials& credentials);

  // Whether `principal` may make `request`.
  Decision Authorize(const Principal& principal,
                     const Attributes& request) const;

 private:
  absl::StatusOr<UserInfo> FromCertificate(const std::string& pem);
  absl::Status Unauthenticated(const std::string& reason,
                               absl::string_view message);

  const AccessOptions options_;
  const PolicyFiles* files_;
  AuthMetrics* metrics_;
  // Parsing a certificate costs more than the rest of a check; a client
  // sends the same one on every call of its connection.
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, UserInfo> certificates_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kq::auth
