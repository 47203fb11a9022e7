#include "tests/testing/kqd_server.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"

namespace kq::testing {

absl::StatusOr<std::unique_ptr<KqdServer>> KqdServer::Start(
    const KqdServerOptions& options) {
  // kqd's info lines (serving on, stopped at revision) would bury the
  // test's own output; warnings and errors still show.
  spdlog::set_level(spdlog::level::warn);
  std::unique_ptr<KqdServer> kqd(new KqdServer());
  if (kqd->dir_.path().empty()) {
    return absl::InternalError("cannot make kqd's data directory");
  }
  daemon::Config config;
  config.listen = "127.0.0.1:0";
  config.http_listen = "127.0.0.1:0";
  config.data_dir = kqd->dir_.path();
  config.sync_full = false;
  config.event_retention = options.event_retention;
  KQ_ASSIGN_OR_RETURN(kqd->server_, daemon::Server::Start(config));
  kqd->client_ = kqd->NewClient();
  // Connect with a read, which the client retries on UNAVAILABLE, before a
  // test's first call, which may be one that is sent once (Apply). On the
  // fresh Debian machine's chroot (no /sys) gRPC 1.51 now and then failed
  // a loopback connect with "No such file or directory", seemingly errno
  // clobbered between connect() and its check; the retry reconnects.
  KQ_RETURN_IF_ERROR(kqd->client_->ListObjects("ResourceFlavor", "").status());
  return kqd;
}

KqdServer::~KqdServer() {
  // The client's channel first: an idle connection would otherwise be one
  // more for the server's stop to close.
  client_.reset();
  Stop();
}

void KqdServer::Stop() {
  if (server_ != nullptr) server_->Stop();
}

std::string KqdServer::target() const {
  return absl::StrCat("127.0.0.1:", server_->port());
}

std::unique_ptr<client::Client> KqdServer::NewClient(
    client::ClientOptions options) const {
  options.target = target();
  return client::NewGrpcClient(options);
}

}  // namespace kq::testing
