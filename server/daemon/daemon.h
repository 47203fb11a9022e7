#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/core/config.h"

namespace kq::daemon {

// kqd's configuration, from its flags.
struct Config {
  // host:port to serve gRPC on; port 0 picks a free port.
  std::string listen = "127.0.0.1:7070";
  // Directory holding the SQLite database (created if missing).
  std::string data_dir = "./data";
  // When set, the chosen port is written here once kqd serves (for tests
  // and scripts that start kqd on port 0).
  std::string port_file;
  // host:port of the HTTP port (/metrics, /healthz, /readyz, Kueue's
  // visibility API); empty: none. Port 0 picks a free port.
  std::string http_listen = "127.0.0.1:8080";
  // As port_file, for the HTTP port.
  std::string http_port_file;
  // SQLite synchronous=FULL (durable across power loss) unless false.
  bool sync_full = true;
  std::string log_level = "info";
  // A Kueue Configuration document (config.kueue.x-k8s.io/v1beta1 or
  // v1beta2); empty: Kueue's defaults. Only its admission settings
  // (fairSharing, resources) are used.
  std::string config_file;
  // How long an evicted workload whose runner holds a live lease keeps its
  // quota while waiting for the runner to confirm the stop.
  absl::Duration eviction_grace = absl::Seconds(30);
  // Security (server/auth). TLS on both ports with --tls-cert and
  // --tls-key, re-read every tls_reload_interval; client certificates
  // verified against client_ca when sent.
  std::string tls_cert;
  std::string tls_key;
  std::string client_ca;
  absl::Duration tls_reload_interval = absl::Seconds(10);
  // Bearer tokens by hash; RBAC bindings. An authz_file turns
  // authentication and authorization on. Both are re-read when they
  // change (polled every policy_reload_interval) and on SIGHUP.
  std::string token_file;
  std::string authz_file;
  absl::Duration policy_reload_interval = absl::Seconds(2);
  bool owner_may_run = true;
  // Audit log: a file, or "-" for standard output; empty: none.
  std::string audit_log;
  int audit_log_max_size_mb = 100;
  int audit_log_max_backups = 5;
  // Serve a non-loopback address without authentication or without TLS,
  // which kqd otherwise refuses.
  bool insecure_allow_unauthenticated = false;
  // Watch events kept, in memory and in the database; a watch from an
  // older revision is answered OUT_OF_RANGE. No flag: tests that need that
  // answer keep only a few.
  size_t event_retention = 100000;
};

// Reads the Kueue Configuration at `path`: a YAML or JSON file holding
// exactly one Configuration document. InvalidArgument naming the file and
// field when it is malformed; NotFound when it cannot be read.
absl::StatusOr<Configuration> ReadConfigurationFile(const std::string& path);

// Composition root: a serving kqd, made of the store, the engine and the
// gRPC server (with health checking and reflection). Run() serves one until
// a signal; tests start one in-process (tests/testing/kqd_server.h), so
// that they run the very kqd the binary runs. Stop from one thread.
class Server {
 public:
  // Opens the store, starts the engine, serves gRPC on config.listen and
  // then writes config.port_file (when set). Returns the first error that
  // prevents serving. config.log_level is not used: logging belongs to the
  // process (logging::Init).
  static absl::StatusOr<std::unique_ptr<Server>> Start(const Config& config);
  // Stops it if Stop was not called.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The port it serves on: config.listen's, or the one picked for port 0.
  int port() const { return port_; }
  // The HTTP port, or 0 when config.http_listen is empty.
  int http_port() const;

  // Re-reads --token-file and --authz-file now (SIGHUP). The first
  // failure, with the old contents kept in force; OK without them.
  absl::Status ReloadPolicy();

  // Shuts down gracefully: takes no new call, ends the calls that wait for
  // kqd's end (Watch, Admit), lets the others finish (for up to 5 s), then
  // commits the queued commands. The database closes when the Server goes.
  // Idempotent.
  void Stop();

 private:
  struct Parts;
  Server(std::unique_ptr<Parts> parts, int port);

  std::unique_ptr<Parts> parts_;
  int port_;
};

// Checks the security flags together, before anything starts: refuses a
// non-loopback address without authentication or without TLS (unless
// insecure_allow_unauthenticated), identities without bindings, and a
// half-given certificate. Also warns of what is allowed but unsafe.
absl::Status CheckSecurity(const Config& config);

// kqd's main loop: blocks SIGTERM, SIGINT and SIGHUP, starts a Server,
// reloads the policy files on SIGHUP, serves until SIGTERM or SIGINT
// arrives, then stops it. Returns the first error that prevents
// serving.
absl::Status Run(const Config& config);

}  // namespace kq::daemon
