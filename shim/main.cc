// kq-k8s-shim: Kueue's job integration for batch/v1 Jobs against a real
// Kubernetes API server, every admission decision left to kqd. Flags ->
// clients -> JobController + ShimServer; runs until SIGTERM or SIGINT.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

#include "base/binary.h"
#include "kq/client/client.h"
#include "shim/jobs/controller.h"
#include "shim/kube/client.h"
#include "shim/provisioning/controller.h"
#include "shim/webhook/server.h"

namespace {

struct Flags {
  std::string kqd = "127.0.0.1:7070";
  // The shim's credentials at kqd (security contract, issue 30).
  std::string kq_tls_ca;
  std::string kq_cert;
  std::string kq_key;
  std::string kq_token_file;
  std::string kq_tls_server_name;
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;
  std::string runner_id;
  std::string lease = "30s";
  std::string resync = "5m";
  int workers = 2;
  std::string webhook_address = "0.0.0.0";
  int webhook_port = 9443;
  std::string webhook_cert;
  std::string webhook_key;
  int health_port = 8081;
  std::string log_level = "info";
};

std::string Hostname() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "kq-k8s-shim";
  return name;
}

absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& flag,
                                                     const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": not a positive duration: ", text));
  }
  return d;
}

// The API resource an ownerReference's apiVersion and kind name, for the
// webhook's owner walk: "apps/v1" + "ReplicaSet" -> apps v1 replicasets.
kq::shim::kube::Resource OwnerResource(const std::string& api_version,
                                       const std::string& kind) {
  std::vector<std::string> parts = absl::StrSplit(api_version, '/');
  kq::shim::kube::Resource resource;
  if (parts.size() == 2) {
    resource.group = parts[0];
    resource.version = parts[1];
  } else {
    resource.version = api_version;
  }
  resource.plural = absl::AsciiStrToLower(kind) + "s";
  resource.namespaced = true;
  return resource;
}

int Run(const Flags& flags) {
  // 1. Settings.
  absl::StatusOr<absl::Duration> lease =
      ParsePositiveDuration("--lease", flags.lease);
  absl::StatusOr<absl::Duration> resync =
      ParsePositiveDuration("--resync", flags.resync);
  if (!lease.ok() || !resync.ok()) {
    std::fprintf(
        stderr, "kq-k8s-shim: %s\n",
        (!lease.ok() ? lease.status() : resync.status()).ToString().c_str());
    return 2;
  }

  // 2. kqd, first: its credentials are checked before anything starts.
  // Retries stay short so that a stop is not held up by a kqd that
  // is down; the controller retries with its own backoff.
  kq::client::ClientOptions kq_options;
  kq_options.target = flags.kqd;
  kq_options.deadline = absl::Seconds(15);
  kq_options.retry_budget = absl::Seconds(10);
  kq_options.tls_ca_file = flags.kq_tls_ca;
  kq_options.tls_cert_file = flags.kq_cert;
  kq_options.tls_key_file = flags.kq_key;
  kq_options.tls_server_name = flags.kq_tls_server_name;
  // A Kubernetes service-account token (a projected volume) is re-read
  // every minute, so its rotation needs no restart.
  kq_options.token_file = flags.kq_token_file;
  std::unique_ptr<kq::client::Client> kq =
      kq::client::NewGrpcClient(kq_options);
  // Credentials that cannot be used (a file missing, a token for a
  // plaintext kqd elsewhere) are a configuration error, told at once; an
  // unreachable kqd is not: the controllers wait for it.
  if (absl::Status usable = kq->Connect(absl::ZeroDuration());
      usable.code() == absl::StatusCode::kInvalidArgument) {
    std::fprintf(stderr, "kq-k8s-shim: kqd credentials: %s\n",
                 std::string(usable.message()).c_str());
    return 2;
  }

  // 3. The Kubernetes API server: --kubeconfig, else in-cluster.
  absl::StatusOr<kq::shim::kube::Config> config =
      flags.kubeconfig.empty()
          ? kq::shim::kube::LoadInClusterConfig()
          : kq::shim::kube::LoadKubeconfig(flags.kubeconfig, flags.context);
  if (!config.ok()) {
    std::fprintf(stderr, "kq-k8s-shim: kubernetes config: %s\n",
                 config.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<kq::shim::kube::Client>> kube =
      kq::shim::kube::Client::Create(*config);
  if (!kube.ok()) {
    std::fprintf(stderr, "kq-k8s-shim: kubernetes client: %s\n",
                 kube.status().ToString().c_str());
    return 1;
  }

  // 4. The Job controller.
  kq::shim::jobs::JobControllerOptions options;
  options.runner_id = flags.runner_id.empty() ? Hostname() : flags.runner_id;
  options.lease = *lease;
  options.resync = *resync;
  options.namespace_name = flags.namespace_name;
  options.workers = flags.workers;
  kq::shim::jobs::JobController controller(**kube, *kq, options);
  absl::Status started = controller.Start();
  if (!started.ok()) {
    std::fprintf(stderr, "kq-k8s-shim: %s\n", started.ToString().c_str());
    return 2;
  }

  // 5. The webhook (HTTPS, when a certificate is given) and the health and
  // metrics endpoints.
  kq::shim::webhook::ShimServerOptions server_options;
  server_options.address = flags.webhook_address;
  server_options.https_port = flags.webhook_port;
  server_options.tls_cert_file = flags.webhook_cert;
  server_options.tls_key_file = flags.webhook_key;
  server_options.http_port = flags.health_port;
  server_options.readiness = [&controller] { return controller.Ready(); };
  kq::shim::kube::Client* kube_client = kube->get();
  // The webhook's lookups in kqd (default LocalQueue, default
  // WorkloadPriorityClass) must answer well within the API server's webhook
  // timeout (10 s) even when kqd is down: a short deadline, no retries (a
  // failed lookup skips that defaulting, as Kueue's does).
  kq::client::ClientOptions webhook_kq_options = kq_options;
  webhook_kq_options.deadline = absl::Seconds(2);
  webhook_kq_options.retry_budget = absl::ZeroDuration();
  std::shared_ptr<kq::client::Client> webhook_kq =
      kq::client::NewGrpcClient(webhook_kq_options);
  kq::client::Client* kq_client = webhook_kq.get();
  server_options.webhook.get_owner =
      [kube_client](const kq::shim::webhook::OwnerKind& kind,
                    const std::string& ns, const std::string& name) {
        return kube_client->Get(OwnerResource(kind.api_version, kind.kind), ns,
                                name);
      };
  server_options.webhook.default_local_queue_exists =
      [kq_client](const std::string& ns) {
        return kq_client->GetObject("LocalQueue", ns, "default").ok();
      };
  server_options.webhook.default_workload_priority_class_exists =
      [kq_client]() -> absl::StatusOr<bool> {
    absl::StatusOr<kq::v1::ConfigObject> wpc =
        kq_client->GetObject("WorkloadPriorityClass", "", "default");
    if (wpc.ok()) return true;
    if (wpc.status().code() == absl::StatusCode::kNotFound) return false;
    return wpc.status();
  };
  // Without a certificate there is no webhook, but health and metrics are
  // still served.
  if (flags.webhook_cert.empty()) {
    spdlog::warn("no --webhook-cert: the webhook is not served");
    server_options.https_port = -1;
  }
  auto server = std::make_unique<kq::shim::webhook::ShimServer>(
      std::move(server_options));
  absl::Status serving = server->Start();
  if (!serving.ok()) {
    controller.Stop();
    std::fprintf(stderr, "kq-k8s-shim: serving: %s\n",
                 serving.ToString().c_str());
    return 1;
  }
  spdlog::info("serving webhook_port={} health_port={}", server->https_port(),
               server->http_port());

  // 6. ProvisioningRequest admission checks: shares `kube` and `kq`; stopped
  // before the Job controller.
  kq::shim::provisioning::ProvisioningOptions provisioning_options;
  provisioning_options.namespace_name = flags.namespace_name;
  provisioning_options.resync = *resync;
  kq::shim::provisioning::ProvisioningController provisioning(
      **kube, *kq, provisioning_options);
  std::atomic<bool> provisioning_stop{false};
  std::thread provisioning_thread([&provisioning, &provisioning_stop] {
    provisioning.Run(provisioning_stop);
  });

  // 7. Until SIGTERM or SIGINT. The signals were blocked before any thread
  // started, so only this wait receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int received = 0;
  sigwait(&signals, &received);
  spdlog::info(
      "received {}; stopping (admissions are kept: leases lapse or "
      "a restarted shim re-attaches)",
      received == SIGTERM ? "SIGTERM" : "SIGINT");
  server->Stop();
  provisioning_stop = true;
  provisioning_thread.join();
  controller.Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kq::InitBinary();
  Flags flags;
  CLI::App app{
      "kq-k8s-shim: Kueue's batch/v1 Job integration, admissions by kqd"};
  app.add_option("--kqd", flags.kqd, "kqd's gRPC address (host:port)")
      ->capture_default_str();
  app.add_option("--kq-tls-ca", flags.kq_tls_ca,
                 "PEM CA file that signed kqd's certificate; turns TLS to kqd "
                 "on");
  app.add_option("--kq-cert", flags.kq_cert,
                 "PEM client certificate for kqd (mutual TLS, with "
                 "--kq-key)");
  app.add_option("--kq-key", flags.kq_key, "PEM private key of --kq-cert");
  app.add_option("--kq-token-file", flags.kq_token_file,
                 "bearer token file for kqd, re-read every minute (e.g. a "
                 "service-account token); over TLS unless kqd is on "
                 "loopback");
  app.add_option("--kq-tls-server-name", flags.kq_tls_server_name,
                 "name kqd's certificate carries, if not the host of --kqd");
  app.add_option("--kubeconfig", flags.kubeconfig,
                 "kubeconfig file; empty: in-cluster configuration");
  app.add_option("--context", flags.context,
                 "kubeconfig context; empty: its current-context");
  app.add_option("--namespace", flags.namespace_name,
                 "the namespace whose Jobs are managed; empty: all");
  app.add_option("--runner-id", flags.runner_id,
                 "runner id at kqd, kept across restarts; empty: the host "
                 "name");
  app.add_option("--lease", flags.lease,
                 "lease on running Workloads, renewed every third of it")
      ->capture_default_str();
  app.add_option("--resync", flags.resync, "period of a full reconcile")
      ->capture_default_str();
  app.add_option("--workers", flags.workers, "reconcile workers (1-4)")
      ->capture_default_str();
  app.add_option("--webhook-address", flags.webhook_address,
                 "address of the webhook and health listeners")
      ->capture_default_str();
  app.add_option("--webhook-port", flags.webhook_port,
                 "HTTPS port of /mutate-batch-v1-job (0 picks one)")
      ->capture_default_str();
  app.add_option("--webhook-cert", flags.webhook_cert,
                 "PEM serving certificate; the webhook is served only with "
                 "one");
  app.add_option("--webhook-key", flags.webhook_key,
                 "PEM private key of --webhook-cert");
  app.add_option("--health-port", flags.health_port,
                 "plain-HTTP port of /healthz, /readyz and /metrics (-1 "
                 "disables)")
      ->capture_default_str();
  app.add_option("--log-level", flags.log_level,
                 "trace, debug, info, warn or error")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (flags.webhook_cert.empty() != flags.webhook_key.empty()) {
    std::fprintf(stderr,
                 "kq-k8s-shim: --webhook-cert and --webhook-key go together\n");
    return 2;
  }

  spdlog::level::level_enum level = spdlog::level::from_str(flags.log_level);
  if (level == spdlog::level::off && flags.log_level != "off") {
    std::fprintf(stderr, "kq-k8s-shim: unknown log level \"%s\"\n",
                 flags.log_level.c_str());
    return 2;
  }
  spdlog::set_level(level);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v",
                      spdlog::pattern_time_type::utc);

  // Every thread started from here on inherits the blocked signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return Run(flags);
}
