#pragma once

// kq's HTTP/1 listeners on cpp-httplib (Debian's libcpp-httplib-dev; gRPC
// has no HTTP/1 server and Prometheus cannot scrape gRPC): kqd's
// --http-listen port (/metrics, /healthz, /readyz, Kueue's visibility API)
// and the shim's health and webhook ports. Handlers run on the listener's
// own threads, never on kqd's engine thread.

#include <httplib.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kq::http {

inline constexpr char kTextContentType[] = "text/plain; charset=utf-8";
inline constexpr char kJsonContentType[] = "application/json";

// A "host:port" listen address split; "[::1]:80" gives host "::1".
struct HostPort {
  std::string host;
  int port = 0;
};
// InvalidArgument naming `flag` when `address` is not host:port with a port
// in 0..65535.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view flag,
                                       absl::string_view address);

struct ListenerOptions {
  // Requests served at once; the rest wait for a thread.
  int threads = 4;
  // Bounds how long Stop() waits for idle keep-alive connections.
  int keep_alive_seconds = 1;
  size_t max_request_bytes = 1 << 20;
  // Names the listener in logs and errors ("metrics", "webhook").
  std::string name = "http";
  // Set: HTTPS, with the OpenSSL context set up by this (which keeps
  // whatever it installs alive for the listener's life).
  std::function<bool(SSL_CTX&)> tls;
};

// Sets timeouts, the thread pool, SO_REUSEADDR without httplib's
// SO_REUSEPORT (which would let a second process take half the requests)
// and an exception handler answering 500.
void Configure(httplib::Server& server, const ListenerOptions& options);

// Binds to host:port (port 0: any free port); returns the port bound.
absl::StatusOr<int> Bind(httplib::Server& server, const HostPort& address,
                         absl::string_view what);

// Runs the accept loop of a bound server on a new thread, returning once it
// accepts, so that a stop right after cannot miss it.
std::thread Serve(httplib::Server& server);

// Stops a server started by Serve and joins its thread; nulls `server`.
void StopServing(std::unique_ptr<httplib::Server>& server, std::thread& thread);

// One configured, bound and serving listener, the usual use of the above.
class Listener {
 public:
  // Routes are registered on server() before Start().
  explicit Listener(ListenerOptions options);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  httplib::Server& server() { return *server_; }
  // Binds `address` and serves. Unavailable when it cannot bind.
  absl::Status Start(const HostPort& address);
  int port() const { return port_; }
  // Idempotent.
  void Stop();

 private:
  ListenerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace kq::http
