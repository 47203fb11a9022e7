// What a gRPC server sees of NewGrpcClient's credentials: a fake kqd in the
// test's process (AdminService and QueueService answering from memory)
// serving plaintext, TLS, or TLS that asks for and verifies client
// certificates, with certificates made by tests/testing/make_test_pki.sh.
// Each call path of the client (retried reads, calls sent once, the async
// submission, WaitAdmitted, Watch and WatchResumable) must carry the
// bearer token and the impersonation metadata; wrong CAs, names and files
// must fail, and fail before anything is sent when the options are
// unusable.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/security/server_credentials.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.grpc.pb.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "kq/client/client.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::client {
namespace {

using ::kq::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// What one call brought: its method, the credential metadata and the
// verified client certificate's common name (empty without one).
struct SeenCall {
  std::string method;
  std::vector<std::string> authorization;
  std::vector<std::string> impersonate_user;
  std::vector<std::string> impersonate_group;
  std::string peer_common_name;
};

// Records every call of the two services. Thread-safe.
class Recorder {
 public:
  void Record(const std::string& method, const grpc::ServerContext& context) {
    SeenCall call;
    call.method = method;
    for (const auto& [key, value] : context.client_metadata()) {
      const std::string k(key.data(), key.size());
      const std::string v(value.data(), value.size());
      if (k == "authorization") call.authorization.push_back(v);
      if (k == "impersonate-user") call.impersonate_user.push_back(v);
      if (k == "impersonate-group") call.impersonate_group.push_back(v);
    }
    if (std::shared_ptr<const grpc::AuthContext> auth =
            context.auth_context()) {
      for (const grpc::string_ref& cn :
           auth->FindPropertyValues("x509_common_name")) {
        call.peer_common_name.assign(cn.data(), cn.size());
      }
    }
    absl::MutexLock lock(&mu_);
    calls_.push_back(std::move(call));
  }

  std::vector<SeenCall> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::vector<SeenCall> calls_ ABSL_GUARDED_BY(mu_);
};

v1::Workload TestWorkload() {
  v1::Workload workload;
  workload.mutable_metadata()->set_namespace_("team-a");
  workload.mutable_metadata()->set_name("w");
  workload.mutable_spec()->set_queue_name("lq");
  return workload;
}

class FakeAdmin : public v1::AdminService::Service {
 public:
  explicit FakeAdmin(Recorder& recorder) : recorder_(recorder) {}
  grpc::Status Apply(grpc::ServerContext* context, const v1::ApplyRequest*,
                     v1::ApplyResponse*) override {
    recorder_.Record("Apply", *context);
    return grpc::Status::OK;
  }
  grpc::Status GetObject(grpc::ServerContext* context,
                         const v1::GetObjectRequest*,
                         v1::GetObjectResponse* response) override {
    recorder_.Record("GetObject", *context);
    response->mutable_object()
        ->mutable_resource_flavor()
        ->mutable_metadata()
        ->set_name("default");
    return grpc::Status::OK;
  }
  grpc::Status ListObjects(grpc::ServerContext* context,
                           const v1::ListObjectsRequest*,
                           v1::ListObjectsResponse* response) override {
    recorder_.Record("ListObjects", *context);
    response->set_revision(7);
    return grpc::Status::OK;
  }

 private:
  Recorder& recorder_;
};

class FakeQueue : public v1::QueueService::Service {
 public:
  explicit FakeQueue(Recorder& recorder) : recorder_(recorder) {}
  grpc::Status SubmitWorkload(grpc::ServerContext* context,
                              const v1::SubmitWorkloadRequest* request,
                              v1::SubmitWorkloadResponse* response) override {
    recorder_.Record("SubmitWorkload", *context);
    *response->mutable_workload() = request->workload();
    return grpc::Status::OK;
  }
  grpc::Status Admit(grpc::ServerContext* context, const v1::AdmitRequest*,
                     v1::AdmitResponse* response) override {
    recorder_.Record("Admit", *context);
    response->set_outcome(v1::AdmitResponse::ADMITTED);
    *response->mutable_workload() = TestWorkload();
    return grpc::Status::OK;
  }
  // One event at the revision after the one asked for, then the stream
  // stays open until the client ends it.
  grpc::Status Watch(grpc::ServerContext* context,
                     const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::WatchEvent>* writer) override {
    recorder_.Record("Watch", *context);
    v1::WatchEvent event;
    event.set_revision(request->from_revision() + 1);
    *event.mutable_workload() = TestWorkload();
    writer->Write(event);
    while (!context->IsCancelled()) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    return grpc::Status::OK;
  }

 private:
  Recorder& recorder_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

enum class Transport {
  // No TLS.
  kPlaintext,
  // TLS with server.crt; client certificates neither asked for nor used.
  kTls,
  // TLS asking for a client certificate and verifying it against ca.crt
  // when one is sent, as kqd --client-ca does.
  kMutualTls,
};

class GrpcClientCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string script =
        absl::StrCat(KQ_SOURCE_DIR, "/tests/testing/make_test_pki.sh");
    ASSERT_EQ(
        std::system(absl::StrCat("bash ", script, " ", pki_.path()).c_str()), 0)
        << "making the test PKI with openssl failed";
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now()));
  }

  // Starts the fake kqd on 127.0.0.1 with `transport` and the serving
  // certificate `cert` (server: localhost and 127.0.0.1).
  void StartServer(Transport transport, const std::string& cert = "server") {
    std::shared_ptr<grpc::ServerCredentials> credentials =
        grpc::InsecureServerCredentials();
    if (transport != Transport::kPlaintext) {
      grpc::SslServerCredentialsOptions ssl(
          transport == Transport::kMutualTls
              ? GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY
              : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
      ssl.pem_root_certs = ReadAll(File("ca.crt"));
      ssl.pem_key_cert_pairs.push_back(
          {ReadAll(File(cert + ".key")), ReadAll(File(cert + ".crt"))});
      credentials = grpc::SslServerCredentials(ssl);
    }
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", credentials, &port_);
    builder.RegisterService(&admin_);
    builder.RegisterService(&queue_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }

  std::string File(const std::string& name) const { return pki_.File(name); }

  // Options for the fake kqd at `host`, with quick give-ups.
  ClientOptions Options(const std::string& host = "127.0.0.1") const {
    ClientOptions options;
    options.target = absl::StrCat(host, ":", port_);
    options.deadline = absl::Seconds(5);
    options.retry_budget = absl::Seconds(1);
    options.retry_initial_backoff = absl::Milliseconds(10);
    options.retry_max_backoff = absl::Milliseconds(50);
    return options;
  }

  // Makes one call of every path the client has.
  void CallEveryPath(Client& client) {
    EXPECT_OK(client.Connect(absl::Seconds(5)));
    EXPECT_OK(client.GetObject("ResourceFlavor", "", "default").status());
    EXPECT_OK(client.Apply(v1::ApplyRequest()).status());
    EXPECT_OK(client.SubmitWorkload(TestWorkload()).status());
    absl::Notification submitted;
    client.SubmitWorkloadAsync(
        [] {
          v1::SubmitWorkloadRequest request;
          *request.mutable_workload() = TestWorkload();
          return request;
        }(),
        [&submitted](absl::StatusOr<v1::SubmitWorkloadResponse> response) {
          EXPECT_OK(response.status());
          submitted.Notify();
        });
    ASSERT_TRUE(submitted.WaitForNotificationWithTimeout(absl::Seconds(10)));
    v1::AdmitRequest admit;
    admit.set_namespace_("team-a");
    admit.set_name("w");
    EXPECT_OK(client.WaitAdmitted(admit, absl::Seconds(5), nullptr).status());
    v1::WatchRequest watch;
    watch.set_from_revision(1);
    int events = 0;
    EXPECT_OK(client.Watch(watch, [&events](const v1::WatchEvent&) {
      ++events;
      return false;
    }));
    // From now on: pinned with a ListObjects first, then the stream.
    EXPECT_OK(client.WatchResumable(
        v1::WatchRequest(),
        [&events](const v1::WatchEvent&) {
          ++events;
          return false;
        },
        nullptr));
    EXPECT_EQ(events, 2);
  }

  static std::vector<std::string> Methods(const std::vector<SeenCall>& calls) {
    std::vector<std::string> methods;
    for (const SeenCall& call : calls) methods.push_back(call.method);
    return methods;
  }

  kq::testing::ScopedTempDir pki_{"pki"};
  Recorder recorder_;
  FakeAdmin admin_{recorder_};
  FakeQueue queue_{recorder_};
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(GrpcClientCredentialsTest, TokenOverTlsOnEveryCallPath) {
  StartServer(Transport::kTls);
  ClientOptions options = Options();
  options.tls_ca_file = File("ca.crt");
  options.token = "alice-token";
  std::unique_ptr<Client> client = NewGrpcClient(options);
  CallEveryPath(*client);
  const std::vector<SeenCall> calls = recorder_.calls();
  EXPECT_THAT(
      Methods(calls),
      ElementsAre("GetObject", "Apply", "SubmitWorkload", "SubmitWorkload",
                  "Admit", "Watch", "ListObjects", "Watch"));
  for (const SeenCall& call : calls) {
    EXPECT_THAT(call.authorization, ElementsAre("Bearer alice-token"))
        << call.method;
    EXPECT_THAT(call.impersonate_user, IsEmpty()) << call.method;
    EXPECT_EQ(call.peer_common_name, "") << call.method;
  }
}

TEST_F(GrpcClientCredentialsTest, ClientCertificateOnEveryCallPath) {
  StartServer(Transport::kMutualTls);
  ClientOptions options = Options();
  options.tls_ca_file = File("ca.crt");
  options.tls_cert_file = File("alice.crt");
  options.tls_key_file = File("alice.key");
  std::unique_ptr<Client> client = NewGrpcClient(options);
  CallEveryPath(*client);
  const std::vector<SeenCall> calls = recorder_.calls();
  ASSERT_THAT(calls, SizeIs(8));
  for (const SeenCall& call : calls) {
    EXPECT_EQ(call.peer_common_name, "alice") << call.method;
    EXPECT_THAT(call.authorization, IsEmpty()) << call.method;
  }
}

TEST_F(GrpcClientCredentialsTest, ImpersonationAndTokenFileOnEveryCallPath) {
  StartServer(Transport::kMutualTls);
  std::ofstream(File("shim-token")) << "shim-token\n";
  ClientOptions options = Options("localhost");
  options.tls_ca_file = File("ca.crt");
  options.tls_cert_file = File("admin.crt");
  options.tls_key_file = File("admin.key");
  options.token_file = File("shim-token");
  options.impersonate_user = "alice";
  options.impersonate_groups = {"team-a", "system:authenticated"};
  std::unique_ptr<Client> client = NewGrpcClient(options);
  CallEveryPath(*client);
  const std::vector<SeenCall> calls = recorder_.calls();
  ASSERT_THAT(calls, SizeIs(8));
  for (const SeenCall& call : calls) {
    EXPECT_THAT(call.authorization, ElementsAre("Bearer shim-token"))
        << call.method;
    EXPECT_THAT(call.impersonate_user, ElementsAre("alice")) << call.method;
    EXPECT_THAT(call.impersonate_group,
                ElementsAre("team-a", "system:authenticated"))
        << call.method;
    EXPECT_EQ(call.peer_common_name, "admin") << call.method;
  }
}

TEST_F(GrpcClientCredentialsTest, TokenOverPlaintextToLoopback) {
  StartServer(Transport::kPlaintext);
  ClientOptions options = Options();
  options.token = "local-token";
  std::unique_ptr<Client> client = NewGrpcClient(options);
  CallEveryPath(*client);
  const std::vector<SeenCall> calls = recorder_.calls();
  ASSERT_THAT(calls, SizeIs(8));
  for (const SeenCall& call : calls) {
    EXPECT_THAT(call.authorization, ElementsAre("Bearer local-token"))
        << call.method;
  }
}

TEST_F(GrpcClientCredentialsTest, NoCredentialsSendNoMetadata) {
  StartServer(Transport::kPlaintext);
  std::unique_ptr<Client> client = NewGrpcClient(Options());
  CallEveryPath(*client);
  const std::vector<SeenCall> calls = recorder_.calls();
  ASSERT_THAT(calls, SizeIs(8));
  for (const SeenCall& call : calls) {
    EXPECT_THAT(call.authorization, IsEmpty()) << call.method;
    EXPECT_THAT(call.impersonate_user, IsEmpty()) << call.method;
  }
}

// A host name that is not loopback: refused before any connection, on
// every path, with the advice to use TLS.
TEST_F(GrpcClientCredentialsTest, TokenOverPlaintextToAnotherHostIsRefused) {
  ClientOptions options = Options();
  options.target = "kqd.invalid:7070";
  options.token = "s3cret";
  std::unique_ptr<Client> client = NewGrpcClient(options);
  auto refused =
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("kqd.invalid:7070"), HasSubstr("--tls-ca")));
  EXPECT_THAT(client->Connect(absl::Seconds(1)), refused);
  EXPECT_THAT(client->GetObject("ResourceFlavor", "", "x"), refused);
  EXPECT_THAT(client->SubmitWorkload(TestWorkload()), refused);
  EXPECT_THAT(client->Watch(v1::WatchRequest(),
                            [](const v1::WatchEvent&) { return true; }),
              refused);
  EXPECT_THAT(client->WatchResumable(
                  v1::WatchRequest(),
                  [](const v1::WatchEvent&) { return true; }, nullptr),
              refused);
  bool answered = false;
  client->SubmitWorkloadAsync(
      v1::SubmitWorkloadRequest(),
      [&](absl::StatusOr<v1::SubmitWorkloadResponse> response) {
        EXPECT_THAT(response, refused);
        answered = true;
      });
  EXPECT_TRUE(answered);
}

TEST_F(GrpcClientCredentialsTest, UnreadableCredentialFilesAreNamed) {
  StartServer(Transport::kMutualTls);
  struct Case {
    std::string ca, cert, key, token_file, want;
  };
  const std::vector<Case> cases = {
      {File("missing-ca.crt"), "", "", "",
       "cannot read the TLS CA file \"" + File("missing-ca.crt") + "\""},
      {File("ca.crt"), File("missing.crt"), File("alice.key"), "",
       "cannot read the client certificate file \"" + File("missing.crt") +
           "\""},
      {File("ca.crt"), File("alice.crt"), File("missing.key"), "",
       "cannot read the client key file \"" + File("missing.key") + "\""},
      {File("ca.crt"), File("alice.crt"), File("alice.crt"), "",
       "the client key file \"" + File("alice.crt") +
           "\" holds no PEM private key"},
      {File("ca.crt"), "", "", File("missing-token"),
       "cannot read the token file \"" + File("missing-token") + "\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.want);
    ClientOptions options = Options();
    options.tls_ca_file = c.ca;
    options.tls_cert_file = c.cert;
    options.tls_key_file = c.key;
    options.token_file = c.token_file;
    std::unique_ptr<Client> client = NewGrpcClient(options);
    EXPECT_THAT(
        client->Connect(absl::Seconds(1)),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.want)));
    EXPECT_THAT(
        client->ListObjects("ClusterQueue", ""),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.want)));
  }
  EXPECT_THAT(recorder_.calls(), IsEmpty());
}

TEST_F(GrpcClientCredentialsTest, ServerSignedByAnotherCaIsRefused) {
  StartServer(Transport::kTls);
  ClientOptions options = Options();
  options.tls_ca_file = File("rogue-ca.crt");
  options.token = "s3cret";
  std::unique_ptr<Client> client = NewGrpcClient(options);
  EXPECT_THAT(client->Connect(absl::Seconds(5)),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(client->GetObject("ResourceFlavor", "", "x"),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(recorder_.calls(), IsEmpty());
}

TEST_F(GrpcClientCredentialsTest, ServerNameMustMatchOrBeOverridden) {
  StartServer(Transport::kTls, "other-name");
  ClientOptions options = Options();
  options.tls_ca_file = File("ca.crt");
  EXPECT_THAT(NewGrpcClient(options)->Connect(absl::Seconds(5)),
              StatusIs(absl::StatusCode::kUnavailable));
  options.tls_server_name = "kqd.test";
  std::unique_ptr<Client> client = NewGrpcClient(options);
  EXPECT_OK(client->Connect(absl::Seconds(5)));
  EXPECT_OK(client->GetObject("ResourceFlavor", "", "default").status());
  EXPECT_THAT(Methods(recorder_.calls()), ElementsAre("GetObject"));
}

TEST_F(GrpcClientCredentialsTest, UntrustedClientCertificateFailsTheHandshake) {
  StartServer(Transport::kMutualTls);
  ClientOptions options = Options();
  options.tls_ca_file = File("ca.crt");
  options.tls_cert_file = File("rogue.crt");
  options.tls_key_file = File("rogue.key");
  std::unique_ptr<Client> client = NewGrpcClient(options);
  EXPECT_THAT(client->GetObject("ResourceFlavor", "", "x"),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(recorder_.calls(), IsEmpty());
}

TEST_F(GrpcClientCredentialsTest, PlaintextClientOfATlsServerFails) {
  StartServer(Transport::kTls);
  std::unique_ptr<Client> client = NewGrpcClient(Options());
  EXPECT_THAT(client->Connect(absl::Seconds(5)),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(recorder_.calls(), IsEmpty());
}

}  // namespace
}  // namespace kq::client
