#pragma once

// Runs tests/k8s/fake_apiserver.py (the Kubernetes API server fixture) as a
// child process for C++ tests of the shim: a fresh directory with its
// certificates and kubeconfig, a free port, and its control endpoints.
//
// Example:
//   ASSERT_OK_AND_ASSIGN(std::unique_ptr<FakeApiServer> server,
//                        FakeApiServer::Start());
//   ASSERT_OK_AND_ASSIGN(kube::Config config, server->LoadConfig());
//   ASSERT_OK_AND_ASSIGN(auto client, kube::Client::Create(config));

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

#include "shim/kube/client.h"

namespace kq::testing {

struct FakeApiServerOptions {
  // The bearer token it accepts; empty: the fixture's "kq-test-token".
  std::string token;
  // --job-runtime and --pod-stop-seconds; negative: the fixture's default.
  double job_runtime_seconds = -1;
  double pod_stop_seconds = -1;
  // --watch-window (events kept for watch replay); 0: the default.
  int watch_window = 0;
  // Appended to the command line as they are.
  std::vector<std::string> extra_args;
};

// One fixture process, killed (with anything it started) and its directory
// removed on destruction. Thread-safe after Start(): the accessors are
// constant and each control call uses its own connection.
class FakeApiServer {
 public:
  // Starts the fixture with /usr/bin/python3 (KQ_PYTHON) on 127.0.0.1 port
  // 0 and waits up to 60 s for its READY line. INTERNAL when it exits
  // first, DEADLINE_EXCEEDED when it does not get ready; the message has
  // the tail of its log.
  static absl::StatusOr<std::unique_ptr<FakeApiServer>> Start(
      FakeApiServerOptions options = {});
  ~FakeApiServer();

  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // "https://127.0.0.1:PORT".
  const std::string& url() const { return url_; }
  // The fixture's directory: ca.crt, server.crt, server.key, kubeconfig.
  const std::string& dir() const { return dir_; }
  std::string kubeconfig_path() const { return dir_ + "/kubeconfig"; }
  std::string ca_path() const { return dir_ + "/ca.crt"; }
  // Its stderr (request errors, controller messages), for failure output.
  std::string log_path() const { return dir_ + "/fixture.log"; }
  const std::string& token() const { return token_; }
  pid_t pid() const { return pid_; }

  // The kubeconfig the fixture wrote, loaded as the shim loads one.
  absl::StatusOr<shim::kube::Config> LoadConfig() const;

  // POST /fixture/compact: forget the watch history, so watches from an
  // older resourceVersion get 410 Gone; with `close_watches`, open watches
  // get a 410 ERROR event at once. Returns the resourceVersion compacted
  // at.
  absl::StatusOr<std::string> Compact(bool close_watches = false);
  // GET /fixture/requests: every request received, oldest first, as
  // {method, path, query, contentType, body}.
  absl::StatusOr<nlohmann::json> Requests();
  // DELETE /fixture/requests: start the record afresh.
  absl::Status ClearRequests();

  // SIGKILL now (to test a vanished server); the destructor does the rest.
  void Kill();

 private:
  FakeApiServer() = default;
  absl::StatusOr<nlohmann::json> Control(const std::string& method,
                                         const std::string& path);

  std::string dir_;
  std::string url_;
  std::string token_;
  pid_t pid_ = -1;
};

}  // namespace kq::testing
