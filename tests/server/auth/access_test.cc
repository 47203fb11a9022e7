#include "server/auth/access.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

#include "server/auth/policy_files.h"
#include "server/auth/tokens.h"
#include "tests/server/auth/test_certs.h"

namespace kq::auth {
namespace {

constexpr char kBindings[] = R"(
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

class AccessTest : public testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest runs them in parallel, and one of them
    // rewrites the files.
    dir_ = testing::TempDir() + "/access_test_" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    Write(dir_ + "/tokens",
          "sha256:" + absl::BytesToHexString(Sha256("tok-alice")) +
              " alice team-a\n" + "sha256:" +
              absl::BytesToHexString(Sha256("tok-shim")) + " shim\n");
    Write(dir_ + "/authz.yaml", kBindings);
    files_ = std::make_unique<PolicyFiles>(dir_ + "/tokens",
                                           dir_ + "/authz.yaml", nullptr);
    ASSERT_TRUE(files_->Load().ok());
    access_ = std::make_unique<Access>(AccessOptions{.enabled = true},
                                       files_.get(), nullptr);
  }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  absl::StatusOr<Principal> WithToken(const std::string& header) {
    Credentials c;
    c.authorization = header;
    return access_->Authenticate(c);
  }

  std::string dir_;
  std::unique_ptr<PolicyFiles> files_;
  std::unique_ptr<Access> access_;
};

TEST_F(AccessTest, BearerTokenNamesTheUser) {
  absl::StatusOr<Principal> p = WithToken("Bearer tok-alice");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->user.name, "alice");
  EXPECT_EQ(p->user.groups,
            (std::vector<std::string>{"team-a", kAuthenticatedGroup}));
  EXPECT_EQ(p->method, AuthMethod::kToken);
  // The scheme is case-insensitive, as in HTTP.
  EXPECT_TRUE(WithToken("bearer tok-alice").ok());
}

TEST_F(AccessTest, RefusalsSayWhyWithoutEchoingTheToken) {
  EXPECT_EQ(access_->Authenticate({}).status(),
            absl::UnauthenticatedError(
                "kq: request could not be authenticated: no verified client "
                "certificate and no bearer token"));
  absl::Status unknown = WithToken("Bearer nope").status();
  EXPECT_EQ(unknown, absl::UnauthenticatedError(
                         "kq: request could not be authenticated: bearer "
                         "token not recognized"));
  EXPECT_EQ(WithToken("Basic YWxpY2U6cGFzcw==").status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(WithToken("Basic YWxpY2U6cGFzcw==").status().message().find("YW"),
            std::string::npos);
  EXPECT_EQ(WithToken(std::string(65536, 'x')).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AccessTest, ClientCertificateNamesUserAndGroups) {
  TestCerts certs(dir_ + "/certs");
  Credentials c;
  c.verified_certificate = certs.Client("carol", {"team-a", "ml"}).cert_pem;
  absl::StatusOr<Principal> p = access_->Authenticate(c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->user.name, "carol");
  EXPECT_EQ(p->user.groups,
            (std::vector<std::string>{"team-a", "ml", kAuthenticatedGroup}));
  EXPECT_EQ(p->method, AuthMethod::kX509);
  // A certificate wins over a token, as in kube-apiserver.
  c.authorization = "Bearer nope";
  EXPECT_TRUE(access_->Authenticate(c).ok());
}

TEST_F(AccessTest, ImpersonationNeedsTheRight) {
  Credentials c;
  c.authorization = "Bearer tok-shim";
  c.impersonate_user = "dev-a";
  c.impersonate_groups = {"team-a"};
  absl::StatusOr<Principal> p = access_->Authenticate(c);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->user.name, "dev-a");
  ASSERT_TRUE(p->impersonator.has_value());
  EXPECT_EQ(p->impersonator->name, "shim");
  Attributes create;
  create.verb = "create";
  create.resource = "workloads";
  create.namespace_name = "team-a";
  EXPECT_TRUE(access_->Authorize(*p, create).allowed);
  create.namespace_name = "team-b";
  EXPECT_FALSE(access_->Authorize(*p, create).allowed);

  c.authorization = "Bearer tok-alice";
  EXPECT_EQ(access_->Authenticate(c).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(std::string(access_->Authenticate(c).status().message()),
            "user \"alice\" cannot impersonate resource \"users\" at the "
            "cluster scope; groups: team-a, system:authenticated");
  c.authorization.reset();
  EXPECT_EQ(access_->Authenticate(c).status(),
            absl::UnauthenticatedError(
                "kq: request could not be authenticated: impersonation "
                "requires an authenticated principal"));
}

TEST_F(AccessTest, OffLetsEveryoneDoAnything) {
  Access off(AccessOptions{.enabled = false}, files_.get(), nullptr);
  absl::StatusOr<Principal> p = off.Authenticate({});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->user.name, kAnonymousUser);
  Attributes any;
  any.verb = "delete";
  any.resource = "clusterqueues";
  EXPECT_TRUE(off.Authorize(*p, any).allowed);
}

TEST_F(AccessTest, PolicyReloadKeepsTheOldOneWhenTheNewFailsToParse) {
  Credentials c;
  c.authorization = "Bearer tok-alice";
  Principal alice = *access_->Authenticate(c);
  Attributes create;
  create.verb = "create";
  create.resource = "workloads";
  create.namespace_name = "team-a";
  ASSERT_TRUE(access_->Authorize(alice, create).allowed);
  Write(dir_ + "/authz.yaml", "kind: [");
  EXPECT_EQ(files_->Reload().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(access_->Authorize(alice, create).allowed);
  Write(dir_ + "/authz.yaml", "");
  EXPECT_TRUE(files_->Reload().ok());
  EXPECT_FALSE(access_->Authorize(alice, create).allowed);
  // Tokens reload too: alice's is gone.
  Write(dir_ + "/tokens", "");
  EXPECT_TRUE(files_->Reload().ok());
  EXPECT_EQ(access_->Authenticate(c).status().code(),
            absl::StatusCode::kUnauthenticated);
}

}  // namespace
}  // namespace kq::auth
