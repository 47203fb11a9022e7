#include "server/daemon/daemon.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"
#include "kq/client/context_file.h"
#include "manifest/manifest.h"
#include "server/api/admit_calls.h"
#include "server/api/federation_service.h"
#include "server/api/in_flight_calls.h"
#include "server/api/services.h"
#include "server/auth/access.h"
#include "server/auth/audit_log.h"
#include "server/auth/auth_metrics.h"
#include "server/auth/grpc_access.h"
#include "server/auth/policy_files.h"
#include "server/auth/tls.h"
#include "server/codec/codec.h"
#include "server/common/clock.h"
#include "server/engine/engine.h"
#include "server/federation/manager/controller.h"
#include "server/federation/manager/federation_metrics.h"
#include "server/http/http_server.h"
#include "server/http/kqd_endpoint.h"
#include "server/metrics/kqd_metrics.h"
#include "server/store/sqlite/sqlite_store.h"

namespace kq::daemon {
namespace {

// See where it is used.
constexpr int kMaxIdlePollers = 64;

// How a MultiKueue manager reaches a MultiKueueCluster's worker kqd: a Path
// location names a kq contexts file (kq/client/context_file.h). kq reads
// no Kubernetes Secret and no ClusterProfile. Calls to a worker are
// retried for a short while only: the controller decides again from what
// the worker holds, so a long retry would only hold its calls back.
absl::StatusOr<client::ClientOptions> ResolveMultiKueueCluster(
    const MultiKueueCluster& cluster) {
  if (!cluster.cluster_profile_name.empty()) {
    return absl::InvalidArgumentError(
        "kq does not read ClusterProfiles; use "
        "spec.clusterSource.kubeConfig with locationType Path");
  }
  if (cluster.location_type != kLocationTypePath) {
    return absl::InvalidArgumentError(std::string(absl::StripPrefix(
        kMultiKueueSecretMessage, "load client config failed: ")));
  }
  KQ_ASSIGN_OR_RETURN(client::ClientOptions options,
                      client::LoadContextFile(cluster.location, ""));
  options.deadline = absl::Seconds(10);
  options.retry_budget = absl::Seconds(5);
  options.retry_max_backoff = absl::Seconds(1);
  return options;
}
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

// Whether kqd listening on `address` ("host:port", "unix:path") is
// reachable only from this machine.
bool IsLoopback(const std::string& address) {
  if (absl::StartsWith(address, "unix:") ||
      absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  absl::StatusOr<http::HostPort> hp = http::ParseHostPort("", address);
  if (!hp.ok()) return false;
  return hp->host == "localhost" || hp->host == "::1" ||
         absl::StartsWith(hp->host, "127.");
}

}  // namespace

absl::Status CheckSecurity(const Config& config) {
  if (config.tls_cert.empty() != config.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key: give both or neither");
  }
  if (!config.client_ca.empty() && config.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "--client-ca: needs --tls-cert and --tls-key (client certificates "
        "are only asked for over TLS)");
  }
  const bool auth = !config.authz_file.empty();
  if (!auth && (!config.token_file.empty() || !config.client_ca.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        config.token_file.empty() ? "--client-ca" : "--token-file",
        ": needs --authz-file: identities without bindings may do nothing, "
        "and without --authz-file kqd authenticates no one"));
  }
  const bool tls = !config.tls_cert.empty();
  std::vector<std::string> exposed;
  if (!IsLoopback(config.listen))
    exposed.push_back("--listen=" + config.listen);
  if (!config.http_listen.empty() && !IsLoopback(config.http_listen)) {
    exposed.push_back("--http-listen=" + config.http_listen);
  }
  if (exposed.empty()) {
    if (!auth) {
      spdlog::warn(
          "kqd serves without authentication (no --authz-file): every "
          "caller that reaches {} may do anything; it listens on loopback "
          "only",
          config.listen);
    }
    return absl::OkStatus();
  }
  if (auth && tls) return absl::OkStatus();
  const std::string what =
      !auth ? "without authentication (no --authz-file): anyone who reaches "
              "it could cancel any workload and change every queue"
            : "without TLS (no --tls-cert): bearer tokens would cross the "
              "network in the clear";
  if (config.insecure_allow_unauthenticated) {
    spdlog::warn("kqd serves {} {} (--insecure-allow-unauthenticated)",
                 absl::StrJoin(exposed, " and "), what);
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "refusing to serve ", absl::StrJoin(exposed, " and "),
      ", which is not a loopback address, ", what,
      ". Give --authz-file with --tls-cert and --tls-key, listen on "
      "127.0.0.1, or pass --insecure-allow-unauthenticated to serve "
      "anyway"));
}

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
  // Security: outlive both ports, which consult them on every call.
  std::unique_ptr<auth::AuthMetrics> auth_metrics;
  std::unique_ptr<auth::PolicyFiles> policy_files;
  std::unique_ptr<auth::Access> access;
  std::unique_ptr<auth::AuditLog> audit;
  std::unique_ptr<auth::TlsFiles> tls;
  std::unique_ptr<auth::GrpcAccess> grpc_access;
  std::unique_ptr<http::KqdEndpoint> http;
  std::unique_ptr<api::AdminServiceImpl> admin;
  std::unique_ptr<api::QueueServiceImpl> queue;
  std::unique_ptr<api::FederationServiceImpl> federation;
  std::unique_ptr<federation::FederationMetrics> federation_metrics;
  std::unique_ptr<federation::Controller> multikueue;
  // Outlives the server: its interceptors count into it.
  api::InFlightCalls in_flight;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<api::AdmitCalls> admit;
  bool stopped = false;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const Config& config) {
  KQ_RETURN_IF_ERROR(CheckSecurity(config));
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
  parts->auth_metrics =
      std::make_unique<auth::AuthMetrics>(parts->metrics->registry());
  // Every kqd runs the MultiKueue controller; it has nothing to do until a
  // ClusterQueue has a MultiKueue check.
  parts->federation_metrics = std::make_unique<federation::FederationMetrics>(
      parts->metrics->registry(), metrics::kStandalone);
  {
    federation::ControllerOptions multikueue;
    multikueue.metrics = parts->federation_metrics.get();
    multikueue.resolve = ResolveMultiKueueCluster;
    parts->multikueue = std::make_unique<federation::Controller>(
        *parts->engine, std::move(multikueue));
    parts->engine->AddObserver(parts->multikueue.get());
  }
  parts->policy_files = std::make_unique<auth::PolicyFiles>(
      config.token_file, config.authz_file, parts->auth_metrics.get());
  KQ_RETURN_IF_ERROR(parts->policy_files->Load());
  parts->access = std::make_unique<auth::Access>(
      auth::AccessOptions{.enabled = !config.authz_file.empty(),
                          .owner_may_run = config.owner_may_run},
      parts->policy_files.get(), parts->auth_metrics.get());
  if (!config.audit_log.empty()) {
    KQ_ASSIGN_OR_RETURN(
        parts->audit,
        auth::AuditLog::Open({.path = config.audit_log,
                              .max_size_mb = config.audit_log_max_size_mb,
                              .max_backups = config.audit_log_max_backups},
                             parts->auth_metrics.get()));
  }
  if (!config.tls_cert.empty()) {
    KQ_ASSIGN_OR_RETURN(
        parts->tls,
        auth::TlsFiles::Open(
            {.cert_file = config.tls_cert,
             .key_file = config.tls_key,
             .client_ca_file = config.client_ca,
             .reload_interval = config.tls_reload_interval,
             .staging_dir =
                 (std::filesystem::path(config.data_dir) / "tls-in-use")
                     .string()},
            parts->auth_metrics.get()));
  }
  parts->grpc_access =
      std::make_unique<auth::GrpcAccess>(*parts->access, parts->audit.get());
  if (!config.token_file.empty() || !config.authz_file.empty()) {
    parts->policy_files->StartWatching(config.policy_reload_interval);
  }
  // The HTTP port serves before the state is loaded: /healthz answers and
  // /readyz says not yet while a large database loads.
  if (!config.http_listen.empty()) {
    KQ_ASSIGN_OR_RETURN(
        http::HostPort address,
        http::ParseHostPort("--http-listen", config.http_listen));
    parts->http = std::make_unique<http::KqdEndpoint>(
        *parts->engine, *parts->metrics,
        http::EndpointSecurity{.access = parts->access.get(),
                               .audit = parts->audit.get(),
                               .tls = parts->tls.get()});
    KQ_RETURN_IF_ERROR(parts->http->Start(address));
    spdlog::info("kqd http (metrics, health, visibility) on {} (port {})",
                 config.http_listen, parts->http->port());
    if (!config.http_port_file.empty()) {
      WritePortFile(config.http_port_file, parts->http->port());
    }
  }
  KQ_RETURN_IF_ERROR(parts->engine->Start());
  if (absl::Status s = parts->multikueue->Start(); !s.ok()) {
    parts->engine->Stop();
    return s;
  }
  parts->metrics->Start();

  parts->admin = std::make_unique<api::AdminServiceImpl>(*parts->engine,
                                                         *parts->grpc_access);
  parts->queue = std::make_unique<api::QueueServiceImpl>(*parts->engine,
                                                         *parts->grpc_access);
  // Every kqd can be a MultiKueue worker.
  parts->federation = std::make_unique<api::FederationServiceImpl>(
      *parts->engine, *parts->grpc_access);
  parts->queue->set_copy_reporter(
      [multikueue = parts->multikueue.get()](const NamespacedName& key) {
        std::vector<v1::MultiKueueCopyState> copies;
        for (const federation::Controller::CopyReport& report :
             multikueue->ReportCopies(key)) {
          copies.push_back(federation::CopyStateOf(report));
        }
        return copies;
      });
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen,
                           parts->tls != nullptr
                               ? parts->tls->GrpcCredentials()
                               : grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(parts->admin.get());
  builder.RegisterService(parts->queue.get());
  builder.RegisterService(parts->federation.get());
  {
    std::vector<
        std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        counters;
    counters.push_back(parts->in_flight.NewCounter());
    counters.push_back(parts->metrics->grpc().NewInterceptorFactory());
    if (auto audit = parts->grpc_access->NewAuditInterceptorFactory()) {
      counters.push_back(std::move(audit));
    }
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
  spdlog::info("kqd serving on {} (port {}{}{}), data in {}", config.listen,
               port, parts->tls != nullptr ? ", TLS" : "",
               parts->access->enabled() ? ", RBAC from --authz-file" : "",
               db_path);
  if (!config.port_file.empty()) WritePortFile(config.port_file, port);
  return std::unique_ptr<Server>(new Server(std::move(parts), port));
}

Server::Server(std::unique_ptr<Parts> parts, int port)
    : parts_(std::move(parts)), port_(port) {}

Server::~Server() { Stop(); }

absl::Status Server::ReloadPolicy() { return parts_->policy_files->Reload(); }

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
  parts_->multikueue->Stop();
  parts_->metrics->Stop();
  engine.Stop();
  if (parts_->http != nullptr) parts_->http->Stop();
  parts_->policy_files->Stop();
  if (parts_->audit != nullptr) parts_->audit->Flush();
  spdlog::info("kqd stopped at revision {}", engine.event_log().revision());
}

absl::Status Run(const Config& config) {
  // Signals are taken by one thread with sigwait, so block them before any
  // other thread starts (threads inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  KQ_ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Start(config));
  int received = 0;
  for (;;) {
    sigwait(&signals, &received);
    if (received != SIGHUP) break;
    spdlog::info("received SIGHUP: reloading --token-file and --authz-file");
    // A failure is logged by the reload, with the old policy kept.
    server->ReloadPolicy().IgnoreError();
  }
  spdlog::info("received signal {}, shutting down", received);
  server->Stop();
  return absl::OkStatus();
}

}  // namespace kq::daemon
