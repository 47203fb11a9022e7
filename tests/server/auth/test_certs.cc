#include "tests/server/auth/test_certs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kq::auth {

void RunOrDie(const std::string& command) {
  const int rc = std::system((command + " >/dev/null 2>&1").c_str());
  if (rc != 0) {
    ADD_FAILURE() << "command failed (" << rc << "): " << command;
    std::abort();
  }
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TestCerts::TestCerts(std::string dir, std::string ca_name)
    : dir_(std::move(dir)),
      ca_file_(dir_ + "/ca.crt"),
      ca_key_(dir_ + "/ca.key") {
  std::filesystem::create_directories(dir_);
  RunOrDie(absl::StrCat(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-days 2 -subj /CN=",
      ca_name, " -keyout ", ca_key_, " -out ", ca_file_));
}

std::string TestCerts::ca_pem() const { return ReadAll(ca_file_); }

TestCert TestCerts::Make(const std::string& name, const std::string& subject,
                         const std::string& extensions, bool expired) {
  TestCert c;
  c.cert_file = absl::StrCat(dir_, "/", name, ".crt");
  c.key_file = absl::StrCat(dir_, "/", name, ".key");
  if (!expired) {
    RunOrDie(absl::StrCat(
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
        "-keyout ",
        c.key_file, " -subj '", subject, "' ", extensions, " -CA ", ca_file_,
        " -CAkey ", ca_key_, " -days 1 -out ", c.cert_file));
  } else {
    // `openssl req` cannot backdate; `openssl ca` can, with a minimal
    // configuration of its own.
    const std::string csr = c.cert_file + ".csr";
    const std::string conf = c.cert_file + ".cnf";
    const std::string db = dir_ + "/" + name + "-db";
    std::filesystem::create_directories(db);
    std::ofstream(db + "/index.txt") << "";
    std::ofstream(conf) << "[ca]\ndefault_ca=test\n[test]\ndatabase=" << db
                        << "/index.txt\nnew_certs_dir=" << db
                        << "\nserial=" << db
                        << "/serial\ndefault_md=sha256\npolicy=any\n"
                           "[any]\ncommonName=supplied\n";
    std::ofstream(db + "/serial") << "1000\n";
    RunOrDie(absl::StrCat(
        "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
        "-keyout ",
        c.key_file, " -subj '", subject, "' -out ", csr));
    RunOrDie(absl::StrCat("openssl ca -batch -config ", conf, " -cert ",
                          ca_file_, " -keyfile ", ca_key_, " -in ", csr,
                          " -out ", c.cert_file,
                          " -startdate 20200101000000Z -enddate "
                          "20200102000000Z -notext"));
  }
  c.cert_pem = ReadAll(c.cert_file);
  c.key_pem = ReadAll(c.key_file);
  return c;
}

TestCert TestCerts::Server(const std::string& name) {
  return Make(name, "/CN=localhost",
              "-addext subjectAltName=DNS:localhost,IP:127.0.0.1", false);
}

TestCert TestCerts::Client(const std::string& user,
                           const std::vector<std::string>& groups) {
  std::string subject = "/CN=" + user;
  for (const std::string& g : groups) subject += "/O=" + g;
  return Make(user, subject, "-addext extendedKeyUsage=clientAuth", false);
}

TestCert TestCerts::ExpiredClient(const std::string& user) {
  return Make(user + "-expired", "/CN=" + user, "", true);
}

}  // namespace kq::auth
