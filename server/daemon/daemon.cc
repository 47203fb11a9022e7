#include "server/daemon/daemon.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"
#include "manifest/manifest.h"
#include "server/api/admit_calls.h"
#include "server/api/in_flight_calls.h"
#include "server/api/services.h"
#include "server/codec/codec.h"
#include "server/common/clock.h"
#include "server/engine/engine.h"
#include "server/http/http_server.h"
#include "server/http/kqd_endpoint.h"
#include "server/metrics/kqd_metrics.h"
#include "server/store/sqlite/sqlite_store.h"

namespace kq::daemon {
namespace {

// See where it is used.
constexpr int kMaxIdlePollers = 64;
// How long a stopping kqd lets the calls it has finish before it cancels
// them.
constexpr absl::Duration kShutdownGrace = absl::Seconds(5);

// Writes `port` to `path` atomically (a reader never sees half a number).
void WritePortFile(const std::string& path, int port) {
  std::ofstream out(path + ".tmp");
  out << port << "\n";
  out.close();
  std::error_code ec;
  std::filesystem::rename(path + ".tmp", path, ec);
}

}  // namespace

absl::StatusOr<Configuration> ReadConfigurationFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("--config: cannot read ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<manifest::Document>> docs =
      manifest::ParseManifests(text.str());
  if (!docs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", docs.status().message()));
  }
  constexpr absl::string_view kWant =
      "expected exactly one document of kind Configuration "
      "(config.kueue.x-k8s.io/v1beta1 or v1beta2)";
  if (docs->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", kWant, ", got ", docs->size(), " documents"));
  }
  const manifest::Document& doc = (*docs)[0];
  // Name what the file holds instead, unless the document is too broken to
  // have a kind: then its own error says more.
  if (doc.kind != "Configuration" && !(doc.kind.empty() && !doc.status.ok())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", kWant,
                                                   ", got kind ", doc.kind,
                                                   " (", doc.api_version, ")"));
  }
  if (!doc.status.ok() || !doc.configuration.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", doc.status.ok() ? kWant : doc.status.message()));
  }
  for (const std::string& warning : doc.warnings) {
    spdlog::warn("{}: {}", path, warning);
  }
  absl::StatusOr<Configuration> configuration =
      codec::FromProto(*doc.configuration);
  if (!configuration.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", configuration.status().message()));
  }
  return configuration;
}

// Declared in the order they are made: each part borrows from the ones
// above it, and they are destroyed bottom-up.
struct Server::Parts {
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<engine::Engine> engine;
  // Observes the engine; outlives the gRPC server, whose interceptor
  // records into it.
  std::unique_ptr<metrics::KqdMetrics> metrics;
  std::unique_ptr<http::KqdEndpoint> http;
  std::unique_ptr<api::AdminServiceImpl> admin;
  std::unique_ptr<api::QueueServiceImpl> queue;
  // Outlives the server: its interceptors count into it.
  api::InFlightCalls in_flight;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<api::AdmitCalls> admit;
  bool stopped = false;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const Config& config) {
  auto parts = std::make_unique<Parts>();
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create data directory ", config.data_dir, ": ", ec.message()));
  }
  const std::string db_path =
      (std::filesystem::path(config.data_dir) / "kq.db").string();
  store::SqliteOptions store_options;
  store_options.synchronous_full = config.sync_full;
  store_options.event_retention = config.event_retention;
  KQ_ASSIGN_OR_RETURN(parts->store,
                      store::SqliteStore::Open(db_path, store_options));

  engine::EngineOptions engine_options;
  engine_options.eviction_grace = config.eviction_grace;
  engine_options.event_log_capacity = config.event_retention;
  if (!config.config_file.empty()) {
    KQ_ASSIGN_OR_RETURN(engine_options.configuration,
                        ReadConfigurationFile(config.config_file));
    spdlog::info("configuration from {}: fair sharing {}", config.config_file,
                 engine_options.configuration.fair_sharing ? "on" : "off");
  }
  parts->engine = std::make_unique<engine::Engine>(*parts->store, Clock::Real(),
                                                   engine_options);
  parts->metrics = std::make_unique<metrics::KqdMetrics>(*parts->engine);
  // The HTTP port serves before the state is loaded: /healthz answers and
  // /readyz says not yet while a large database loads.
  if (!config.http_listen.empty()) {
    KQ_ASSIGN_OR_RETURN(
        http::HostPort address,
        http::ParseHostPort("--http-listen", config.http_listen));
    parts->http =
        std::make_unique<http::KqdEndpoint>(*parts->engine, *parts->metrics);
    KQ_RETURN_IF_ERROR(parts->http->Start(address));
    spdlog::info("kqd http (metrics, health, visibility) on {} (port {})",
                 config.http_listen, parts->http->port());
    if (!config.http_port_file.empty()) {
      WritePortFile(config.http_port_file, parts->http->port());
    }
  }
  KQ_RETURN_IF_ERROR(parts->engine->Start());
  parts->metrics->Start();

  parts->admin = std::make_unique<api::AdminServiceImpl>(*parts->engine);
  parts->queue = std::make_unique<api::QueueServiceImpl>(*parts->engine);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(parts->admin.get());
  builder.RegisterService(parts->queue.get());
  {
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        counters;
    counters.push_back(parts->in_flight.NewCounter());
    counters.push_back(parts->metrics->grpc().NewInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(counters));
  }
  // The blocking handlers (all but Admit and QueueServiceImpl's callback
  // handlers) hold their thread until the engine's commit. With gRPC's
  // default of at most two idle pollers, every burst of calls starts
  // threads that exit as soon as they are done; keeping up to
  // kMaxIdlePollers reuses them.
  builder.SetSyncServerOption(
      grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, kMaxIdlePollers);
  std::unique_ptr<grpc::ServerCompletionQueue> admit_queue =
      builder.AddCompletionQueue();
  parts->server = builder.BuildAndStart();
  if (parts->server == nullptr || port == 0) {
    admit_queue->Shutdown();
    void* tag;
    bool ok;
    while (admit_queue->Next(&tag, &ok)) {
    }
    parts->engine->Stop();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config.listen));
  }
  parts->admit = std::make_unique<api::AdmitCalls>(
      *parts->queue, *parts->engine, std::move(admit_queue));
  parts->admit->Start();
  spdlog::info("kqd serving on {} (port {}), data in {}", config.listen, port,
               db_path);
  if (!config.port_file.empty()) WritePortFile(config.port_file, port);
  return std::unique_ptr<Server>(new Server(std::move(parts), port));
}

Server::Server(std::unique_ptr<Parts> parts, int port)
    : parts_(std::move(parts)), port_(port) {}

Server::~Server() { Stop(); }

int Server::http_port() const {
  return parts_->http != nullptr ? parts_->http->port() : 0;
}

void Server::Stop() {
  if (parts_->stopped) return;
  parts_->stopped = true;
  grpc::Server& server = *parts_->server;
  engine::Engine& engine = *parts_->engine;
  // gRPC's Shutdown(deadline) lets calls finish, but it also waits until
  // every connection has answered its GOAWAY's ping, and a client with no
  // call in flight reads its socket only at its backup poll, every 5 s: an
  // idle `kq` or runner held kqd's stop for up to 5 s. So kqd stops in
  // steps: take no new call, end the calls that wait for kqd's own end
  // (Watch, Admit), let the others finish, then close what connections are
  // left. (The queue is gRPC's C API: grpc::CompletionQueue would take
  // the tag for one of its own.)
  grpc_completion_queue* shutdown_queue =
      grpc_completion_queue_create_for_pluck(nullptr);
  grpc_server_shutdown_and_notify(server.c_server(), shutdown_queue,
                                  shutdown_queue);
  engine.event_log().Close();
  engine.AbortAdmitWaits();
  if (const int unfinished = parts_->in_flight.WaitUntilNone(kShutdownGrace);
      unfinished > 0) {
    spdlog::warn("{} calls unfinished after {}; cancelling them", unfinished,
                 absl::FormatDuration(kShutdownGrace));
  }
  grpc_server_cancel_all_calls(server.c_server());
  server.Shutdown();
  grpc_completion_queue_pluck(shutdown_queue, shutdown_queue,
                              gpr_inf_future(GPR_CLOCK_REALTIME), nullptr);
  grpc_completion_queue_shutdown(shutdown_queue);
  grpc_completion_queue_destroy(shutdown_queue);
  parts_->admit->Stop();
  parts_->metrics->Stop();
  engine.Stop();
  if (parts_->http != nullptr) parts_->http->Stop();
  spdlog::info("kqd stopped at revision {}", engine.event_log().revision());
}

absl::Status Run(const Config& config) {
  // Signals are taken by one thread with sigwait, so block them before any
  // other thread starts (threads inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  KQ_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Start(config));
  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("received signal {}, shutting down", received);
  server->Stop();
  return absl::OkStatus();
}

}  // namespace kq::daemon
