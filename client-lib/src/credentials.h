#pragma once

// How the gRPC client proves who it is to kqd and checks that it talks to
// kqd (security contract, issue 30): the TLS files it reads, the bearer
// token it sends and the rule that keeps a token off plaintext connections
// to other machines. Internal to client-lib; grpc_client.cc and the tests
// use it.

#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "kq/client/client.h"

namespace kq::client::internal {

// Whether every address `target` (a gRPC target: "host:port", "[::1]:port",
// "dns:///host:port", "ipv4:a:p,b:p", "ipv6:[::1]:p", "unix:PATH", ...)
// names is on this machine: 127.0.0.0/8, ::1 (and ::ffff:127.x.x.x),
// "localhost", or a Unix socket. A host name other than localhost is not,
// whatever it resolves to.
bool IsLoopbackTarget(absl::string_view target);

// Checks that the credential fields of `options` fit together, reading no
// file: a client certificate and its key come together and need TLS
// (tls_ca_file), so does tls_server_name; token and token_file exclude each
// other; a token (or token file) without TLS needs a loopback target; the
// token and the impersonation fields are valid metadata values. OK, or
// INVALID_ARGUMENT saying which fields and what to do.
absl::Status ValidateCredentialOptions(const ClientOptions& options);

// The contents of the credential file at `path`, which holds `what` ("TLS
// CA", "client certificate", ...), for a precise error. INVALID_ARGUMENT
// `cannot read the <what> file "<path>": <strerror>` when it cannot be
// read, and `the <what> file "<path>" is empty` for an empty file.
absl::StatusOr<std::string> ReadCredentialFile(absl::string_view what,
                                               const std::string& path);

// Reads the PEM files `options` names: CA bundle, client certificate and
// key. Each must hold the PEM block it is for ("CERTIFICATE", "PRIVATE
// KEY"), or INVALID_ARGUMENT names the file and what it lacks.
struct TlsFiles {
  std::string ca;
  std::string cert;
  std::string key;
};
absl::StatusOr<TlsFiles> ReadTlsFiles(const ClientOptions& options);

// A bearer token that fits in `authorization: Bearer <token>`: printable
// ASCII without spaces. INVALID_ARGUMENT naming `source` (e.g. `token file
// "/x"`) otherwise.
absl::Status ValidateToken(absl::string_view token, absl::string_view source);

// The bearer token of a token file, as a Kubernetes client reads a service
// account token: read at the first use, then again when `refresh` has
// passed, so a rotated token is picked up. Leading and trailing whitespace
// (a final newline) is dropped. Once a token was read, a failed re-read
// keeps it (the file may be in the middle of its replacement). Thread-safe.
class TokenFile {
 public:
  explicit TokenFile(std::string path,
                     absl::Duration refresh = absl::Minutes(1))
      : path_(std::move(path)), refresh_(refresh) {}

  // The token, or ReadCredentialFile's / ValidateToken's INVALID_ARGUMENT
  // when no token was ever read.
  absl::StatusOr<std::string> Get() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::string path_;
  const absl::Duration refresh_;
  absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace kq::client::internal
