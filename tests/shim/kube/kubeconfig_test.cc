// LoadKubeconfig and LoadInClusterConfig on files written to a temporary
// directory.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "shim/kube/client.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::kube {
namespace {

using ::kq::testing::StatusIs;
using ::testing::HasSubstr;

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kq-kubeconfig-XXXXXX")
            .string();
    path_ = mkdtemp(pattern.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  std::string path_;
};

// Sets an environment variable for one scope, restoring the old value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    had_ = getenv(name) != nullptr;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

constexpr char kCaPem[] =
    "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr char kCertPem[] =
    "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n";
constexpr char kKeyPem[] =
    "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";

TEST(LoadKubeconfigTest, InlineDataIsDecoded) {
  ScratchDir dir;
  const std::string path =
      dir.Write("config", absl::StrCat(R"(
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: )",
                                       absl::Base64Escape(kCaPem),
                                       R"(
users:
- name: admin
  user:
    client-certificate-data: )",
                                       absl::Base64Escape(kCertPem),
                                       R"(
    client-key-data: )",
                                       absl::Base64Escape(kKeyPem),
                                       R"(
    token: abc123
contexts:
- name: prod
  context:
    cluster: prod
    user: admin
    namespace: team-a
current-context: prod
)"));
  ASSERT_OK_AND_ASSIGN(Config config, LoadKubeconfig(path));
  EXPECT_EQ(config.server, "https://10.0.0.1:6443");
  EXPECT_EQ(config.certificate_authority_data, kCaPem);
  EXPECT_EQ(config.certificate_authority_file, "");
  EXPECT_EQ(config.client_certificate_data, kCertPem);
  EXPECT_EQ(config.client_key_data, kKeyPem);
  EXPECT_EQ(config.bearer_token, "abc123");
  EXPECT_EQ(config.bearer_token_file, "");
  EXPECT_FALSE(config.insecure_skip_tls_verify);
  EXPECT_EQ(config.default_namespace, "team-a");
}

TEST(LoadKubeconfigTest, RelativeFilesResolveAgainstTheKubeconfigDirectory) {
  ScratchDir dir;
  const std::string path = dir.Write("kube/config", R"(
clusters:
- name: c
  cluster:
    server: https://example.test
    certificate-authority: certs/ca.crt
users:
- name: u
  user:
    client-certificate: ../client.crt
    client-key: /etc/absolute/client.key
    tokenFile: token
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
)");
  ASSERT_OK_AND_ASSIGN(Config config, LoadKubeconfig(path));
  EXPECT_EQ(config.certificate_authority_file,
            absl::StrCat(dir.path(), "/kube/certs/ca.crt"));
  EXPECT_EQ(config.client_certificate_file,
            absl::StrCat(dir.path(), "/client.crt"));
  EXPECT_EQ(config.client_key_file, "/etc/absolute/client.key");
  EXPECT_EQ(config.bearer_token_file, absl::StrCat(dir.path(), "/kube/token"));
  EXPECT_EQ(config.certificate_authority_data, "");
  // No namespace in the context: "default".
  EXPECT_EQ(config.default_namespace, "default");
}

TEST(LoadKubeconfigTest, NamedContextWinsOverCurrentContext) {
  ScratchDir dir;
  const std::string path = dir.Write("config", R"(
clusters:
- name: one
  cluster: {server: "https://one.test"}
- name: two
  cluster:
    server: https://two.test
    insecure-skip-tls-verify: true
users:
- name: anonymous
contexts:
- name: first
  context: {cluster: one, namespace: ns1}
- name: second
  context: {cluster: two, user: anonymous, namespace: ns2}
current-context: first
)");
  ASSERT_OK_AND_ASSIGN(Config current, LoadKubeconfig(path));
  EXPECT_EQ(current.server, "https://one.test");
  EXPECT_EQ(current.default_namespace, "ns1");
  EXPECT_FALSE(current.insecure_skip_tls_verify);
  ASSERT_OK_AND_ASSIGN(Config named, LoadKubeconfig(path, "second"));
  EXPECT_EQ(named.server, "https://two.test");
  EXPECT_EQ(named.default_namespace, "ns2");
  EXPECT_TRUE(named.insecure_skip_tls_verify);
  EXPECT_EQ(named.bearer_token, "");
}

struct KubeconfigErrorCase {
  std::string name;
  std::string yaml;
  std::string context;
  absl::StatusCode want_code;
  std::string want_message;

  friend void PrintTo(const KubeconfigErrorCase& tc, std::ostream* os) {
    *os << tc.name;
  }
};

class LoadKubeconfigErrorTest
    : public ::testing::TestWithParam<KubeconfigErrorCase> {};

TEST_P(LoadKubeconfigErrorTest, NamesTheField) {
  const KubeconfigErrorCase& tc = GetParam();
  ScratchDir dir;
  const std::string path = dir.Write("config", tc.yaml);
  EXPECT_THAT(LoadKubeconfig(path, tc.context),
              StatusIs(tc.want_code, HasSubstr(tc.want_message)));
}

// A valid kubeconfig with one piece replaced per case.
std::string Kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& context,
                       const std::string& current = "current-context: x") {
  return absl::StrCat("clusters:\n", cluster, "users:\n", user, "contexts:\n",
                      context, current, "\n");
}
const std::string kCluster =
    "- name: y\n  cluster:\n    server: https://y.test\n";
const std::string kUser = "- name: u\n  user:\n    token: t\n";
const std::string kContext =
    "- name: x\n  context:\n    cluster: y\n    user: u\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, LoadKubeconfigErrorTest,
    ::testing::ValuesIn(std::vector<KubeconfigErrorCase>{
        {.name = "no_current_context",
         .yaml = Kubeconfig(kCluster, kUser, kContext, ""),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "current-context: not set"},
        {.name = "current_context_not_found",
         .yaml = Kubeconfig(kCluster, kUser, kContext, "current-context: z"),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "current-context: context \"z\" not found"},
        {.name = "named_context_not_found",
         .yaml = Kubeconfig(kCluster, kUser, kContext),
         .context = "w",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "contexts: context \"w\" not found"},
        {.name = "context_without_cluster",
         .yaml = Kubeconfig(kCluster, kUser,
                            "- name: x\n  context:\n    user: u\n"),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "contexts[name=\"x\"].context.cluster: missing"},
        {.name = "cluster_not_found",
         .yaml = Kubeconfig("- name: other\n  cluster:\n    server: "
                            "https://o.test\n",
                            kUser, kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message =
             "contexts[name=\"x\"].context.cluster: cluster \"y\" not found"},
        {.name = "user_not_found",
         .yaml = Kubeconfig(kCluster, "- name: v\n  user: {}\n", kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message =
             "contexts[name=\"x\"].context.user: user \"u\" not found"},
        {.name = "server_missing",
         .yaml = Kubeconfig("- name: y\n  cluster:\n    "
                            "insecure-skip-tls-verify: true\n",
                            kUser, kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "clusters[name=\"y\"].cluster.server: missing"},
        {.name = "server_not_a_url",
         .yaml = Kubeconfig("- name: y\n  cluster:\n    server: y.test:6443\n",
                            kUser, kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "clusters[name=\"y\"].cluster.server: \"y.test:6443\" "
                         "is not a URL"},
        {.name = "certificate_authority_data_not_base64",
         .yaml = Kubeconfig(kCluster +
                                "    certificate-authority-data: '!!notb64'\n",
                            kUser, kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "clusters[name=\"y\"].cluster.certificate-authority-"
                         "data: not valid base64"},
        {.name = "insecure_not_a_boolean",
         .yaml = Kubeconfig(kCluster + "    insecure-skip-tls-verify: maybe\n",
                            kUser, kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "clusters[name=\"y\"].cluster.insecure-skip-tls-"
                         "verify: not a boolean"},
        {.name = "client_certificate_without_key",
         .yaml = Kubeconfig(kCluster,
                            "- name: u\n  user:\n    client-certificate: "
                            "c.crt\n",
                            kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "users[name=\"u\"].user.client-key: missing"},
        {.name = "client_key_without_certificate",
         .yaml = Kubeconfig(kCluster,
                            "- name: u\n  user:\n    client-key-data: "
                            "a2V5\n",
                            kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "users[name=\"u\"].user.client-certificate: missing"},
        {.name = "exec_plugin_refused",
         .yaml = Kubeconfig(kCluster,
                            "- name: u\n  user:\n    exec:\n      command: "
                            "aws\n      apiVersion: "
                            "client.authentication.k8s.io/v1\n",
                            kContext),
         .want_code = absl::StatusCode::kUnimplemented,
         .want_message = "users[name=\"u\"].user.exec: credential plugins are "
                         "not supported"},
        {.name = "auth_provider_refused",
         .yaml = Kubeconfig(kCluster,
                            "- name: u\n  user:\n    auth-provider:\n      "
                            "name: gcp\n",
                            kContext),
         .want_code = absl::StatusCode::kUnimplemented,
         .want_message = "users[name=\"u\"].user.auth-provider"},
        {.name = "basic_auth_refused",
         .yaml = Kubeconfig(kCluster,
                            "- name: u\n  user:\n    username: admin\n    "
                            "password: secret\n",
                            kContext),
         .want_code = absl::StatusCode::kUnimplemented,
         .want_message = "basic authentication is not supported"},
        {.name = "clusters_not_a_list",
         .yaml = "clusters: {}\ncontexts:\n" + kContext +
                 "current-context: x\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "clusters: not a list"},
        {.name = "token_not_a_string",
         .yaml = Kubeconfig(kCluster, "- name: u\n  user:\n    token: [a]\n",
                            kContext),
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "users[name=\"u\"].user.token: not a string"},
        {.name = "not_yaml",
         .yaml = "clusters: [unclosed\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "kubeconfig "},
        {.name = "not_a_mapping",
         .yaml = "- just\n- a list\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_message = "not a YAML mapping"},
    }),
    [](const auto& info) { return info.param.name; });

TEST(LoadKubeconfigTest, MissingFileIsFailedPrecondition) {
  EXPECT_THAT(LoadKubeconfig("/nonexistent/kq/kubeconfig"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("/nonexistent/kq/kubeconfig")));
}

class LoadInClusterConfigTest : public ::testing::Test {
 protected:
  void WriteServiceAccount(bool ca = true, bool ns = true) {
    dir_.Write("token", "service-account-token\n");
    if (ca) dir_.Write("ca.crt", kCaPem);
    if (ns) dir_.Write("namespace", "kq-system\n");
  }
  ScratchDir dir_;
};

TEST_F(LoadInClusterConfigTest, ReadsServiceAccountAndEnvironment) {
  WriteServiceAccount();
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  ASSERT_OK_AND_ASSIGN(Config config, LoadInClusterConfig(dir_.path()));
  EXPECT_EQ(config.server, "https://10.96.0.1:443");
  // The token stays a file: projected tokens rotate.
  EXPECT_EQ(config.bearer_token, "");
  EXPECT_EQ(config.bearer_token_file, dir_.path() + "/token");
  EXPECT_EQ(config.certificate_authority_file, dir_.path() + "/ca.crt");
  EXPECT_EQ(config.default_namespace, "kq-system");
  EXPECT_FALSE(config.insecure_skip_tls_verify);
}

TEST_F(LoadInClusterConfigTest, BracketsIpv6Host) {
  WriteServiceAccount();
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00:10:96::1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
  ASSERT_OK_AND_ASSIGN(Config config, LoadInClusterConfig(dir_.path()));
  EXPECT_EQ(config.server, "https://[fd00:10:96::1]:6443");
}

TEST_F(LoadInClusterConfigTest, WithoutCaAndNamespaceFilesUsesDefaults) {
  WriteServiceAccount(/*ca=*/false, /*ns=*/false);
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  ASSERT_OK_AND_ASSIGN(Config config, LoadInClusterConfig(dir_.path()));
  EXPECT_EQ(config.certificate_authority_file, "");
  EXPECT_EQ(config.default_namespace, "default");
}

TEST_F(LoadInClusterConfigTest, OutsideAClusterIsFailedPrecondition) {
  WriteServiceAccount();
  ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  EXPECT_THAT(LoadInClusterConfig(dir_.path()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("KUBERNETES_SERVICE_HOST")));
}

TEST_F(LoadInClusterConfigTest, MissingTokenIsFailedPrecondition) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  EXPECT_THAT(LoadInClusterConfig(dir_.path()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(dir_.path() + "/token")));
}

}  // namespace
}  // namespace kq::shim::kube
