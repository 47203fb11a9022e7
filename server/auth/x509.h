#pragma once

// What kqd reads from a certificate: the identity of a client certificate
// (Kubernetes' convention: CN = user, each O = a group) and the validity a
// serving certificate's expiry gauge reports. OpenSSL underneath.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace kq::auth {

struct CertificateInfo {
  std::string common_name;
  std::vector<std::string> organizations;
  absl::Time not_after;
  // Lower-case hex, as `openssl x509 -serial` prints it (without "serial=").
  std::string serial;
};

// The first certificate of `pem`. InvalidArgument when there is none.
absl::StatusOr<CertificateInfo> ParseCertificate(absl::string_view pem);

}  // namespace kq::auth
