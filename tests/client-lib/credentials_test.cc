// The client's credential rules without a server: which targets are
// loopback, which option combinations are refused and with what message,
// credential files that cannot be used, and a token file that rotates.

#include "client-lib/src/credentials.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "kq/client/client.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace kq::client::internal {
namespace {

using ::kq::testing::IsOkAndHolds;
using ::kq::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

TEST(IsLoopbackTargetTest, LoopbackAddresses) {
  for (const char* target :
       {"127.0.0.1:7070", "127.1.2.3:1", "localhost:7070", "LOCALHOST:1",
        "localhost", "[::1]:7070", "::1", "dns:///localhost:7070",
        "dns:///127.0.0.1:7070", "dns://8.8.8.8/localhost:1", "dns:[::1]:1",
        "ipv4:127.0.0.1:1,127.0.0.2:2", "ipv6:[::1]:1", "unix:/run/kq.sock",
        "unix:///run/kq.sock", "unix-abstract:kq", "[::ffff:127.0.0.1]:1"}) {
    EXPECT_TRUE(IsLoopbackTarget(target)) << target;
  }
}

TEST(IsLoopbackTargetTest, OtherAddresses) {
  for (const char* target :
       {"10.0.0.1:7070", "kqd.example.com:7070", "kqd:7070", "[::2]:1",
        "128.0.0.1:1", "dns:///kqd:7070", "ipv4:127.0.0.1:1,10.0.0.1:1",
        "xds:///kqd", "localhost.example.com:1", "127.0.0.1.example.com:1",
        "ipv4:", ""}) {
    EXPECT_FALSE(IsLoopbackTarget(target)) << target;
  }
}

ClientOptions Options(const std::string& target) {
  ClientOptions options;
  options.target = target;
  return options;
}

TEST(ValidateCredentialOptionsTest, NoCredentialsAreFine) {
  EXPECT_OK(ValidateCredentialOptions(Options("kqd:7070")));
}

TEST(ValidateCredentialOptionsTest, TokenOverPlaintextOnlyToLoopback) {
  ClientOptions options = Options("127.0.0.1:7070");
  options.token = "s3cret";
  EXPECT_OK(ValidateCredentialOptions(options));
  options.target = "kqd.example.com:7070";
  EXPECT_THAT(ValidateCredentialOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("kqd.example.com:7070"),
                             HasSubstr("plaintext"), HasSubstr("--tls-ca"))));
  options.token.clear();
  options.token_file = "/var/run/token";
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--tls-ca")));
  options.tls_ca_file = "/etc/kq/ca.crt";
  EXPECT_OK(ValidateCredentialOptions(options));
}

TEST(ValidateCredentialOptionsTest, CertificateAndKeyGoTogetherWithTls) {
  ClientOptions options = Options("kqd:7070");
  options.tls_ca_file = "ca.crt";
  options.tls_cert_file = "alice.crt";
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs its key")));
  options.tls_cert_file.clear();
  options.tls_key_file = "alice.key";
  EXPECT_THAT(ValidateCredentialOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("needs its certificate")));
  options.tls_cert_file = "alice.crt";
  EXPECT_OK(ValidateCredentialOptions(options));
  options.tls_ca_file.clear();
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("only over TLS"), HasSubstr("--tls-ca"))));
}

TEST(ValidateCredentialOptionsTest, ServerNameNeedsTls) {
  ClientOptions options = Options("127.0.0.1:7070");
  options.tls_server_name = "kqd.test";
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs TLS")));
}

TEST(ValidateCredentialOptionsTest, TokenOrTokenFileNotBoth) {
  ClientOptions options = Options("127.0.0.1:7070");
  options.token = "a";
  options.token_file = "/t";
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not both")));
}

TEST(ValidateCredentialOptionsTest, TokenMustBeOneWord) {
  ClientOptions options = Options("127.0.0.1:7070");
  options.token = "two words";
  EXPECT_THAT(ValidateCredentialOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the bearer token has spaces")));
  options.token = "line\nbreak";
  EXPECT_THAT(ValidateCredentialOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ValidateCredentialOptionsTest, ImpersonatedGroupsNeedAUser) {
  ClientOptions options = Options("127.0.0.1:7070");
  options.impersonate_groups = {"team-a"};
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs a user")));
  options.impersonate_user = "alice";
  EXPECT_OK(ValidateCredentialOptions(options));
  options.impersonate_groups.push_back("");
  EXPECT_THAT(
      ValidateCredentialOptions(options),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is empty")));
}

TEST(ReadCredentialFileTest, NamesTheFileItCannotRead) {
  kq::testing::ScopedTempDir dir;
  EXPECT_THAT(ReadCredentialFile("TLS CA", dir.File("missing.crt")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("cannot read the TLS CA file \"" +
                                       dir.File("missing.crt") + "\""),
                             HasSubstr("No such file or directory"))));
  EXPECT_THAT(ReadCredentialFile("token", dir.path()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Is a directory")));
  WriteFile(dir.File("empty"), "\n");
  EXPECT_THAT(ReadCredentialFile("token", dir.File("empty")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the token file \"" + dir.File("empty") +
                                 "\" is empty")));
  WriteFile(dir.File("t"), "abc\n");
  EXPECT_THAT(ReadCredentialFile("token", dir.File("t")),
              IsOkAndHolds(std::string("abc\n")));
}

TEST(ReadCredentialFileTest, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files of mode 000";
  kq::testing::ScopedTempDir dir;
  WriteFile(dir.File("key"), "x");
  chmod(dir.File("key").c_str(), 0);
  EXPECT_THAT(ReadCredentialFile("client key", dir.File("key")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Permission denied")));
}

TEST(ReadTlsFilesTest, EachFileMustHoldItsPemBlock) {
  kq::testing::ScopedTempDir dir;
  const std::string cert =
      "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const std::string key =
      "-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n";
  WriteFile(dir.File("ca.crt"), cert);
  WriteFile(dir.File("c.crt"), cert);
  WriteFile(dir.File("c.key"), key);
  WriteFile(dir.File("junk"), "not pem\n");
  ClientOptions options = Options("kqd:1");
  options.tls_ca_file = dir.File("junk");
  EXPECT_THAT(ReadTlsFiles(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the TLS CA file \"" + dir.File("junk") +
                                 "\" holds no PEM certificate")));
  options.tls_ca_file = dir.File("ca.crt");
  options.tls_cert_file = dir.File("c.crt");
  options.tls_key_file = dir.File("c.crt");
  EXPECT_THAT(ReadTlsFiles(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the client key file \"" + dir.File("c.crt") +
                                 "\" holds no PEM private key")));
  options.tls_key_file = dir.File("nope.key");
  EXPECT_THAT(ReadTlsFiles(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot read the client key file")));
  options.tls_key_file = dir.File("c.key");
  absl::StatusOr<TlsFiles> files = ReadTlsFiles(options);
  ASSERT_OK(files.status());
  EXPECT_EQ(files->ca, cert);
  EXPECT_EQ(files->cert, cert);
  EXPECT_EQ(files->key, key);
}

TEST(TokenFileTest, ReadsTrimsAndPicksUpARotatedToken) {
  kq::testing::ScopedTempDir dir;
  const std::string path = dir.File("token");
  TokenFile file(path, /*refresh=*/absl::ZeroDuration());
  EXPECT_THAT(file.Get(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("cannot read the token file")));
  WriteFile(path, "  first-token\n");
  EXPECT_THAT(file.Get(), IsOkAndHolds(std::string("first-token")));
  WriteFile(path, "second-token");
  EXPECT_THAT(file.Get(), IsOkAndHolds(std::string("second-token")));
  // Mid-rotation (empty, or gone): the token read before stays in use.
  WriteFile(path, "");
  EXPECT_THAT(file.Get(), IsOkAndHolds(std::string("second-token")));
  std::remove(path.c_str());
  EXPECT_THAT(file.Get(), IsOkAndHolds(std::string("second-token")));
}

TEST(TokenFileTest, KeepsTheTokenUntilTheRefresh) {
  kq::testing::ScopedTempDir dir;
  const std::string path = dir.File("token");
  WriteFile(path, "first");
  TokenFile file(path, absl::Hours(1));
  EXPECT_THAT(file.Get(), IsOkAndHolds(std::string("first")));
  WriteFile(path, "second");
  EXPECT_THAT(file.Get(), IsOkAndHolds(std::string("first")));
}

TEST(TokenFileTest, RefusesATokenWithSpaces) {
  kq::testing::ScopedTempDir dir;
  WriteFile(dir.File("token"), "two words\n");
  TokenFile file(dir.File("token"));
  EXPECT_THAT(file.Get(), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("has spaces")));
}

}  // namespace
}  // namespace kq::client::internal
