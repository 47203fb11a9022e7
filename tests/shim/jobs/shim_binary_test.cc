// The kq-k8s-shim binary: its flags, its health, readiness and metrics
// endpoints, a Job admitted through it, and a clean stop on SIGTERM that
// releases nothing at kqd.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "kq/client/client.h"
#include "manifest/manifest.h"
#include "shim/jobs/job_workload.h"
#include "shim/kube/client.h"
#include "tests/integration/kqd_process.h"
#include "tests/shim/testing/fake_apiserver_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/temp_dir.h"

namespace kq::shim::jobs {
namespace {

using json = nlohmann::json;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

template <typename Predicate>
bool WaitFor(Predicate predicate, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (predicate()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return predicate();
}

pid_t Spawn(const std::vector<std::string>& args) {
  const ::kq::testing::ForkingParent parent = ::kq::testing::ThisParent();
  pid_t pid = fork();
  if (pid == 0) {
    ::kq::testing::DieWithParent(parent);
    std::vector<char*> argv;
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

TEST(ShimBinaryTest, AdmitsJobsServesHealthAndStopsOnSigterm) {
  auto api = ::kq::testing::FakeApiServer::Start();
  ASSERT_TRUE(api.ok()) << api.status();
  ::kq::testing::ScopedTempDir kqd_dir;
  ::kq::testing::KqdProcess kqd(kqd_dir.path());
  ASSERT_TRUE(kqd.Start().ok());
  std::unique_ptr<client::Client> kq = kqd.NewClient();
  auto docs = manifest::ParseManifests(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team, name: lq}
spec: {clusterQueue: cq}
)");
  ASSERT_TRUE(docs.ok());
  v1::ApplyRequest request;
  for (const auto& doc : *docs) *request.add_objects() = *doc.config_object;
  ASSERT_TRUE(kq->Apply(request).ok());

  const int health_port = FreePort();
  const int webhook_port = FreePort();
  pid_t shim = Spawn(
      {KQ_SHIM_PATH, "--kqd=" + kqd.target(),
       "--kubeconfig=" + (*api)->kubeconfig_path(), "--runner-id=binary-test",
       "--lease=6s", "--webhook-address=127.0.0.1",
       absl::StrCat("--webhook-port=", webhook_port),
       "--webhook-cert=" + (*api)->dir() + "/server.crt",
       "--webhook-key=" + (*api)->dir() + "/server.key",
       absl::StrCat("--health-port=", health_port), "--log-level=warn"});
  ASSERT_GT(shim, 0);

  httplib::Client health("127.0.0.1", health_port);
  EXPECT_TRUE(WaitFor([&] {
    auto r = health.Get("/readyz");
    return r && r->status == 200;
  })) << "never ready";
  auto healthz = health.Get("/healthz");
  ASSERT_TRUE(healthz);
  EXPECT_EQ(healthz->status, 200);

  auto config = (*api)->LoadConfig();
  ASSERT_TRUE(config.ok());
  auto kube = kube::Client::Create(*config);
  ASSERT_TRUE(kube.ok());
  json job = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "via-binary", "namespace": "team",
      "labels": {"kueue.x-k8s.io/queue-name": "lq"},
      "annotations": {"fake.kq.dev/runtime-seconds": "60"}},
    "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": "1"}}}]}}}})");
  auto created = (*kube)->Create(kube::kJobs, "team", job);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(WaitFor([&] {
    auto now = (*kube)->Get(kube::kJobs, "team", "via-binary");
    return now.ok() && !SuspendRequested(*now);
  }));
  // Counted right after the Job's update.
  std::string metrics;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto r = health.Get("/metrics");
        metrics = r ? r->body : "";
        return metrics.find("kq_shim_job_admissions_started_total 1") !=
               std::string::npos;
      },
      absl::Seconds(5)))
      << metrics;

  // SIGTERM: a clean, prompt exit that keeps the admission.
  const absl::Time signalled = absl::Now();
  kill(shim, SIGTERM);
  int status = 0;
  ASSERT_TRUE(WaitFor([&] { return waitpid(shim, &status, WNOHANG) == shim; },
                      absl::Seconds(10)));
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(10));
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto wl = kq->GetWorkload(
      "team", WorkloadNameForJob("via-binary", UidOfJob(*created)));
  ASSERT_TRUE(wl.ok()) << wl.status();
  bool admitted = false;
  for (const auto& c : wl->workload().status().conditions()) {
    if (c.type() == "Admitted") admitted = c.status() == "True";
  }
  EXPECT_TRUE(admitted);
  EXPECT_EQ(wl->workload().status().runner().id(), "binary-test");
  auto still = (*kube)->Get(kube::kJobs, "team", "via-binary");
  ASSERT_TRUE(still.ok());
  EXPECT_FALSE(SuspendRequested(*still));
}

// kqd with TLS, a token for the shim (kq-shim-role) and RBAC bindings: the
// shim reaches it with --kq-tls-ca and --kq-token-file, and admits a Job.
TEST(ShimBinaryTest, AdmitsJobsThroughAKqdWithTlsAndAToken) {
  auto api = ::kq::testing::FakeApiServer::Start();
  ASSERT_TRUE(api.ok()) << api.status();
  ::kq::testing::ScopedTempDir dir;
  const std::string pki = dir.File("pki");
  ASSERT_EQ(std::system(absl::StrCat("bash ", KQ_SOURCE_DIR,
                                     "/tests/testing/make_test_pki.sh ", pki)
                            .c_str()),
            0);
  std::ofstream(dir.File("shim.token")) << "shim-sa-token\n";
  ASSERT_EQ(std::system(absl::StrCat("printf 'sha256:%s shim\\n' \"$(printf "
                                     "%s shim-sa-token | sha256sum | cut "
                                     "-d' ' -f1)\" > ",
                                     dir.File("tokens"))
                            .c_str()),
            0);
  std::ofstream(dir.File("authz.yaml")) << R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admins}
subjects: [{kind: Group, name: admins}]
roleRef: {kind: ClusterRole, name: kueue-batch-admin-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: shim}
subjects: [{kind: User, name: shim}]
roleRef: {kind: ClusterRole, name: kq-shim-role}
)";
  ::kq::testing::KqdProcess kqd(dir.File("data"));
  std::filesystem::create_directories(dir.File("data"));
  ASSERT_TRUE(kqd.Start({"--tls-cert=" + pki + "/server.crt",
                         "--tls-key=" + pki + "/server.key",
                         "--client-ca=" + pki + "/ca.crt",
                         "--token-file=" + dir.File("tokens"),
                         "--authz-file=" + dir.File("authz.yaml")})
                  .ok());
  const std::string target = absl::StrCat("localhost:", kqd.port());
  client::ClientOptions admin_options{.target = target,
                                      .deadline = absl::Seconds(10)};
  admin_options.tls_ca_file = pki + "/ca.crt";
  admin_options.tls_cert_file = pki + "/admin.crt";
  admin_options.tls_key_file = pki + "/admin.key";
  std::unique_ptr<client::Client> admin = client::NewGrpcClient(admin_options);
  auto docs = manifest::ParseManifests(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team, name: lq}
spec: {clusterQueue: cq}
)");
  ASSERT_TRUE(docs.ok());
  v1::ApplyRequest request;
  for (const auto& doc : *docs) *request.add_objects() = *doc.config_object;
  ASSERT_TRUE(admin->Apply(request).ok());

  const int health_port = FreePort();
  pid_t shim =
      Spawn({KQ_SHIM_PATH, "--kqd=" + target, "--kq-tls-ca=" + pki + "/ca.crt",
             "--kq-token-file=" + dir.File("shim.token"),
             "--kubeconfig=" + (*api)->kubeconfig_path(),
             "--runner-id=tls-test", "--lease=6s",
             absl::StrCat("--health-port=", health_port), "--log-level=warn"});
  ASSERT_GT(shim, 0);
  httplib::Client health("127.0.0.1", health_port);
  EXPECT_TRUE(WaitFor([&] {
    auto r = health.Get("/readyz");
    return r && r->status == 200;
  })) << "never ready";
  auto config = (*api)->LoadConfig();
  ASSERT_TRUE(config.ok());
  auto kube = kube::Client::Create(*config);
  ASSERT_TRUE(kube.ok());
  json job = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "over-tls", "namespace": "team",
      "labels": {"kueue.x-k8s.io/queue-name": "lq"},
      "annotations": {"fake.kq.dev/runtime-seconds": "60"}},
    "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": "1"}}}]}}}})");
  auto created = (*kube)->Create(kube::kJobs, "team", job);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(WaitFor([&] {
    auto now = (*kube)->Get(kube::kJobs, "team", "over-tls");
    return now.ok() && !SuspendRequested(*now);
  }));
  kill(shim, SIGTERM);
  int status = 0;
  ASSERT_TRUE(WaitFor([&] { return waitpid(shim, &status, WNOHANG) == shim; },
                      absl::Seconds(10)));
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto wl = admin->GetWorkload(
      "team", WorkloadNameForJob("over-tls", UidOfJob(*created)));
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->workload().status().runner().id(), "tls-test");
}

// kqd credentials that cannot be used stop the shim at once (exit 2), before
// it looks for the Kubernetes API server.
TEST(ShimBinaryTest, RefusesUnusableKqdCredentials) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {KQ_SHIM_PATH, "--kqd=kqd.example.com:7070",
            "--kq-token-file=/var/run/secrets/token"},
           {KQ_SHIM_PATH, "--kq-tls-ca=/nonexistent/ca.crt"},
           {KQ_SHIM_PATH, "--kq-tls-ca=/etc/hostname", "--kq-cert=/x.crt"},
       }) {
    pid_t pid = Spawn(args);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2) << args[1];
  }
}

TEST(ShimBinaryTest, RefusesBadFlags) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {KQ_SHIM_PATH, "--lease=forever", "--kubeconfig=/nonexistent"},
           {KQ_SHIM_PATH, "--webhook-cert=/x"},
           {KQ_SHIM_PATH, "--log-level=loud"},
       }) {
    pid_t pid = Spawn(args);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2) << args[1];
  }
}

}  // namespace
}  // namespace kq::shim::jobs
