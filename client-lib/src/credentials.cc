#include "client-lib/src/credentials.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "kq/client/client.h"

namespace kq::client::internal {
namespace {

// The host of "host:port", "[v6]:port", "host" or a bare IPv6 address.
absl::string_view HostOf(absl::string_view address) {
  if (absl::ConsumePrefix(&address, "[")) {
    return address.substr(0, address.find(']'));
  }
  const size_t colon = address.find(':');
  if (colon == absl::string_view::npos) return address;
  // More than one colon and no brackets: an IPv6 address without a port.
  if (address.find(':', colon + 1) != absl::string_view::npos) return address;
  return address.substr(0, colon);
}

bool IsLoopbackHost(absl::string_view host) {
  std::string lower = absl::AsciiStrToLower(host);
  absl::string_view name = lower;
  absl::ConsumeSuffix(&name, ".");
  if (name == "localhost") return true;
  const std::string text(host);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

bool IsPrintable(absl::string_view value, bool allow_space) {
  for (const char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || (u == 0x20 && !allow_space)) return false;
  }
  return true;
}

absl::Status CheckPem(absl::string_view what, const std::string& path,
                      const std::string& text, bool key) {
  const bool ok = key ? absl::StrContains(text, "-----BEGIN ") &&
                            absl::StrContains(text, "PRIVATE KEY-----")
                      : absl::StrContains(text, "-----BEGIN CERTIFICATE-----");
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the ", what, " file \"", path, "\" holds no PEM ",
                   key ? "private key (-----BEGIN PRIVATE KEY-----)"
                       : "certificate (-----BEGIN CERTIFICATE-----)"));
}

}  // namespace

bool IsLoopbackTarget(absl::string_view target) {
  if (absl::StartsWith(target, "unix:") ||
      absl::StartsWith(target, "unix-abstract:")) {
    return true;
  }
  if (absl::ConsumePrefix(&target, "ipv4:") ||
      absl::ConsumePrefix(&target, "ipv6:")) {
    // A list of addresses: every one must be local.
    for (absl::string_view address : absl::StrSplit(target, ',')) {
      if (!IsLoopbackHost(HostOf(address))) return false;
    }
    return !target.empty();
  }
  if (absl::ConsumePrefix(&target, "dns:")) {
    // dns://AUTHORITY/host:port names a DNS server, then the host.
    if (absl::ConsumePrefix(&target, "//")) {
      const size_t slash = target.find('/');
      if (slash == absl::string_view::npos) return false;
      target.remove_prefix(slash + 1);
    }
  } else if (absl::StrContains(target, "://")) {
    // Another resolver (xds:///, ...): not known to be local.
    return false;
  }
  return IsLoopbackHost(HostOf(target));
}

absl::Status ValidateCredentialOptions(const ClientOptions& options) {
  const bool tls = !options.tls_ca_file.empty();
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        options.tls_cert_file.empty()
            ? "a client key needs its certificate: give the certificate file "
              "too (kq --cert)"
            : "a client certificate needs its key: give the key file too (kq "
              "--key)");
  }
  if (!options.tls_cert_file.empty() && !tls) {
    return absl::InvalidArgumentError(
        "a client certificate is sent only over TLS: give the CA file that "
        "signed kqd's certificate (kq --tls-ca)");
  }
  if (!options.tls_server_name.empty() && !tls) {
    return absl::InvalidArgumentError(
        "a TLS server name needs TLS: give the CA file that signed kqd's "
        "certificate (kq --tls-ca)");
  }
  if (!options.token.empty() && !options.token_file.empty()) {
    return absl::InvalidArgumentError(
        "give a bearer token or a token file, not both");
  }
  if (!options.token.empty()) {
    if (absl::Status valid = ValidateToken(options.token, "the bearer token");
        !valid.ok()) {
      return valid;
    }
  }
  if ((!options.token.empty() || !options.token_file.empty()) && !tls &&
      !IsLoopbackTarget(options.target)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to send a bearer token in plaintext to ", options.target,
        ", which is not a loopback address: use TLS by giving the CA file "
        "that signed kqd's certificate (kq --tls-ca)"));
  }
  if (!options.impersonate_groups.empty() && options.impersonate_user.empty()) {
    return absl::InvalidArgumentError(
        "impersonating groups needs a user to impersonate too");
  }
  if (!IsPrintable(options.impersonate_user, /*allow_space=*/true)) {
    return absl::InvalidArgumentError(
        "the user to impersonate has characters that metadata cannot carry");
  }
  for (const std::string& group : options.impersonate_groups) {
    if (group.empty() || !IsPrintable(group, /*allow_space=*/true)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the group to impersonate \"", absl::CEscape(group),
          "\" is empty or has characters that metadata cannot carry"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadCredentialFile(absl::string_view what,
                                               const std::string& path) {
  auto failed = [&](int error) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the ", what, " file \"", path, "\": ", strerror(error)));
  };
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed(errno);
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return failed(error);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ", what, " file \"", path, "\" is empty"));
  }
  return text;
}

absl::StatusOr<TlsFiles> ReadTlsFiles(const ClientOptions& options) {
  TlsFiles files;
  absl::StatusOr<std::string> ca =
      ReadCredentialFile("TLS CA", options.tls_ca_file);
  if (!ca.ok()) return ca.status();
  if (absl::Status pem = CheckPem("TLS CA", options.tls_ca_file, *ca, false);
      !pem.ok()) {
    return pem;
  }
  files.ca = *std::move(ca);
  if (options.tls_cert_file.empty()) return files;
  absl::StatusOr<std::string> cert =
      ReadCredentialFile("client certificate", options.tls_cert_file);
  if (!cert.ok()) return cert.status();
  if (absl::Status pem =
          CheckPem("client certificate", options.tls_cert_file, *cert, false);
      !pem.ok()) {
    return pem;
  }
  files.cert = *std::move(cert);
  absl::StatusOr<std::string> key =
      ReadCredentialFile("client key", options.tls_key_file);
  if (!key.ok()) return key.status();
  if (absl::Status pem =
          CheckPem("client key", options.tls_key_file, *key, true);
      !pem.ok()) {
    return pem;
  }
  files.key = *std::move(key);
  return files;
}

absl::Status ValidateToken(absl::string_view token, absl::string_view source) {
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, " is empty"));
  }
  if (!IsPrintable(token, /*allow_space=*/false)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source,
                     " has spaces or control characters: a bearer token is one "
                     "word of printable ASCII"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TokenFile::Get() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (!token_.empty() && now - read_at_ < refresh_) return token_;
  absl::StatusOr<std::string> text = ReadCredentialFile("token", path_);
  absl::Status status = text.status();
  std::string token;
  if (status.ok()) {
    token = std::string(absl::StripAsciiWhitespace(*text));
    status = ValidateToken(token, absl::StrCat("the token in \"", path_, "\""));
  }
  if (!status.ok()) {
    // A token read before stays in use; try the file again next time.
    if (!token_.empty()) return token_;
    return status;
  }
  token_ = std::move(token);
  read_at_ = now;
  return token_;
}

}  // namespace kq::client::internal
