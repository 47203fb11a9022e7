#pragma once

// A real kqd for tests, in the test's own process: daemon::Server, the very
// composition the kqd binary runs, on a loopback port with a fresh data
// directory, and a gRPC client of it. Starting one takes a few milliseconds
// (no exec, no port file to poll), so a test or a test suite can have its
// own.
//
// Example:
//   absl::StatusOr<std::unique_ptr<KqdServer>> kqd = KqdServer::Start();
//   ASSERT_TRUE(kqd.ok()) << kqd.status();
//   (*kqd)->client().Apply(request);

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "kq/client/client.h"
#include "server/daemon/daemon.h"
#include "tests/testing/temp_dir.h"

namespace kq::testing {

struct KqdServerOptions {
  // daemon::Config::event_retention.
  size_t event_retention = daemon::Config().event_retention;
};

class KqdServer {
 public:
  // Starts kqd on 127.0.0.1 (port 0: one of the kernel's choosing) with its
  // database in a new directory under the test's temporary directory, and
  // SQLite's synchronous=NORMAL: a test does not outlive a power loss.
  static absl::StatusOr<std::unique_ptr<KqdServer>> Start(
      const KqdServerOptions& options = {});
  // Stops kqd as SIGTERM stops the binary, then removes its directory.
  ~KqdServer();
  KqdServer(const KqdServer&) = delete;
  KqdServer& operator=(const KqdServer&) = delete;

  // host:port of kqd.
  std::string target() const;
  // A gRPC client of kqd (client-lib's NewGrpcClient), made at Start.
  // Thread-safe, as every Client is.
  client::Client& client() { return *client_; }
  // Another client, with its own channel; options.target is replaced by
  // target().
  std::unique_ptr<client::Client> NewClient(
      client::ClientOptions options = {.deadline = absl::Seconds(10)}) const;

  // Stops kqd now, as SIGTERM stops the binary (for a test of what clients
  // see once it is gone). Idempotent; the destructor calls it.
  void Stop();

 private:
  KqdServer() = default;

  // Declared first so that it goes last, after the server has closed the
  // database in it.
  ScopedTempDir dir_{"kqd"};
  std::unique_ptr<daemon::Server> server_;
  std::unique_ptr<client::Client> client_;
};

}  // namespace kq::testing
