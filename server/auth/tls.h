#pragma once

// TLS on kqd's two ports from three files (--tls-cert, --tls-key,
// --client-ca), re-read while kqd runs, so that certificates rotate without
// a restart. The gRPC port uses gRPC's own FileWatcherCertificateProvider
// (Debian's libgrpc++ 1.51; experimental, hence wrapped here); the HTTP
// port's OpenSSL context picks the current files at each handshake from
// TlsFiles. Rotate by writing the new files into a new directory and
// renaming it over the old one (or flipping a symlink): a reader must never
// see a new certificate beside an old key. A client certificate is asked
// for and verified when sent, but not required, so a caller without one
// still reaches kqd and gets a clear UNAUTHENTICATED.

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"

#include "server/auth/auth_metrics.h"
#include "server/auth/x509.h"

namespace kq::auth {

struct TlsOptions {
  std::string cert_file;
  std::string key_file;
  // Empty: no client certificates (tokens only).
  std::string client_ca_file;
  absl::Duration reload_interval = absl::Seconds(10);
  // A directory of kqd's own (created, mode 0700) where the files gRPC's
  // provider reads are kept: copies of the last files that loaded, so that
  // a bad rotation (a key that does not match, an empty CA bundle) never
  // reaches gRPC, which would fail every new handshake with it.
  std::string staging_dir;
};

class TlsFiles {
 public:
  // Reads and checks the files: InvalidArgument naming the flag when one
  // cannot be read or parsed, or the key does not match the certificate.
  // `metrics` may be null and must outlive this.
  static absl::StatusOr<std::unique_ptr<TlsFiles>> Open(TlsOptions options,
                                                        AuthMetrics* metrics);
  ~TlsFiles();
  TlsFiles(const TlsFiles&) = delete;
  TlsFiles& operator=(const TlsFiles&) = delete;

  // Credentials for grpc::ServerBuilder::AddListeningPort.
  std::shared_ptr<grpc::ServerCredentials> GrpcCredentials() const;

  // Sets up an OpenSSL server context (cpp-httplib's SSLServer) so that
  // each handshake uses the files as they are then. Must outlive `ctx`.
  bool SetUp(SSL_CTX& ctx);

  // The serving certificate in use (for tests and the expiry gauge).
  CertificateInfo server_certificate() const;

  // Polls the files now instead of at the next interval (tests).
  void PollNow();

 private:
  struct Identity;
  struct ClientCas;
  explicit TlsFiles(TlsOptions options, AuthMetrics* metrics);
  // Reads the files. The identity and the CA bundle are taken on their
  // own; one that fails to load keeps what was in use (the first failure
  // is returned).
  absl::Status Load();
  // What the files hold now: the one in use when unchanged.
  absl::StatusOr<std::shared_ptr<const Identity>> ReadIdentity() const;
  absl::StatusOr<std::shared_ptr<const ClientCas>> ReadClientCas() const;
  // Writes the PEM into a new generation under staging_dir and points
  // staging_dir/current at it (one rename: gRPC never reads a mix).
  absl::Status Stage(const Identity& identity, const ClientCas* cas);
  static int CertCallback(SSL* ssl, void* arg);

  const TlsOptions options_;
  AuthMetrics* metrics_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Identity> identity_ ABSL_GUARDED_BY(mu_);
  // Null without --client-ca.
  std::shared_ptr<const ClientCas> client_cas_ ABSL_GUARDED_BY(mu_);
  int generation_ = 0;  // Load's thread only
  absl::Notification stop_;
  std::thread watcher_;
};

// The client certificate of an OpenSSL connection, PEM, when the handshake
// verified it; empty otherwise.
std::string VerifiedPeerCertificate(const SSL* ssl);

}  // namespace kq::auth
