#include "server/auth/tls.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

#include "server/auth/x509.h"
#include "tests/server/auth/test_certs.h"

namespace kq::auth {
namespace {

class TlsTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "/tls_test_" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    certs_ = std::make_unique<TestCerts>(dir_ + "/pki");
    // The files kqd watches live in a directory swapped by rename, as an
    // operator (or Kubernetes' Secret volume) rotates them.
    Install(certs_->Server("server-1"), certs_->ca_file());
  }

  void Install(const TestCert& cert, const std::string& ca) {
    const std::string next = dir_ + "/next";
    std::filesystem::create_directories(next);
    std::filesystem::copy_file(
        cert.cert_file, next + "/tls.crt",
        std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(
        cert.key_file, next + "/tls.key",
        std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(
        ca, next + "/ca.crt",
        std::filesystem::copy_options::overwrite_existing);
    std::filesystem::remove_all(dir_ + "/current");
    std::filesystem::rename(next, dir_ + "/current");
  }

  TlsOptions Options() const {
    return {.cert_file = dir_ + "/current/tls.crt",
            .key_file = dir_ + "/current/tls.key",
            .client_ca_file = dir_ + "/current/ca.crt",
            .reload_interval = absl::Hours(1),
            .staging_dir = dir_ + "/staged"};
  }

  std::string dir_;
  std::unique_ptr<TestCerts> certs_;
};

TEST_F(TlsTest, LoadsAndReportsTheServingCertificate) {
  absl::StatusOr<std::unique_ptr<TlsFiles>> tls =
      TlsFiles::Open(Options(), nullptr);
  ASSERT_TRUE(tls.ok()) << tls.status();
  CertificateInfo info = (*tls)->server_certificate();
  EXPECT_EQ(info.common_name, "localhost");
  EXPECT_GT(info.not_after, absl::Now());
  EXPECT_LT(info.not_after, absl::Now() + absl::Hours(25));
  EXPECT_FALSE(info.serial.empty());
}

TEST_F(TlsTest, RotatedFilesAreReadAndBadOnesKeepTheOld) {
  absl::StatusOr<std::unique_ptr<TlsFiles>> tls =
      TlsFiles::Open(Options(), nullptr);
  ASSERT_TRUE(tls.ok()) << tls.status();
  const std::string first = (*tls)->server_certificate().serial;
  const TestCert second_cert = certs_->Server("server-2");
  Install(second_cert, certs_->ca_file());
  (*tls)->PollNow();
  const std::string second = (*tls)->server_certificate().serial;
  EXPECT_NE(second, first);
  // gRPC's provider reads the staged copy of the last files that loaded.
  EXPECT_EQ(ReadAll(dir_ + "/staged/current/tls.crt"), second_cert.cert_pem);
  EXPECT_EQ(ReadAll(dir_ + "/staged/current/tls.key"), second_cert.key_pem);
  // A half-written rotation (a key that does not match) is not taken, and
  // never reaches gRPC.
  std::filesystem::copy_file(certs_->Server("server-3").key_file,
                             dir_ + "/current/tls.key",
                             std::filesystem::copy_options::overwrite_existing);
  (*tls)->PollNow();
  EXPECT_EQ((*tls)->server_certificate().serial, second);
  EXPECT_EQ(ReadAll(dir_ + "/staged/current/tls.key"), second_cert.key_pem);
}

TEST_F(TlsTest, BadFilesAreRefusedNamingTheFlag) {
  TlsOptions options = Options();
  options.key_file = certs_->Server("other").key_file;
  absl::StatusOr<std::unique_ptr<TlsFiles>> tls =
      TlsFiles::Open(options, nullptr);
  ASSERT_FALSE(tls.ok());
  EXPECT_NE(tls.status().message().find("--tls-key"), std::string::npos);
  EXPECT_NE(tls.status().message().find("does not match the certificate"),
            std::string::npos);

  options = Options();
  options.cert_file = dir_ + "/missing.crt";
  EXPECT_EQ(TlsFiles::Open(options, nullptr).status().message(),
            "--tls-cert: cannot read " + dir_ + "/missing.crt");

  options = Options();
  std::ofstream(dir_ + "/garbage.pem") << "not a certificate";
  options.client_ca_file = dir_ + "/garbage.pem";
  EXPECT_EQ(TlsFiles::Open(options, nullptr).status().message(),
            "--client-ca " + dir_ + "/garbage.pem: no PEM certificate");

  options = Options();
  options.key_file.clear();
  EXPECT_EQ(TlsFiles::Open(options, nullptr).status().message(),
            "--tls-cert and --tls-key: give both or neither");
}

TEST_F(TlsTest, ClientCertificateIdentity) {
  TestCert carol = certs_->Client("carol", {"team-a@example.com", "ml"});
  absl::StatusOr<CertificateInfo> info = ParseCertificate(carol.cert_pem);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->common_name, "carol");
  EXPECT_EQ(info->organizations,
            (std::vector<std::string>{"team-a@example.com", "ml"}));
  EXPECT_FALSE(ParseCertificate("garbage").ok());
  absl::StatusOr<CertificateInfo> expired =
      ParseCertificate(certs_->ExpiredClient("old").cert_pem);
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(expired->not_after,
            absl::FromCivil(absl::CivilSecond(2020, 1, 2, 0, 0, 0),
                            absl::UTCTimeZone()));
}

}  // namespace
}  // namespace kq::auth
