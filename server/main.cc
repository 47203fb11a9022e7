// kqd: flags -> Config -> daemon::Run(). Nothing else lives here.

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "base/binary.h"
#include "server/daemon/daemon.h"
#include "server/logging/logging.h"

int main(int argc, char** argv) {
  kq::InitBinary();
  kq::daemon::Config config;
  CLI::App app{"kqd: Kueue's admission model as a durable gRPC service"};
  app.add_option("--listen", config.listen,
                 "host:port to serve gRPC on (port 0 picks one)")
      ->capture_default_str();
  app.add_option("--data-dir", config.data_dir,
                 "directory of the SQLite database")
      ->capture_default_str();
  app.add_option("--port-file", config.port_file,
                 "write the chosen port here once serving");
  app.add_option("--http-listen", config.http_listen,
                 "host:port of the HTTP port: /metrics, /healthz, /readyz and "
                 "Kueue's visibility API (empty: off; port 0 picks one)")
      ->capture_default_str();
  app.add_option("--http-port-file", config.http_port_file,
                 "write the chosen HTTP port here once serving");
  app.add_option("--sqlite-sync-full", config.sync_full,
                 "SQLite synchronous=FULL (true) or NORMAL (false)")
      ->capture_default_str();
  app.add_option("--config", config.config_file,
                 "Kueue Configuration file (fairSharing, resources)");
  std::string eviction_grace = "30s";
  app.add_option("--eviction-grace", eviction_grace,
                 "how long an evicted workload's runner has to confirm the "
                 "stop before its quota is released (e.g. 30s, 2m)")
      ->capture_default_str();
  app.add_option("--tls-cert", config.tls_cert,
                 "serving certificate (PEM) for TLS on the gRPC and HTTP "
                 "ports; re-read when it changes");
  app.add_option("--tls-key", config.tls_key,
                 "private key (PEM) of --tls-cert");
  app.add_option("--client-ca", config.client_ca,
                 "CA bundle verifying client certificates (CN = user, O = "
                 "groups); a client certificate is optional but verified");
  std::string tls_reload_interval = "10s";
  app.add_option("--tls-reload-interval", tls_reload_interval,
                 "how often the TLS files are checked for changes")
      ->capture_default_str();
  app.add_option("--token-file", config.token_file,
                 "bearer tokens, one a line: sha256:<hex of the token> "
                 "<user> [<group>,...]; re-read on change or SIGHUP");
  app.add_option("--authz-file", config.authz_file,
                 "Kubernetes RBAC bindings (RoleBinding, ClusterRoleBinding, "
                 "ClusterRole, Role) naming Kueue's ClusterRoles; turns "
                 "authentication and authorization on; re-read on change "
                 "or SIGHUP");
  app.add_option("--owner-may-run", config.owner_may_run,
                 "the submitter of a workload may heartbeat and finish it "
                 "without kq-runner-role")
      ->capture_default_str();
  app.add_option("--audit-log", config.audit_log,
                 "audit log, one JSON Event a line (- for stdout)");
  app.add_option("--audit-log-maxsize", config.audit_log_max_size_mb,
                 "megabytes before the audit log rotates")
      ->capture_default_str();
  app.add_option("--audit-log-maxbackup", config.audit_log_max_backups,
                 "rotated audit logs kept")
      ->capture_default_str();
  app.add_flag("--insecure-allow-unauthenticated",
               config.insecure_allow_unauthenticated,
               "serve a non-loopback address without --authz-file or "
               "without TLS");
  app.add_option("--log-level", config.log_level,
                 "trace, debug, info, warn or error")
      ->capture_default_str();
  std::string log_format = "text";
  app.add_option("--log-format", log_format,
                 "text (for people) or json (one object a line, for log "
                 "pipelines)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!absl::ParseDuration(eviction_grace, &config.eviction_grace) ||
      config.eviction_grace < absl::ZeroDuration()) {
    std::fprintf(stderr, "kqd: --eviction-grace: not a duration: %s\n",
                 eviction_grace.c_str());
    return 2;
  }

  if (!absl::ParseDuration(tls_reload_interval, &config.tls_reload_interval) ||
      config.tls_reload_interval < absl::Seconds(1)) {
    std::fprintf(stderr,
                 "kqd: --tls-reload-interval: not a duration of at least 1s: "
                 "%s\n",
                 tls_reload_interval.c_str());
    return 2;
  }

  absl::StatusOr<kq::logging::Format> format =
      kq::logging::ParseFormat(log_format);
  if (!format.ok()) {
    std::fprintf(stderr, "kqd: --log-format: %s\n",
                 std::string(format.status().message()).c_str());
    return 2;
  }

  absl::Status status = kq::logging::Init(
      {.level = config.log_level, .format = *format, .name = "kqd"});
  if (status.ok()) status = kq::daemon::Run(config);
  if (!status.ok()) {
    std::fprintf(stderr, "kqd: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
