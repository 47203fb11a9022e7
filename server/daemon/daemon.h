#pragma once

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
};

// Reads the Kueue Configuration at `path`: a YAML or JSON file holding
// exactly one Configuration document. InvalidArgument naming the file and
// field when it is malformed; NotFound when it cannot be read.
absl::StatusOr<Configuration> ReadConfigurationFile(const std::string& path);

// Composition root: opens the store, starts the engine, serves gRPC (with
// health checking and reflection) until SIGTERM or SIGINT, then shuts down
// gracefully: in-flight calls finish, queued commands commit, the store
// closes. Returns the first error that prevents serving.
absl::Status Run(const Config& config);

}  // namespace kq::daemon
