// `kq config` (cli/commands/config.h) through RunCli, on a kq config file in
// a temporary directory, and what the contexts do to the commands that
// talk to kqd: the options handed to Environment::connect, for `kq get` as
// for `kq run`, and the errors for credentials that cannot be used.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/app.h"
#include "cli/command.h"
#include "cli/kqconfig.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "kq/client/client.h"
#include "tests/cli/kqd_fixture.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

class ConfigCommandTest : public testing::KqdFixture {
 protected:
  ConfigCommandTest() {
    env_.connect =
        [this](const client::ClientOptions& options) -> client::Client& {
      connected_.push_back(options);
      return client();
    };
    env_.config_path = dir_.File("dot-kq/config");
    env_.in = &in_;
    env_.out = &out_;
    env_.err = &err_;
    env_.now = now_;
  }

  // `kq ARGS...`, with out_ and err_ emptied first.
  int Run(std::vector<std::string> args) {
    Clear();
    args.insert(args.begin(), "kq");
    return RunCli(args, env_);
  }

  KqConfig Stored() {
    absl::StatusOr<KqConfig> config = LoadKqConfig(env_.config_path);
    EXPECT_OK(config.status());
    return config.ok() ? *config : KqConfig();
  }

  kq::testing::ScopedTempDir dir_{"kqconfig"};
  std::vector<client::ClientOptions> connected_;
  std::istringstream in_;
  Environment env_;
};

TEST_F(ConfigCommandTest, SetContextCreatesThenUpdates) {
  EXPECT_EQ(Run({"config", "set-context", "prod", "--server=kqd.example:7070",
                 "--tls-ca=/etc/kq/ca.crt", "--cert", "/etc/kq/alice.crt",
                 "--key=/etc/kq/alice.key"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "Context \"prod\" created.\n");
  // The files are not there: a warning each, not an error.
  EXPECT_THAT(err_.str(),
              HasSubstr("Warning: the tls-ca file /etc/kq/ca.crt does not "
                        "exist\n"));
  EXPECT_EQ(Stored().contexts,
            (std::vector<KqContext>{{.name = "prod",
                                     .server = "kqd.example:7070",
                                     .tls_ca = "/etc/kq/ca.crt",
                                     .cert = "/etc/kq/alice.crt",
                                     .key = "/etc/kq/alice.key"}}));
  // Only what is given changes; an empty value removes a field.
  EXPECT_EQ(Run({"config", "set-context", "prod",
                 "--cert=", "--key=", "--token-file=/var/run/kq/token"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "Context \"prod\" modified.\n");
  EXPECT_EQ(Stored().contexts,
            (std::vector<KqContext>{{.name = "prod",
                                     .server = "kqd.example:7070",
                                     .tls_ca = "/etc/kq/ca.crt",
                                     .token_file = "/var/run/kq/token"}}));
  // Creating a context does not make it the current one.
  EXPECT_EQ(Stored().current_context, "");
  EXPECT_THAT(connected_, IsEmpty());
}

TEST_F(ConfigCommandTest, RelativePathsAreStoredAbsolute) {
  const std::string cwd = std::filesystem::current_path().string();
  ASSERT_EQ(chdir(dir_.path().c_str()), 0);
  std::ofstream("ca.crt") << "x";
  const int code = Run({"config", "set-context", "dev", "--tls-ca=ca.crt",
                        "--token-file", "./secrets/../token"});
  ASSERT_EQ(chdir(cwd.c_str()), 0);
  EXPECT_EQ(code, kExitOk) << err_.str();
  const KqConfig stored = Stored();
  ASSERT_THAT(stored.contexts, SizeIs(1));
  EXPECT_EQ(stored.contexts[0].tls_ca, dir_.File("ca.crt"));
  EXPECT_EQ(stored.contexts[0].token_file, dir_.File("token"));
  // ca.crt exists; the token does not.
  EXPECT_EQ(err_.str(), absl::StrCat("Warning: the token-file file ",
                                     dir_.File("token"), " does not exist\n"));
}

TEST_F(ConfigCommandTest, UseCurrentGetAndDelete) {
  ASSERT_EQ(Run({"config", "set-context", "dev", "--server=127.0.0.1:7070"}),
            kExitOk);
  ASSERT_EQ(Run({"config", "set-context", "prod", "--server=kqd.example:7070",
                 "--tls-ca=/ca.crt", "--cert=/a.crt", "--key=/a.key"}),
            kExitOk);
  EXPECT_EQ(Run({"config", "current-context"}), kExitError);
  EXPECT_EQ(err_.str(), absl::StrCat("error: current-context is not set in ",
                                     env_.config_path, "\n"));
  EXPECT_EQ(Run({"config", "use-context", "prod"}), kExitOk);
  EXPECT_EQ(out_.str(), "Switched to context \"prod\".\n");
  EXPECT_EQ(Run({"config", "current-context"}), kExitOk);
  EXPECT_EQ(out_.str(), "prod\n");
  EXPECT_EQ(Run({"config", "get-contexts"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "CURRENT   NAME   SERVER             TLS   AUTH\n"
            "          dev    127.0.0.1:7070     no\n"
            "*         prod   kqd.example:7070   yes   cert\n");
  EXPECT_EQ(Run({"config", "get-contexts", "dev"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "CURRENT   NAME   SERVER           TLS   AUTH\n"
            "          dev    127.0.0.1:7070   no\n");
  EXPECT_EQ(Run({"config", "get-contexts", "-o", "name"}), kExitOk);
  EXPECT_EQ(out_.str(), "dev\nprod\n");
  EXPECT_EQ(Run({"config", "delete-context", "dev"}), kExitOk);
  EXPECT_EQ(out_.str(),
            absl::StrCat("deleted context dev from ", env_.config_path, "\n"));
  EXPECT_EQ(err_.str(), "");
  EXPECT_EQ(Run({"config", "delete-context", "prod"}), kExitOk);
  EXPECT_THAT(err_.str(), HasSubstr("this removed your active context"));
  EXPECT_EQ(Stored(), KqConfig());
  EXPECT_THAT(connected_, IsEmpty());
}

TEST_F(ConfigCommandTest, UnknownContextNamesTheKnownOnes) {
  ASSERT_EQ(Run({"config", "set-context", "a"}), kExitOk);
  ASSERT_EQ(Run({"config", "set-context", "b"}), kExitOk);
  const std::string known =
      absl::StrCat(" (the contexts in ", env_.config_path, " are a, b)\n");
  for (const char* verb : {"use-context", "delete-context", "get-contexts"}) {
    SCOPED_TRACE(verb);
    EXPECT_EQ(Run({"config", verb, "c"}), kExitError);
    EXPECT_EQ(
        err_.str(),
        absl::StrCat("error: no context exists with the name: \"c\"", known));
  }
  EXPECT_EQ(Run({"--context", "c", "get", "cq"}), kExitError);
  EXPECT_EQ(err_.str(),
            absl::StrCat("error: context \"c\" not found: the contexts in ",
                         env_.config_path, " are a, b\n"));
  EXPECT_THAT(connected_, IsEmpty());
}

TEST_F(ConfigCommandTest, UsageErrors) {
  EXPECT_EQ(Run({"config"}), kExitUsage);
  EXPECT_EQ(Run({"config", "set-context"}), kExitUsage);
  EXPECT_EQ(Run({"config", "set-context", "two words"}), kExitUsage);
  EXPECT_EQ(Run({"config", "get-contexts", "-o", "yaml"}), kExitUsage);
  // A context keeps the path of a token file, never a token.
  EXPECT_EQ(Run({"config", "set-context", "x", "--token", "s3cret"}),
            kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--token-file"));
  EXPECT_FALSE(std::filesystem::exists(env_.config_path));
}

TEST_F(ConfigCommandTest, UnknownVerbSuggestsTheNearestOne) {
  EXPECT_EQ(Run({"config", "use-contxt", "a"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: unknown command \"use-contxt\" for \"kq config\"\n"
            "\nDid you mean this?\n\tuse-context\n\n"
            "Run 'kq config --help' for usage.\n");
  EXPECT_EQ(Run({"config", "get"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("\tget-contexts\n"));
}

TEST_F(ConfigCommandTest, NoConfigPathIsAnError) {
  env_.config_path.clear();
  EXPECT_EQ(Run({"config", "get-contexts"}), kExitError);
  EXPECT_THAT(err_.str(), HasSubstr("set KQCONFIG"));
  // Commands that talk to kqd do without contexts.
  EXPECT_EQ(Run({"get", "cq"}), kExitOk) << err_.str();
  ASSERT_THAT(connected_, SizeIs(1));
  EXPECT_EQ(connected_[0].target, "127.0.0.1:7070");
}

TEST_F(ConfigCommandTest, BrokenConfigFileStopsCommandsWithItsName) {
  std::filesystem::create_directories(dir_.File("dot-kq"));
  std::ofstream(env_.config_path) << "contexts:\n- name: a\n  sever: x\n";
  EXPECT_EQ(Run({"get", "cq"}), kExitError);
  EXPECT_EQ(err_.str(), absl::StrCat("error: ", env_.config_path,
                                     ": context \"a\": unknown field "
                                     "\"sever\" (known: name, server, tls-ca, "
                                     "cert, key, token-file, "
                                     "tls-server-name)\n"));
  EXPECT_THAT(connected_, IsEmpty());
}

TEST_F(ConfigCommandTest, CommandsUseTheCurrentContext) {
  ASSERT_EQ(Run({"config", "set-context", "team", "--server=kqd.example:7070",
                 "--tls-ca=/ca.crt", "--cert=/alice.crt", "--key=/alice.key"}),
            kExitOk);
  ASSERT_EQ(Run({"config", "set-context", "ci", "--server=ci.example:7070",
                 "--tls-ca=/ca.crt", "--token-file=/token"}),
            kExitOk);
  ASSERT_EQ(Run({"config", "use-context", "team"}), kExitOk);
  // kq get, and kq run: the same connection.
  EXPECT_EQ(Run({"get", "cq"}), kExitOk) << err_.str();
  ApplySeedQueues();
  EXPECT_EQ(Run({"run", "-n", "team-ml", "--queue", "ml-jobs", "--request",
                 "cpu=1", "--", "true"}),
            kExitOk)
      << err_.str();
  ASSERT_THAT(connected_, SizeIs(2));
  for (const client::ClientOptions& options : connected_) {
    EXPECT_EQ(options.target, "kqd.example:7070");
    EXPECT_EQ(options.tls_ca_file, "/ca.crt");
    EXPECT_EQ(options.tls_cert_file, "/alice.crt");
    EXPECT_EQ(options.tls_key_file, "/alice.key");
    EXPECT_EQ(options.token_file, "");
  }
  connected_.clear();
  // $KQ_SERVER replaces the current context's server, and only that.
  env_.env_server = "127.0.0.1:7999";
  EXPECT_EQ(Run({"get", "cq"}), kExitOk);
  // --context picks another context, whose server beats $KQ_SERVER.
  EXPECT_EQ(Run({"get", "cq", "--context=ci"}), kExitOk);
  // Flags beat both.
  EXPECT_EQ(Run({"--context=ci", "--server=flag:1", "--token=t", "get", "cq"}),
            kExitOk);
  env_.env_token = "env-token";
  EXPECT_EQ(Run({"--context=ci", "get", "cq"}), kExitOk);
  ASSERT_THAT(connected_, SizeIs(4));
  EXPECT_EQ(connected_[0].target, "127.0.0.1:7999");
  EXPECT_EQ(connected_[0].tls_cert_file, "/alice.crt");
  EXPECT_EQ(connected_[1].target, "ci.example:7070");
  EXPECT_EQ(connected_[1].token_file, "/token");
  EXPECT_EQ(connected_[1].tls_cert_file, "");
  EXPECT_EQ(connected_[2].target, "flag:1");
  EXPECT_EQ(connected_[2].token, "t");
  EXPECT_EQ(connected_[2].token_file, "");
  EXPECT_EQ(connected_[3].token, "env-token");
  EXPECT_EQ(connected_[3].token_file, "");
}

// With main.cc's gRPC client: credentials that cannot be used are reported
// as what they are, not as an unreachable server, and nothing is sent.
TEST_F(ConfigCommandTest, UnusableCredentialsAreNamed) {
  std::unique_ptr<client::Client> real;
  env_.connect =
      [&real](const client::ClientOptions& options) -> client::Client& {
    real = client::NewGrpcClient(options);
    return *real;
  };
  ASSERT_EQ(Run({"config", "set-context", "team",
                 absl::StrCat("--server=", kqd_->target()),
                 absl::StrCat("--tls-ca=", dir_.File("missing-ca.crt"))}),
            kExitOk);
  ASSERT_EQ(Run({"config", "use-context", "team"}), kExitOk);
  EXPECT_EQ(Run({"get", "cq"}), kExitError);
  EXPECT_EQ(err_.str(),
            absl::StrCat("kq: INVALID_ARGUMENT: cannot read the TLS CA file \"",
                         dir_.File("missing-ca.crt"),
                         "\": No such file or directory\n"));
  EXPECT_EQ(Run({"--context=", "--server=kqd.example.com:7070", "--token=t",
                 "get", "cq"}),
            kExitError);
  EXPECT_THAT(err_.str(),
              StartsWith("kq: INVALID_ARGUMENT: refusing to send a bearer "
                         "token in plaintext to kqd.example.com:7070"));
  EXPECT_THAT(err_.str(), HasSubstr("--tls-ca"));
  // A token to the test's kqd (loopback) over plaintext is fine.
  EXPECT_EQ(Run({"--context=", absl::StrCat("--server=", kqd_->target()),
                 "--token=t", "get", "cq"}),
            kExitOk)
      << err_.str();
}

TEST_F(ConfigCommandTest, UnreachableContextServerNamesTheContext) {
  std::unique_ptr<client::Client> real;
  env_.connect =
      [&real](const client::ClientOptions& options) -> client::Client& {
    real = client::NewGrpcClient(options);
    return *real;
  };
  const std::string target = kqd_->target();
  kqd_->Stop();
  ASSERT_EQ(
      Run({"config", "set-context", "gone", absl::StrCat("--server=", target)}),
      kExitOk);
  ASSERT_EQ(Run({"config", "use-context", "gone"}), kExitOk);
  EXPECT_EQ(Run({"get", "cq"}), kExitError);
  EXPECT_THAT(err_.str(),
              HasSubstr("this address came from context \"gone\" (kq config "
                        "get-contexts))\n"));
}

}  // namespace
}  // namespace kq::cli
