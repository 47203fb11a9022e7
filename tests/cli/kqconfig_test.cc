// The kq config file (cli/kqconfig.h): parsing and its errors, the YAML it
// writes and reads back, the atomic 0600 write, and the precedence of
// flags, $KQ_SERVER / $KQ_TOKEN, the context and the defaults.

#include "cli/kqconfig.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "kq/client/client.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::cli {
namespace {

using ::kq::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kPath[] = "/home/u/.kq/config";

const KqConfig& TwoContexts() {
  static const KqConfig* config = new KqConfig{
      .current_context = "prod",
      .contexts = {{.name = "prod",
                    .server = "kqd.example.com:7070",
                    .tls_ca = "/etc/kq/ca.crt",
                    .cert = "/home/u/.kq/alice.crt",
                    .key = "/home/u/.kq/alice.key"},
                   {.name = "ci",
                    .server = "10.0.0.5:7070",
                    .tls_ca = "/etc/kq/ca.crt",
                    .token_file = "/var/run/secrets/kq/token",
                    .tls_server_name = "kqd.example.com"}},
  };
  return *config;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ParseKqConfigTest, ReadsContextsAndTheCurrentOne) {
  absl::StatusOr<KqConfig> config = ParseKqConfig(R"yaml(
apiVersion: kq/v1
kind: Config
current-context: prod
contexts:
- name: prod
  server: kqd.example.com:7070
  tls-ca: /etc/kq/ca.crt
  cert: /home/u/.kq/alice.crt
  key: /home/u/.kq/alice.key
- name: ci
  server: "10.0.0.5:7070"
  tls-ca: /etc/kq/ca.crt
  token-file: /var/run/secrets/kq/token
  tls-server-name: kqd.example.com
)yaml",
                                                  kPath);
  ASSERT_OK(config.status());
  EXPECT_EQ(*config, TwoContexts());
}

TEST(ParseKqConfigTest, EmptyTextIsAnEmptyConfig) {
  for (const char* text : {"", "\n", "# nothing yet\n"}) {
    absl::StatusOr<KqConfig> config = ParseKqConfig(text, kPath);
    ASSERT_OK(config.status()) << text;
    EXPECT_EQ(*config, KqConfig()) << text;
  }
  absl::StatusOr<KqConfig> config =
      ParseKqConfig("contexts: []\ncurrent-context:\n", kPath);
  ASSERT_OK(config.status());
  EXPECT_EQ(*config, KqConfig());
}

TEST(ParseKqConfigTest, ErrorsNameTheFileAndTheField) {
  struct Case {
    std::string text;
    std::string want;
  } cases[] = {
      {"contexts: [", "/home/u/.kq/config: yaml: line"},
      {"- a\n- b\n", "must be a mapping"},
      {"clusters: []\n",
       "unknown field \"clusters\" (known: apiVersion, kind, "
       "current-context, contexts)"},
      {"apiVersion: v1\n", "apiVersion is \"v1\", want \"kq/v1\""},
      {"kind: Kubeconfig\n", "kind is \"Kubeconfig\", want \"Config\""},
      {"contexts: {a: 1}\n", "\"contexts\" must be a list"},
      {"contexts: [x]\n", "contexts[0] must be a mapping with a name"},
      {"contexts:\n- server: a:1\n", "contexts[0] has no name"},
      {"contexts:\n- name: a\n  tls_ca: /x\n",
       "context \"a\": unknown field \"tls_ca\" (known: name, server, tls-ca, "
       "cert, key, token-file, tls-server-name)"},
      {"contexts:\n- name: a\n  token: s3cret\n",
       "context \"a\": unknown field \"token\""},
      {"contexts:\n- name: a\n  server: 7070\n",
       "context \"a\": \"server\" must be a string, got 7070"},
      {"contexts:\n- name: a\n- name: a\n", "two contexts are named \"a\""},
      {"current-context: [a]\n", "\"current-context\" must be a string"},
      {"a: 1\n---\nb: 2\n", "more than one YAML document"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(ParseKqConfig(c.text, kPath),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr(kPath), HasSubstr(c.want))));
  }
}

TEST(FormatKqConfigTest, WritesWhatParsesBack) {
  const std::string text = FormatKqConfig(TwoContexts());
  EXPECT_EQ(text,
            "apiVersion: kq/v1\n"
            "kind: Config\n"
            "current-context: prod\n"
            "contexts:\n"
            "- name: prod\n"
            "  server: kqd.example.com:7070\n"
            "  tls-ca: /etc/kq/ca.crt\n"
            "  cert: /home/u/.kq/alice.crt\n"
            "  key: /home/u/.kq/alice.key\n"
            "- name: ci\n"
            "  server: \"10.0.0.5:7070\"\n"
            "  tls-ca: /etc/kq/ca.crt\n"
            "  token-file: /var/run/secrets/kq/token\n"
            "  tls-server-name: kqd.example.com\n");
  absl::StatusOr<KqConfig> back = ParseKqConfig(text, kPath);
  ASSERT_OK(back.status());
  EXPECT_EQ(*back, TwoContexts());
}

TEST(FormatKqConfigTest, QuotesWhatYamlWouldReadOtherwise) {
  const KqConfig config{
      .current_context = "",
      .contexts = {{.name = "yes", .server = "[::1]:7070"},
                   {.name = "a: b", .tls_ca = "/path with #hash/ca.crt"}}};
  const std::string text = FormatKqConfig(config);
  EXPECT_THAT(text, HasSubstr("current-context: \"\"\n"));
  EXPECT_THAT(text, HasSubstr("- name: \"yes\"\n"));
  absl::StatusOr<KqConfig> back = ParseKqConfig(text, kPath);
  ASSERT_OK(back.status());
  EXPECT_EQ(*back, config);
  EXPECT_EQ(FormatKqConfig(KqConfig()),
            "apiVersion: kq/v1\nkind: Config\ncurrent-context: \"\"\n"
            "contexts: []\n");
}

TEST(SaveKqConfigTest, WritesAtomicallyWithMode0600) {
  kq::testing::ScopedTempDir dir;
  const std::string path = dir.File("home/.kq/config");
  ASSERT_OK(SaveKqConfig(path, TwoContexts()));
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(dir.File("home/.kq").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(ReadFile(path), FormatKqConfig(TwoContexts()));
  absl::StatusOr<KqConfig> loaded = LoadKqConfig(path);
  ASSERT_OK(loaded.status());
  EXPECT_EQ(*loaded, TwoContexts());

  // A file made readable by others is replaced by a private one, and no
  // temporary file is left behind.
  chmod(path.c_str(), 0644);
  ASSERT_OK(SaveKqConfig(path, KqConfig()));
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(dir.File("home/.kq"))) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("config"));
}

TEST(SaveKqConfigTest, FailureLeavesTheFileAsItWas) {
  kq::testing::ScopedTempDir dir;
  // The directory's place is taken by a file: nothing can be written.
  std::ofstream(dir.File("blocker")) << "x";
  EXPECT_THAT(SaveKqConfig(dir.File("blocker/config"), TwoContexts()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(dir.File("blocker"))));
  EXPECT_EQ(ReadFile(dir.File("blocker")), "x");
}

TEST(LoadKqConfigTest, MissingFileIsEmptyOthersAreErrors) {
  kq::testing::ScopedTempDir dir;
  absl::StatusOr<KqConfig> config = LoadKqConfig(dir.File("none"));
  ASSERT_OK(config.status());
  EXPECT_EQ(*config, KqConfig());
  EXPECT_THAT(LoadKqConfig(dir.path()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("cannot read the kq config file"),
                             HasSubstr(dir.path()))));
  std::ofstream(dir.File("bad")) << "contexts: 3\n";
  EXPECT_THAT(LoadKqConfig(dir.File("bad")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(dir.File("bad") + ": \"contexts\"")));
}

TEST(KqConfigPathTest, KqconfigThenHome) {
  EXPECT_EQ(KqConfigPath("/etc/kq/config", "/home/u"), "/etc/kq/config");
  EXPECT_EQ(KqConfigPath("", "/home/u"), "/home/u/.kq/config");
  EXPECT_EQ(KqConfigPath(nullptr, "/home/u"), "/home/u/.kq/config");
  EXPECT_EQ(KqConfigPath(nullptr, nullptr), "");
}

// ---------------------------------------------------------------------------
// ResolveConnection: the precedence.

Connection Resolve(const ConnectionFlags& flags,
                   const ConnectionEnvironment& environment = {},
                   const KqConfig& config = TwoContexts()) {
  absl::StatusOr<Connection> connection =
      ResolveConnection(flags, environment, config, kPath);
  EXPECT_OK(connection.status());
  return connection.ok() ? *connection : Connection();
}

TEST(ResolveConnectionTest, NothingAnywhereIsTheDefault) {
  const Connection c = Resolve({}, {}, KqConfig());
  EXPECT_EQ(c.options.target, "127.0.0.1:7070");
  EXPECT_EQ(c.origin, ServerOrigin::kDefault);
  EXPECT_EQ(c.context, "");
  EXPECT_EQ(c.options.tls_ca_file, "");
  EXPECT_EQ(c.options.token, "");
  EXPECT_EQ(c.options.token_file, "");
  // The rest is ClientOptions' defaults.
  EXPECT_EQ(c.options.deadline, client::ClientOptions().deadline);
}

TEST(ResolveConnectionTest, TheCurrentContextGivesEverything) {
  const Connection c = Resolve({});
  EXPECT_EQ(c.context, "prod");
  EXPECT_EQ(c.origin, ServerOrigin::kContext);
  EXPECT_EQ(c.options.target, "kqd.example.com:7070");
  EXPECT_EQ(c.options.tls_ca_file, "/etc/kq/ca.crt");
  EXPECT_EQ(c.options.tls_cert_file, "/home/u/.kq/alice.crt");
  EXPECT_EQ(c.options.tls_key_file, "/home/u/.kq/alice.key");
  EXPECT_EQ(c.options.token_file, "");
}

TEST(ResolveConnectionTest, KqServerBeatsTheCurrentContextsServerOnly) {
  const Connection c = Resolve({}, {.server = "from-env:1"});
  EXPECT_EQ(c.options.target, "from-env:1");
  EXPECT_EQ(c.origin, ServerOrigin::kEnvironment);
  // The credentials still come from the context.
  EXPECT_EQ(c.context, "prod");
  EXPECT_EQ(c.options.tls_ca_file, "/etc/kq/ca.crt");
  EXPECT_EQ(c.options.tls_cert_file, "/home/u/.kq/alice.crt");
}

TEST(ResolveConnectionTest, ServerFlagBeatsEverything) {
  const Connection c =
      Resolve({.server = "flag:1", .context = "ci"}, {.server = "from-env:1"});
  EXPECT_EQ(c.options.target, "flag:1");
  EXPECT_EQ(c.origin, ServerOrigin::kFlag);
  EXPECT_EQ(c.context, "ci");
  EXPECT_EQ(c.options.token_file, "/var/run/secrets/kq/token");
}

TEST(ResolveConnectionTest, ContextFlagPicksAContextAndBeatsKqServer) {
  const Connection c = Resolve({.context = "ci"}, {.server = "from-env:1"});
  EXPECT_EQ(c.context, "ci");
  EXPECT_EQ(c.options.target, "10.0.0.5:7070");
  EXPECT_EQ(c.origin, ServerOrigin::kContext);
  EXPECT_EQ(c.options.tls_server_name, "kqd.example.com");
  EXPECT_EQ(c.options.token_file, "/var/run/secrets/kq/token");
  EXPECT_EQ(c.options.tls_cert_file, "");
}

TEST(ResolveConnectionTest, EmptyContextFlagUsesNoContext) {
  const Connection c = Resolve({.context = ""});
  EXPECT_EQ(c.context, "");
  EXPECT_EQ(c.options.target, "127.0.0.1:7070");
  EXPECT_EQ(c.options.tls_ca_file, "");
}

TEST(ResolveConnectionTest, CredentialFlagsBeatTheContextOneByOne) {
  const Connection c =
      Resolve({.tls_ca = "/flag/ca.crt", .cert = "/flag/bob.crt"});
  EXPECT_EQ(c.options.tls_ca_file, "/flag/ca.crt");
  EXPECT_EQ(c.options.tls_cert_file, "/flag/bob.crt");
  EXPECT_EQ(c.options.tls_key_file, "/home/u/.kq/alice.key");
  // An empty value clears what the context sets: plaintext.
  const Connection plain = Resolve({.tls_ca = "", .cert = "", .key = ""});
  EXPECT_EQ(plain.options.tls_ca_file, "");
  EXPECT_EQ(plain.options.tls_cert_file, "");
  EXPECT_EQ(plain.options.tls_key_file, "");
  EXPECT_EQ(plain.options.target, "kqd.example.com:7070");
  EXPECT_EQ(Resolve({.tls_server_name = "n"}).options.tls_server_name, "n");
}

TEST(ResolveConnectionTest, TokenPrecedence) {
  const ConnectionFlags in_ci = {.context = "ci"};
  // The context's token file, unless something else gives a token.
  Connection c = Resolve(in_ci);
  EXPECT_EQ(c.options.token_file, "/var/run/secrets/kq/token");
  EXPECT_EQ(c.options.token, "");
  c = Resolve(in_ci, {.token = "env-token"});
  EXPECT_EQ(c.options.token, "env-token");
  EXPECT_EQ(c.options.token_file, "");
  ConnectionFlags flags = in_ci;
  flags.token_file = "/flag/token";
  c = Resolve(flags, {.token = "env-token"});
  EXPECT_EQ(c.options.token_file, "/flag/token");
  EXPECT_EQ(c.options.token, "");
  flags.token = "flag-token";
  c = Resolve(flags, {.token = "env-token"});
  EXPECT_EQ(c.options.token, "flag-token");
  EXPECT_EQ(c.options.token_file, "");
}

TEST(ResolveConnectionTest, UnknownContextNamesTheKnownOnes) {
  EXPECT_THAT(
      ResolveConnection({.context = "staging"}, {}, TwoContexts(), kPath),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "context \"staging\" not found: the contexts in "
               "/home/u/.kq/config are prod, ci"));
  EXPECT_THAT(ResolveConnection({.context = "staging"}, {}, KqConfig(), kPath),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("there are no contexts in "
                                 "/home/u/.kq/config (make one with kq "
                                 "config set-context)")));
  KqConfig dangling = TwoContexts();
  dangling.current_context = "gone";
  EXPECT_THAT(ResolveConnection({}, {}, dangling, kPath),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("the current context \"gone\" of "
                                       "/home/u/.kq/config does not exist"),
                             HasSubstr("prod, ci"), HasSubstr("use-context"))));
  // --context picks another one, so the dangling one does not matter.
  EXPECT_OK(ResolveConnection({.context = "ci"}, {}, dangling, kPath).status());
}

}  // namespace
}  // namespace kq::cli
