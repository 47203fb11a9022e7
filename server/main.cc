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
