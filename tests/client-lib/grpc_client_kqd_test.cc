// NewGrpcClient's credentials against a real kqd (daemon::Server in the
// test's process) serving TLS, verifying client certificates, knowing a
// token and authorizing with RBAC bindings: alice's certificate gives her
// team-a and nothing else; a service-account-like token gives the shim
// kq-shim-role, whose impersonation makes the calls alice's. What the
// resumable watch pins "from now" with must be a read alice may make.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/queue_service.pb.h"

#include "kq/client/client.h"
#include "manifest/manifest.h"
#include "server/daemon/daemon.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::client {
namespace {

using ::kq::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kBindings[] = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admins}
subjects: [{kind: Group, name: admins}]
roleRef: {kind: ClusterRole, name: kueue-batch-admin-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-a-users, namespace: team-a}
subjects: [{kind: Group, name: team-a}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: shim}
subjects: [{kind: User, name: shim}]
roleRef: {kind: ClusterRole, name: kq-shim-role}
)";

constexpr char kQueues[] = R"(
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
      resources: [{name: cpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: q}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-b, name: q}
spec: {clusterQueue: cq}
)";

// The token of the shim's service account; kqd knows its sha256.
constexpr char kShimToken[] = "shim-token-0d1e2f";

v1::Workload Workload(const std::string& ns, const std::string& name) {
  v1::Workload workload;
  workload.mutable_metadata()->set_namespace_(ns);
  workload.mutable_metadata()->set_name(name);
  workload.mutable_spec()->set_queue_name("q");
  v1::PodSet* pod_set = workload.mutable_spec()->add_pod_sets();
  pod_set->set_name("main");
  pod_set->set_count(1);
  (*pod_set->mutable_requests())["cpu"] = "1";
  return workload;
}

class GrpcClientKqdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(std::system(absl::StrCat("bash ", KQ_SOURCE_DIR,
                                       "/tests/testing/make_test_pki.sh ",
                                       dir_.File("pki"))
                              .c_str()),
              0);
    std::ofstream(dir_.File("authz.yaml")) << kBindings;
    // Computed here rather than trusted: `printf %s TOKEN | sha256sum`.
    ASSERT_EQ(std::system(absl::StrCat("printf 'sha256:%s shim\\n' \"$(printf "
                                       "%s ",
                                       kShimToken,
                                       " | sha256sum | cut -d' ' -f1)\" > ",
                                       dir_.File("tokens"))
                              .c_str()),
              0);
    std::ofstream(dir_.File("shim.token")) << kShimToken << "\n";
    daemon::Config config;
    config.listen = "127.0.0.1:0";
    config.http_listen = "";
    config.data_dir = dir_.File("data");
    config.sync_full = false;
    config.tls_cert = Pki("server.crt");
    config.tls_key = Pki("server.key");
    config.client_ca = Pki("ca.crt");
    config.token_file = dir_.File("tokens");
    config.authz_file = dir_.File("authz.yaml");
    absl::StatusOr<std::unique_ptr<daemon::Server>> server =
        daemon::Server::Start(config);
    ASSERT_OK(server.status());
    server_ = *std::move(server);

    absl::StatusOr<std::vector<manifest::Document>> docs =
        manifest::ParseManifests(kQueues);
    ASSERT_OK(docs.status());
    v1::ApplyRequest apply;
    for (const manifest::Document& doc : *docs) {
      ASSERT_OK(doc.status);
      ASSERT_TRUE(doc.config_object.has_value());
      *apply.add_objects() = *doc.config_object;
    }
    ASSERT_OK(As("admin")->Apply(apply).status());
  }

  std::string Pki(const std::string& name) const {
    return dir_.File("pki/" + name);
  }

  ClientOptions Options() const {
    ClientOptions options;
    options.target = absl::StrCat("localhost:", server_->port());
    options.deadline = absl::Seconds(10);
    options.retry_budget = absl::Seconds(2);
    options.tls_ca_file = Pki("ca.crt");
    return options;
  }

  // A client with `person`'s certificate.
  std::unique_ptr<Client> As(const std::string& person) const {
    ClientOptions options = Options();
    options.tls_cert_file = Pki(person + ".crt");
    options.tls_key_file = Pki(person + ".key");
    return NewGrpcClient(options);
  }

  kq::testing::ScopedTempDir dir_{"kqd_tls"};
  std::unique_ptr<daemon::Server> server_;
};

TEST_F(GrpcClientKqdTest, AliceWorksInHerNamespaceOnly) {
  std::unique_ptr<Client> alice = As("alice");
  ASSERT_OK(alice->Connect(absl::Seconds(5)));
  ASSERT_OK(alice->SubmitWorkload(Workload("team-a", "a1")).status());
  v1::ListWorkloadsRequest list;
  list.set_namespace_("team-a");
  absl::StatusOr<v1::ListWorkloadsResponse> listed = alice->ListWorkloads(list);
  ASSERT_OK(listed.status());
  ASSERT_EQ(listed->workloads_size(), 1);
  EXPECT_THAT(alice->SubmitWorkload(Workload("team-b", "b1")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("user \"alice\" cannot create resource "
                                 "\"workloads\" in the namespace \"team-b\"; "
                                 "groups: team-a, system:authenticated")));
  EXPECT_THAT(alice->ListObjects("ResourceFlavor", ""),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(GrpcClientKqdTest, AlicesResumableWatchPinsWithAReadSheMayMake) {
  std::unique_ptr<Client> alice = As("alice");
  v1::WatchRequest request;
  request.set_namespace_("team-a");
  std::vector<std::string> seen;
  std::thread submit([&alice] {
    absl::SleepFor(absl::Milliseconds(300));
    EXPECT_OK(alice->SubmitWorkload(Workload("team-a", "watched")).status());
  });
  absl::Status watched = alice->WatchResumable(
      request,
      [&seen](const v1::WatchEvent& event) {
        if (!event.has_workload()) return true;
        seen.push_back(event.workload().metadata().name());
        return false;
      },
      nullptr);
  submit.join();
  EXPECT_OK(watched);
  EXPECT_THAT(seen, ::testing::ElementsAre("watched"));
}

TEST_F(GrpcClientKqdTest, LauncherCallsAsAlice) {
  std::unique_ptr<Client> alice = As("alice");
  v1::AdmitRequest admit;
  *admit.mutable_workload() = Workload("team-a", "launched");
  admit.set_runner_id("alice-laptop");
  absl::StatusOr<v1::AdmitResponse> admitted =
      alice->WaitAdmitted(admit, absl::Seconds(20), nullptr);
  ASSERT_OK(admitted.status());
  EXPECT_EQ(admitted->outcome(), v1::AdmitResponse::ADMITTED);
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_namespace_("team-a");
  heartbeat.set_name("launched");
  heartbeat.set_runner_id("alice-laptop");
  EXPECT_OK(alice->Heartbeat(heartbeat).status());
  EXPECT_OK(alice->FinishWorkload("team-a", "launched", true, "").status());
}

TEST_F(GrpcClientKqdTest, NoCertificateIsUnauthenticated) {
  std::unique_ptr<Client> nobody = NewGrpcClient(Options());
  ASSERT_OK(nobody->Connect(absl::Seconds(5)));
  EXPECT_THAT(nobody->GetWorkload("team-a", "x"),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

TEST_F(GrpcClientKqdTest, TheShimsTokenImpersonatesAlice) {
  ClientOptions options = Options();
  options.token_file = dir_.File("shim.token");
  // As itself the shim may submit anywhere.
  ASSERT_OK(NewGrpcClient(options)
                ->SubmitWorkload(Workload("team-b", "by-shim"))
                .status());
  options.impersonate_user = "alice";
  options.impersonate_groups = {"team-a"};
  std::unique_ptr<Client> as_alice = NewGrpcClient(options);
  EXPECT_OK(as_alice->SubmitWorkload(Workload("team-a", "for-alice")).status());
  EXPECT_THAT(as_alice->SubmitWorkload(Workload("team-b", "not-alice")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("user \"alice\"")));
  options.token = "not-the-token";
  options.token_file.clear();
  EXPECT_THAT(NewGrpcClient(options)->GetWorkload("team-a", "for-alice"),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

}  // namespace
}  // namespace kq::client
