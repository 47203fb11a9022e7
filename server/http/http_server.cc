#include "server/http/http_server.h"

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace kq::http {

absl::StatusOr<HostPort> ParseHostPort(absl::string_view flag,
                                       absl::string_view address) {
  const size_t colon = address.rfind(':');
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", why, ": \"", address, "\""));
  };
  if (colon == absl::string_view::npos) {
    return invalid("want host:port (e.g. 127.0.0.1:8080)");
  }
  HostPort out;
  absl::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return invalid("the host is empty");
  out.host = std::string(host);
  if (!absl::SimpleAtoi(address.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return invalid("the port is not a number from 0 to 65535");
  }
  return out;
}

void Configure(httplib::Server& server, const ListenerOptions& options) {
  server.set_keep_alive_timeout(options.keep_alive_seconds);
  server.set_read_timeout(10, 0);
  server.set_write_timeout(10, 0);
  server.set_payload_max_length(options.max_request_bytes);
  const int threads = options.threads;
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // kq code does not throw, but a handler must never take the process down.
  server.set_exception_handler(
      [name = options.name](const httplib::Request& request,
                            httplib::Response& response, std::exception_ptr) {
        spdlog::error("{} server: {} {} failed with an exception", name,
                      request.method, request.path);
        response.status = 500;
        response.set_content("internal error", kTextContentType);
      });
}

absl::StatusOr<int> Bind(httplib::Server& server, const HostPort& address,
                         absl::string_view what) {
  int bound = -1;
  if (address.port == 0) {
    bound = server.bind_to_any_port(address.host);
  } else if (server.bind_to_port(address.host, address.port)) {
    bound = address.port;
  }
  if (bound <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot bind the ", what,
                                               " listener to ", address.host,
                                               ":", address.port));
  }
  return bound;
}

std::thread Serve(httplib::Server& server) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([&server, done] {
    server.listen_after_bind();
    done->store(true);
  });
  while (!server.is_running() && !done->load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return thread;
}

void StopServing(std::unique_ptr<httplib::Server>& server,
                 std::thread& thread) {
  if (server == nullptr) return;
  server->stop();
  if (thread.joinable()) thread.join();
  server.reset();
}

Listener::Listener(ListenerOptions options) : options_(std::move(options)) {
  if (options_.tls) {
    server_ = std::make_unique<httplib::SSLServer>(options_.tls);
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  Configure(*server_, options_);
}

Listener::~Listener() { Stop(); }

absl::Status Listener::Start(const HostPort& address) {
  absl::StatusOr<int> port = Bind(*server_, address, options_.name);
  if (!port.ok()) return port.status();
  port_ = *port;
  thread_ = Serve(*server_);
  return absl::OkStatus();
}

void Listener::Stop() { StopServing(server_, thread_); }

}  // namespace kq::http
