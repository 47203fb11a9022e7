// kqd with TLS, client certificates, tokens and RBAC bindings, in-process:
// the decisions each call makes (ops-security.md §3.4), the refusals'
// wording, Watch's filtering, Apply's create-or-update rule, the owner
// rule, impersonation, and what kqd refuses to start with. The acceptance
// suite of ops-security.md §6 runs the kqd binary the same way
// (tests/e2e/security_test.py).

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.grpc.pb.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "server/auth/tokens.h"
#include "server/codec/codec.h"
#include "server/daemon/daemon.h"
#include "tests/server/auth/test_certs.h"
#include "tests/testing/builders.h"
#include "tests/testing/temp_dir.h"

namespace kq::daemon {
namespace {

using ::kq::testing::ClusterQueueBuilder;
using ::kq::testing::LocalQueueBuilder;
using ::kq::testing::ResourceFlavorBuilder;
using ::kq::testing::WorkloadBuilder;
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
kind: RoleBinding
metadata: {name: team-b-users, namespace: team-b}
subjects: [{kind: Group, name: team-b}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: cq-updater}
rules:
- apiGroups: [kueue.x-k8s.io]
  resources: [clusterqueues]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: updaters}
subjects: [{kind: User, name: upd}]
roleRef: {kind: ClusterRole, name: cq-updater}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: shim}
subjects: [{kind: User, name: shim}]
roleRef: {kind: ClusterRole, name: kq-shim-role}
)";

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    certs_ = std::make_unique<auth::TestCerts>(dir_.File("pki"));
    server_cert_ = certs_->Server();
    std::ofstream(dir_.File("authz.yaml")) << kBindings;
    std::ofstream(dir_.File("tokens"))
        << "sha256:" << absl::BytesToHexString(auth::Sha256("tok-shim"))
        << " shim\n";
  }

  Config SecureConfig() {
    Config config;
    config.listen = "127.0.0.1:0";
    config.http_listen = "";
    config.data_dir = dir_.File("data");
    config.sync_full = false;
    config.tls_cert = server_cert_.cert_file;
    config.tls_key = server_cert_.key_file;
    config.client_ca = certs_->ca_file();
    config.token_file = dir_.File("tokens");
    config.authz_file = dir_.File("authz.yaml");
    config.audit_log = dir_.File("audit.log");
    return config;
  }

  void StartKqd(Config config) {
    absl::StatusOr<std::unique_ptr<Server>> server = Server::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  struct Caller {
    std::unique_ptr<v1::QueueService::Stub> queue;
    std::unique_ptr<v1::AdminService::Stub> admin;
  };

  // A caller with a client certificate (CN = user, O = groups), or none.
  Caller As(const std::string& user, std::vector<std::string> groups = {}) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = certs_->ca_pem();
    if (!user.empty()) {
      auth::TestCert cert = certs_->Client(user, groups);
      ssl.pem_cert_chain = cert.cert_pem;
      ssl.pem_private_key = cert.key_pem;
    }
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel = grpc::CreateCustomChannel(
        "localhost:" + std::to_string(server_->port()),
        grpc::SslCredentials(ssl), args);
    return {v1::QueueService::NewStub(channel),
            v1::AdminService::NewStub(channel)};
  }

  void ApplyAsAdmin(std::vector<ConfigObject> objects) {
    v1::ApplyRequest request;
    for (const ConfigObject& o : objects) {
      *request.add_objects() = codec::ToProto(o);
    }
    v1::ApplyResponse response;
    grpc::ClientContext context;
    grpc::Status s =
        As("root", {"admins"}).admin->Apply(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  void SetUpQueues() {
    ApplyAsAdmin({ResourceFlavorBuilder("default").Build(),
                  ClusterQueueBuilder("cq")
                      .ResourceGroup({"cpu"})
                      .Flavor("default")
                      .Quota("cpu", "8")
                      .Build(),
                  LocalQueueBuilder("team-a", "lq", "cq").Build(),
                  LocalQueueBuilder("team-b", "lq", "cq").Build()});
  }

  static v1::Workload WorkloadIn(const std::string& ns,
                                 const std::string& name) {
    return codec::ToProto(WorkloadBuilder(name)
                              .Namespace(ns)
                              .Queue("lq")
                              .PodSet("main", 1)
                              .Request("cpu", "1")
                              .Build());
  }

  static grpc::Status Submit(Caller& caller, const std::string& ns,
                             const std::string& name,
                             v1::SubmitWorkloadResponse* out = nullptr) {
    v1::SubmitWorkloadRequest request;
    *request.mutable_workload() = WorkloadIn(ns, name);
    v1::SubmitWorkloadResponse response;
    grpc::ClientContext context;
    return caller.queue->SubmitWorkload(&context, request,
                                        out != nullptr ? out : &response);
  }

  static grpc::Status Heartbeat(Caller& caller, const std::string& ns,
                                const std::string& name) {
    v1::HeartbeatRequest request;
    request.set_namespace_(ns);
    request.set_name(name);
    request.set_runner_id("r");
    v1::HeartbeatResponse response;
    grpc::ClientContext context;
    return caller.queue->Heartbeat(&context, request, &response);
  }

  ::kq::testing::ScopedTempDir dir_{"kq_security"};
  std::unique_ptr<auth::TestCerts> certs_;
  auth::TestCert server_cert_;
  std::unique_ptr<Server> server_;
};

TEST_F(SecurityTest, SubmitterIsRecordedAndMayRunItsWorkload) {
  StartKqd(SecureConfig());
  SetUpQueues();
  Caller alice = As("alice", {"team-a"});
  v1::SubmitWorkloadResponse submitted;
  ASSERT_TRUE(Submit(alice, "team-a", "w1", &submitted).ok());
  EXPECT_EQ(
      submitted.workload().metadata().annotations().at("kq.dev/submitter"),
      "alice");
  EXPECT_TRUE(Heartbeat(alice, "team-a", "w1").ok());
  // Another member of team-a did not submit it.
  Caller ann = As("ann", {"team-a"});
  grpc::Status s = Heartbeat(ann, "team-a", "w1");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "user \"ann\" cannot run resource \"workloads\" in the namespace "
            "\"team-a\"; groups: team-a, system:authenticated");
  // A missing workload is refused alike.
  EXPECT_EQ(Heartbeat(ann, "team-a", "nope").error_message(),
            s.error_message());
}

TEST_F(SecurityTest, ClientCannotForgeTheSubmitter) {
  StartKqd(SecureConfig());
  SetUpQueues();
  Caller alice = As("alice", {"team-a"});
  v1::SubmitWorkloadRequest request;
  *request.mutable_workload() = WorkloadIn("team-a", "w1");
  (*request.mutable_workload()
        ->mutable_metadata()
        ->mutable_annotations())["kq.dev/submitter"] = "bob";
  v1::SubmitWorkloadResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(alice.queue->SubmitWorkload(&context, request, &response).ok());
  EXPECT_EQ(response.workload().metadata().annotations().at("kq.dev/submitter"),
            "alice");
}

TEST_F(SecurityTest, OwnerRuleCanBeTurnedOff) {
  Config config = SecureConfig();
  config.owner_may_run = false;
  StartKqd(config);
  SetUpQueues();
  Caller alice = As("alice", {"team-a"});
  ASSERT_TRUE(Submit(alice, "team-a", "w1").ok());
  EXPECT_EQ(Heartbeat(alice, "team-a", "w1").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(SecurityTest, WatchWithoutKindsCarriesOnlyWhatTheCallerMayWatch) {
  StartKqd(SecureConfig());
  SetUpQueues();
  Caller alice = As("alice", {"team-a"});
  ASSERT_TRUE(Submit(alice, "team-a", "w1").ok());
  v1::WatchRequest request;
  request.set_namespace_("team-a");
  request.set_from_revision(0);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
      alice.queue->Watch(&context, request);
  std::vector<std::string> kinds;
  v1::WatchEvent event;
  while (reader->Read(&event)) {
    kinds.push_back(
        event.has_workload()
            ? "Workload"
            : event.config_object()
                  .GetDescriptor()
                  ->FindFieldByNumber(event.config_object().kind_case())
                  ->message_type()
                  ->name());
    if (event.has_workload()) break;
  }
  context.TryCancel();
  reader->Finish().IgnoreError();
  // team-a's LocalQueue and workload; not the cluster-scoped ClusterQueue
  // or ResourceFlavor, nor team-b's LocalQueue.
  EXPECT_EQ(kinds, (std::vector<std::string>{"LocalQueue", "Workload"}));

  // Naming a kind the caller may not watch is refused.
  v1::WatchRequest cq;
  cq.add_kinds("ClusterQueue");
  grpc::ClientContext cq_context;
  auto cq_reader = alice.queue->Watch(&cq_context, cq);
  while (cq_reader->Read(&event)) {
  }
  grpc::Status s = cq_reader->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(),
              HasSubstr("cannot watch resource \"clusterqueues\" at the "
                        "cluster scope"));
}

TEST_F(SecurityTest, ApplyAsksCreateForNewObjectsAndUpdateForExistingOnes) {
  StartKqd(SecureConfig());
  SetUpQueues();
  Caller upd = As("upd");
  auto apply = [&](const std::string& name) {
    v1::ApplyRequest request;
    *request.add_objects() =
        codec::ToProto(ConfigObject(ClusterQueueBuilder(name)
                                        .ResourceGroup({"cpu"})
                                        .Flavor("default")
                                        .Quota("cpu", "4")
                                        .Build()));
    v1::ApplyResponse response;
    grpc::ClientContext context;
    return upd.admin->Apply(&context, request, &response);
  };
  EXPECT_TRUE(apply("cq").ok());
  grpc::Status s = apply("cq-new");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(),
              HasSubstr("user \"upd\" cannot create resource "
                        "\"clusterqueues\" at the cluster scope"));
}

TEST_F(SecurityTest, ShimImpersonatesAUserWithItsToken) {
  StartKqd(SecureConfig());
  SetUpQueues();
  Caller tls_only = As("");
  v1::SubmitWorkloadRequest request;
  *request.mutable_workload() = WorkloadIn("team-b", "job-1");
  v1::SubmitWorkloadResponse response;
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer tok-shim");
    context.AddMetadata("impersonate-user", "bob");
    context.AddMetadata("impersonate-group", "team-b");
    ASSERT_TRUE(
        tls_only.queue->SubmitWorkload(&context, request, &response).ok());
    EXPECT_EQ(
        response.workload().metadata().annotations().at("kq.dev/submitter"),
        "bob");
  }
  {
    // Impersonated, the shim has bob's rights, not its own.
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer tok-shim");
    context.AddMetadata("impersonate-user", "bob");
    context.AddMetadata("impersonate-group", "team-b");
    *request.mutable_workload() = WorkloadIn("team-a", "job-2");
    grpc::Status s =
        tls_only.queue->SubmitWorkload(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    // Alice may not impersonate anyone.
    Caller alice = As("alice", {"team-a"});
    grpc::ClientContext context;
    context.AddMetadata("impersonate-user", "bob");
    grpc::Status s = alice.queue->SubmitWorkload(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(s.error_message(),
                HasSubstr("cannot impersonate resource \"users\""));
  }
}

TEST_F(SecurityTest, SimulateHidesVictimsOfOtherTeams) {
  StartKqd(SecureConfig());
  ApplyAsAdmin(
      {ResourceFlavorBuilder("default").Build(),
       ::kq::testing::WorkloadPriorityClassBuilder("low", 1).Build(),
       ::kq::testing::WorkloadPriorityClassBuilder("high", 100).Build(),
       ClusterQueueBuilder("cq")
           .ResourceGroup({"cpu"})
           .Flavor("default")
           .Quota("cpu", "1")
           .WithinClusterQueue("LowerPriority")
           .Build(),
       LocalQueueBuilder("team-a", "lq", "cq").Build(),
       LocalQueueBuilder("team-b", "lq", "cq").Build()});
  Caller bob = As("bob", {"team-b"});
  v1::SubmitWorkloadRequest low;
  *low.mutable_workload() = codec::ToProto(WorkloadBuilder("low-b")
                                               .Namespace("team-b")
                                               .Queue("lq")
                                               .PriorityClass("low")
                                               .PodSet("main", 1)
                                               .Request("cpu", "1")
                                               .Build());
  {
    v1::SubmitWorkloadResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(bob.queue->SubmitWorkload(&context, low, &response).ok());
  }
  auto simulate = [](Caller& caller, const std::string& ns) {
    v1::SimulateRequest request;
    *request.mutable_workload() = codec::ToProto(WorkloadBuilder("high")
                                                     .Namespace(ns)
                                                     .Queue("lq")
                                                     .PriorityClass("high")
                                                     .PodSet("main", 1)
                                                     .Request("cpu", "1")
                                                     .Build());
    v1::SimulateResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(caller.queue->Simulate(&context, request, &response).ok());
    return response;
  };
  // bob sees his own workload would be preempted...
  v1::SimulateResponse own = simulate(bob, "team-b");
  ASSERT_EQ(own.victims_size(), 1);
  EXPECT_EQ(own.victims(0).name(), "low-b");
  // ...alice learns that one would be, and why, but not whose.
  Caller alice = As("alice", {"team-a"});
  v1::SimulateResponse other = simulate(alice, "team-a");
  ASSERT_EQ(other.victims_size(), 1);
  EXPECT_EQ(other.victims(0).name(), "");
  EXPECT_EQ(other.victims(0).namespace_(), "");
  EXPECT_FALSE(other.victims(0).reason().empty());
}

TEST_F(SecurityTest, EveryCallCarriesItsAuditId) {
  StartKqd(SecureConfig());
  Caller nobody = As("");
  v1::GetWorkloadRequest request;
  request.set_namespace_("team-a");
  request.set_name("w");
  v1::GetWorkloadResponse response;
  grpc::ClientContext context;
  grpc::Status s = nobody.queue->GetWorkload(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto id = context.GetServerTrailingMetadata().find("kq-audit-id");
  ASSERT_NE(id, context.GetServerTrailingMetadata().end());
  EXPECT_EQ(id->second.size(), 36u);
}

struct StartCase {
  const char* name;
  std::function<void(Config&)> change;
  const char* error;  // empty: starts
};

class CheckSecurityTest : public ::testing::TestWithParam<StartCase> {};

void PrintTo(const StartCase& c, std::ostream* os) { *os << c.name; }

TEST_P(CheckSecurityTest, Decides) {
  Config config;
  config.listen = "127.0.0.1:7070";
  config.http_listen = "127.0.0.1:8080";
  GetParam().change(config);
  absl::Status s = CheckSecurity(config);
  if (std::string(GetParam().error).empty()) {
    EXPECT_TRUE(s.ok()) << s;
  } else {
    EXPECT_THAT(std::string(s.message()), HasSubstr(GetParam().error));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CheckSecurityTest,
    ::testing::Values(
        StartCase{"LoopbackWithoutAuth", [](Config&) {}, ""},
        StartCase{"UnixSocketWithoutAuth",
                  [](Config& c) { c.listen = "unix:/run/kq.sock"; }, ""},
        StartCase{"AnyAddressWithoutAuth",
                  [](Config& c) { c.listen = "0.0.0.0:7070"; },
                  "refusing to serve --listen=0.0.0.0:7070, which is not a "
                  "loopback address, without authentication"},
        StartCase{"HttpOnAnyAddressWithoutAuth",
                  [](Config& c) { c.http_listen = "[::]:8080"; },
                  "refusing to serve --http-listen=[::]:8080"},
        StartCase{"AnyAddressWithAuthWithoutTls",
                  [](Config& c) {
                    c.listen = "0.0.0.0:7070";
                    c.authz_file = "authz.yaml";
                  },
                  "without TLS (no --tls-cert): bearer tokens would cross "
                  "the network in the clear"},
        StartCase{"AnyAddressWithAuthAndTls",
                  [](Config& c) {
                    c.listen = "0.0.0.0:7070";
                    c.authz_file = "authz.yaml";
                    c.tls_cert = "tls.crt";
                    c.tls_key = "tls.key";
                  },
                  ""},
        StartCase{"InsecureFlag",
                  [](Config& c) {
                    c.listen = "0.0.0.0:7070";
                    c.insecure_allow_unauthenticated = true;
                  },
                  ""},
        StartCase{"TokensWithoutBindings",
                  [](Config& c) { c.token_file = "tokens"; },
                  "--token-file: needs --authz-file"},
        StartCase{"HalfACertificate", [](Config& c) { c.tls_cert = "tls.crt"; },
                  "--tls-cert and --tls-key: give both or neither"},
        StartCase{"ClientCaWithoutTls",
                  [](Config& c) {
                    c.client_ca = "ca.crt";
                    c.authz_file = "authz.yaml";
                  },
                  "--client-ca: needs --tls-cert and --tls-key"}),
    [](const ::testing::TestParamInfo<StartCase>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace kq::daemon
