// Client certificate authentication (PEM data and files) against an HTTPS
// server that requires one; the API server fixture authenticates by token
// only. Certificates come from the openssl command, as the fixture's do.

#include <httplib.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "shim/kube/client.h"
#include "tests/testing/status_matchers.h"

namespace kq::shim::kube {
namespace {

using ::kq::testing::IsOkAndHolds;
using ::kq::testing::StatusIs;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ClientCertificateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kq-tls-XXXXXX").string();
    dir_ = new std::string(mkdtemp(pattern.data()));
    const std::string d = *dir_;
    std::ofstream(d + "/server.ext") << "basicConstraints=CA:FALSE\n"
                                        "extendedKeyUsage=serverAuth\n"
                                        "subjectAltName=IP:127.0.0.1\n";
    std::ofstream(d + "/client.ext") << "basicConstraints=CA:FALSE\n"
                                        "extendedKeyUsage=clientAuth\n";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";
    const std::string script = absl::StrCat(
        "set -e; cd ", d, "; exec 2>openssl.log; ", "openssl req -x509 ", ec,
        " -nodes -keyout ca.key -out ca.crt -days 1 -subj /CN=kq-test-ca "
        "-addext basicConstraints=critical,CA:TRUE "
        "-addext keyUsage=critical,keyCertSign,cRLSign; ",
        "openssl req ", ec,
        " -nodes -keyout server.key -out server.csr -subj /CN=server; ",
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key "
        "-CAcreateserial -out server.crt -days 1 -extfile server.ext; ",
        "openssl req ", ec,
        " -nodes -keyout client.key -out client.csr -subj /CN=kq-k8s-shim; ",
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key "
        "-CAcreateserial -out client.crt -days 1 -extfile client.ext");
    ASSERT_EQ(std::system(script.c_str()), 0) << ReadFile(d + "/openssl.log");
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete dir_;
  }

  void SetUp() override {
    const std::string d = *dir_;
    // Requires a client certificate signed by ca.crt.
    server_ = std::make_unique<httplib::SSLServer>((d + "/server.crt").c_str(),
                                                   (d + "/server.key").c_str(),
                                                   (d + "/ca.crt").c_str());
    ASSERT_TRUE(server_->is_valid());
    server_->Get(
        "/version", [](const httplib::Request&, httplib::Response& res) {
          res.set_content(R"({"gitVersion":"v1.30.0"})", "application/json");
        });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }

  Config BaseConfig() const {
    Config config;
    config.server = absl::StrCat("https://127.0.0.1:", port_);
    config.certificate_authority_data = ReadFile(*dir_ + "/ca.crt");
    return config;
  }
  static ClientOptions OneAttempt() { return {.max_attempts = 1}; }

  static std::string* dir_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
};

std::string* ClientCertificateTest::dir_ = nullptr;

TEST_F(ClientCertificateTest, PemDataAuthenticates) {
  Config config = BaseConfig();
  config.client_certificate_data = ReadFile(*dir_ + "/client.crt");
  config.client_key_data = ReadFile(*dir_ + "/client.key");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, OneAttempt()));
  EXPECT_THAT(client->ServerVersion(), IsOkAndHolds("v1.30.0"));
}

TEST_F(ClientCertificateTest, PemFilesAuthenticate) {
  Config config = BaseConfig();
  config.certificate_authority_data.clear();
  config.certificate_authority_file = *dir_ + "/ca.crt";
  config.client_certificate_file = *dir_ + "/client.crt";
  config.client_key_file = *dir_ + "/client.key";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(config, OneAttempt()));
  EXPECT_THAT(client->ServerVersion(), IsOkAndHolds("v1.30.0"));
}

TEST_F(ClientCertificateTest, WithoutCertificateTheHandshakeFails) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Client> client,
                       Client::Create(BaseConfig(), OneAttempt()));
  EXPECT_THAT(client->ServerVersion(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("/version")));
}

}  // namespace
}  // namespace kq::shim::kube
