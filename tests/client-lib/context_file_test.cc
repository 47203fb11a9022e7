// The kq contexts file as kqd reads it for a MultiKueue worker
// (kq/client/context_file.h LoadContextFile): which context is chosen, the
// options it gives, and the errors naming the file, context and field. The
// parser's own cases (unknown fields, types, duplicates) are the CLI's
// (tests/cli/kqconfig_test.cc), which runs on the same parser.

#include "kq/client/context_file.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "tests/testing/temp_dir.h"

namespace kq::client {
namespace {

using ::testing::HasSubstr;

constexpr char kTwoContexts[] = R"(apiVersion: kq/v1
kind: Config
current-context: prod
contexts:
- name: prod
  server: kqd.example.com:7070
  tls-ca: /etc/kq/ca.crt
  cert: certs/manager.crt
  key: certs/manager.key
  tls-server-name: kqd.internal
- name: ci
  server: 10.0.0.7:7070
  tls-ca: ca.crt
  token-file: /var/run/secrets/kq/token
)";

struct LoadCase {
  std::string name;
  friend void PrintTo(const LoadCase& c, std::ostream* os) { *os << c.name; }
  std::string text;  // empty: the file does not exist
  std::string context;
  // On success (relative paths are relative to the file's directory,
  // written here as "<dir>/...").
  std::string want_target;
  std::string want_tls_ca;
  std::string want_cert;
  std::string want_key;
  std::string want_token_file;
  std::string want_server_name;
  absl::StatusCode want_code = absl::StatusCode::kOk;
  std::vector<std::string> want_error;  // substrings
};

class LoadContextFileTest : public ::testing::TestWithParam<LoadCase> {};

TEST_P(LoadContextFileTest, Options) {
  const LoadCase& tc = GetParam();
  kq::testing::ScopedTempDir dir;
  const std::string path = dir.File("worker.yaml");
  if (!tc.text.empty()) std::ofstream(path) << tc.text;
  absl::StatusOr<ClientOptions> got = LoadContextFile(path, tc.context);
  if (tc.want_code != absl::StatusCode::kOk) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), tc.want_code) << got.status();
    EXPECT_THAT(got.status().message(), HasSubstr(path));
    for (const std::string& part : tc.want_error) {
      EXPECT_THAT(got.status().message(), HasSubstr(part));
    }
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  auto in_dir = [&](const std::string& want) {
    const std::string prefix = "<dir>/";
    return want.rfind(prefix, 0) == 0
               ? dir.path() + "/" + want.substr(prefix.size())
               : want;
  };
  EXPECT_EQ(got->target, tc.want_target);
  EXPECT_EQ(got->tls_ca_file, in_dir(tc.want_tls_ca));
  EXPECT_EQ(got->tls_cert_file, in_dir(tc.want_cert));
  EXPECT_EQ(got->tls_key_file, in_dir(tc.want_key));
  EXPECT_EQ(got->token_file, in_dir(tc.want_token_file));
  EXPECT_EQ(got->tls_server_name, tc.want_server_name);
  EXPECT_TRUE(got->token.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LoadContextFileTest,
    ::testing::ValuesIn(std::vector<LoadCase>{
        {.name = "current_context_with_mutual_tls",
         .text = kTwoContexts,
         .want_target = "kqd.example.com:7070",
         .want_tls_ca = "/etc/kq/ca.crt",
         .want_cert = "<dir>/certs/manager.crt",
         .want_key = "<dir>/certs/manager.key",
         .want_server_name = "kqd.internal"},
        {.name = "named_context_with_token_file",
         .text = kTwoContexts,
         .context = "ci",
         .want_target = "10.0.0.7:7070",
         .want_tls_ca = "<dir>/ca.crt",
         .want_token_file = "/var/run/secrets/kq/token"},
        {.name = "only_context_without_current",
         .text = "contexts:\n- name: w1\n  server: 127.0.0.1:7071\n",
         .want_target = "127.0.0.1:7071"},
        {.name = "missing_file",
         .want_code = absl::StatusCode::kNotFound,
         .want_error = {"does not exist"}},
        {.name = "named_context_missing",
         .text = kTwoContexts,
         .context = "staging",
         .want_code = absl::StatusCode::kNotFound,
         .want_error = {"context \"staging\" not found",
                        "its contexts are prod, ci"}},
        {.name = "current_context_missing",
         .text = "current-context: gone\ncontexts:\n- name: w1\n  server: "
                 "a:1\n",
         .want_code = absl::StatusCode::kNotFound,
         .want_error = {"current-context \"gone\" names no context"}},
        {.name = "several_contexts_none_current",
         .text = "contexts:\n- name: a\n  server: a:1\n- name: b\n  "
                 "server: b:1\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_error = {"has no current-context and 2 contexts (a, b)"}},
        {.name = "no_contexts",
         .text = "apiVersion: kq/v1\nkind: Config\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_error = {"holds no contexts"}},
        {.name = "no_server",
         .text = "contexts:\n- name: w1\n  tls-ca: /ca.crt\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_error = {"context \"w1\": server: Required value"}},
        {.name = "cert_without_key",
         .text = "contexts:\n- name: w1\n  server: a:1\n  tls-ca: /ca\n  "
                 "cert: /c\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_error = {"context \"w1\": cert: needs key too"}},
        {.name = "cert_without_tls_ca",
         .text = "contexts:\n- name: w1\n  server: a:1\n  cert: /c\n  key: "
                 "/k\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_error = {"context \"w1\": cert: needs tls-ca"}},
        {.name = "unknown_field",
         .text = "contexts:\n- name: w1\n  server: a:1\n  token: s3cret\n",
         .want_code = absl::StatusCode::kInvalidArgument,
         .want_error = {"unknown field \"token\""}},
        {.name = "not_yaml",
         .text = "contexts: [\n",
         .want_code = absl::StatusCode::kInvalidArgument},
    }),
    [](const auto& info) { return info.param.name; });

TEST(ContextFileTest, FormatReadsBack) {
  absl::StatusOr<ContextFile> file = ParseContextFile(kTwoContexts, "x.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<ContextFile> again =
      ParseContextFile(FormatContextFile(*file), "x.yaml");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *file);
  EXPECT_EQ(file->Names(), "prod, ci");
}

}  // namespace
}  // namespace kq::client
