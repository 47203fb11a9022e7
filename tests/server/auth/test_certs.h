#pragma once

// A throwaway CA and certificates for tests, made by Debian's openssl
// command (OpenSSL 3.0: `req -CA` signs directly and `-addext` adds SANs)
// into a directory of the test's own.

#include <string>
#include <vector>

namespace kq::auth {

struct TestCert {
  std::string cert_file;
  std::string key_file;
  std::string cert_pem;
  std::string key_pem;
};

class TestCerts {
 public:
  // Makes `dir` and a CA named `ca_name` in it (ca.crt, ca.key).
  explicit TestCerts(std::string dir, std::string ca_name = "kq-test-ca");

  const std::string& ca_file() const { return ca_file_; }
  std::string ca_pem() const;
  // A serving certificate for localhost and 127.0.0.1.
  TestCert Server(const std::string& name = "server");
  // A client certificate: CN = user, one O per group.
  TestCert Client(const std::string& user,
                  const std::vector<std::string>& groups = {});
  // A client certificate whose validity ended in 2020.
  TestCert ExpiredClient(const std::string& user);

 private:
  TestCert Make(const std::string& name, const std::string& subject,
                const std::string& extensions, bool expired);

  std::string dir_;
  std::string ca_file_;
  std::string ca_key_;
};

// Runs `command` with /bin/sh; aborts the test on failure.
void RunOrDie(const std::string& command);
std::string ReadAll(const std::string& path);

}  // namespace kq::auth
