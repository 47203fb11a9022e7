#include "server/auth/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"

namespace kq::auth {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& flag,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "not PEM";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof(buffer));
  return buffer;
}

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())),
                &BIO_free);
}

}  // namespace

// The serving certificate and key, as OpenSSL objects.
struct TlsFiles::Identity {
  std::string cert_pem;
  std::string key_pem;
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;
  CertificateInfo info;

  ~Identity() {
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

// The client CA bundle.
struct TlsFiles::ClientCas {
  std::string pem;
  X509_STORE* store = nullptr;
  absl::Time not_after = absl::InfiniteFuture();

  ~ClientCas() { X509_STORE_free(store); }
};

TlsFiles::TlsFiles(TlsOptions options, AuthMetrics* metrics)
    : options_(std::move(options)), metrics_(metrics) {}

absl::StatusOr<std::unique_ptr<TlsFiles>> TlsFiles::Open(TlsOptions options,
                                                         AuthMetrics* metrics) {
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key: give both or neither");
  }
  if (options.cert_file.empty()) {
    return absl::InvalidArgumentError(
        options.client_ca_file.empty()
            ? "--tls-cert: is required for TLS"
            : "--client-ca: needs --tls-cert and --tls-key (client "
              "certificates are only asked for over TLS)");
  }
  if (options.staging_dir.empty()) {
    return absl::InvalidArgumentError("TLS: no staging directory");
  }
  std::error_code ec;
  std::filesystem::create_directories(options.staging_dir, ec);
  std::filesystem::permissions(options.staging_dir,
                               std::filesystem::perms::owner_all, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "TLS: cannot create ", options.staging_dir, ": ", ec.message()));
  }
  std::unique_ptr<TlsFiles> files(new TlsFiles(std::move(options), metrics));
  if (absl::Status s = files->Load(); !s.ok()) return s;
  TlsFiles* self = files.get();
  files->watcher_ = std::thread([self] {
    while (!self->stop_.WaitForNotificationWithTimeout(
        self->options_.reload_interval)) {
      self->PollNow();
    }
  });
  return files;
}

TlsFiles::~TlsFiles() {
  stop_.Notify();
  if (watcher_.joinable()) watcher_.join();
}

void TlsFiles::PollNow() {
  if (absl::Status s = Load(); !s.ok()) {
    spdlog::error("{}; TLS keeps the certificates loaded before",
                  std::string(s.message()));
  }
}

absl::StatusOr<std::shared_ptr<const TlsFiles::Identity>>
TlsFiles::ReadIdentity() const {
  absl::StatusOr<std::string> cert = ReadFile("--tls-cert", options_.cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile("--tls-key", options_.key_file);
  if (!key.ok()) return key.status();
  {
    absl::MutexLock lock(&mu_);
    if (identity_ != nullptr && identity_->cert_pem == *cert &&
        identity_->key_pem == *key) {
      return identity_;
    }
  }
  auto m = std::make_shared<Identity>();
  m->cert_pem = *std::move(cert);
  m->key_pem = *std::move(key);
  {
    BioPtr bio = MemoryBio(m->cert_pem);
    m->cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (m->cert == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--tls-cert ", options_.cert_file, ": ", OpenSslError()));
    }
    m->chain = sk_X509_new_null();
    while (X509* extra =
               PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      sk_X509_push(m->chain, extra);
    }
    ERR_clear_error();
  }
  {
    BioPtr bio = MemoryBio(m->key_pem);
    m->key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    if (m->key == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls-key ", options_.key_file, ": ", OpenSslError()));
    }
  }
  if (X509_check_private_key(m->cert, m->key) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-key ", options_.key_file, ": does not match the certificate in ",
        options_.cert_file));
  }
  absl::StatusOr<CertificateInfo> info = ParseCertificate(m->cert_pem);
  if (!info.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert ", options_.cert_file, ": ", info.status().message()));
  }
  m->info = *std::move(info);
  return std::shared_ptr<const Identity>(std::move(m));
}

absl::StatusOr<std::shared_ptr<const TlsFiles::ClientCas>>
TlsFiles::ReadClientCas() const {
  if (options_.client_ca_file.empty()) {
    return std::shared_ptr<const ClientCas>();
  }
  absl::StatusOr<std::string> pem =
      ReadFile("--client-ca", options_.client_ca_file);
  if (!pem.ok()) return pem.status();
  {
    absl::MutexLock lock(&mu_);
    if (client_cas_ != nullptr && client_cas_->pem == *pem) {
      return client_cas_;
    }
  }
  auto m = std::make_shared<ClientCas>();
  m->pem = *std::move(pem);
  m->store = X509_STORE_new();
  BioPtr bio = MemoryBio(m->pem);
  int count = 0;
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(m->store, c);
    std::tm tm{};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(c), &tm) == 1) {
      m->not_after = std::min(m->not_after, absl::FromTimeT(timegm(&tm)));
    }
    X509_free(c);
    ++count;
  }
  ERR_clear_error();
  if (count == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--client-ca ", options_.client_ca_file, ": no PEM certificate"));
  }
  return std::shared_ptr<const ClientCas>(std::move(m));
}

absl::Status TlsFiles::Load() {
  // The identity and the CA bundle rotate on their own: a bad one keeps
  // its old contents without holding back a good other.
  absl::StatusOr<std::shared_ptr<const Identity>> identity = ReadIdentity();
  absl::StatusOr<std::shared_ptr<const ClientCas>> cas = ReadClientCas();
  std::shared_ptr<const Identity> new_identity;
  std::shared_ptr<const ClientCas> new_cas;
  bool first;
  {
    absl::MutexLock lock(&mu_);
    first = identity_ == nullptr;
    if (first && (!identity.ok() || !cas.ok())) {
      return identity.ok() ? cas.status() : identity.status();
    }
    new_identity = identity.ok() ? *identity : identity_;
    new_cas = cas.ok() ? *cas : client_cas_;
    if (new_identity == identity_ && new_cas == client_cas_) {
      return identity.ok() ? cas.status() : identity.status();
    }
  }
  KQ_RETURN_IF_ERROR(Stage(*new_identity, new_cas.get()));
  {
    absl::MutexLock lock(&mu_);
    identity_ = new_identity;
    client_cas_ = new_cas;
  }
  if (metrics_ != nullptr) {
    metrics_->CertificateExpiry("server", new_identity->info.not_after);
    if (new_cas != nullptr) {
      metrics_->CertificateExpiry("client_ca", new_cas->not_after);
    }
  }
  spdlog::info("TLS: {} serving certificate serial {} (expires {}){}",
               first ? "loaded" : "reloaded", new_identity->info.serial,
               absl::FormatTime(new_identity->info.not_after),
               new_cas == nullptr ? "" : ", client certificates verified");
  return identity.ok() ? cas.status() : identity.status();
}

absl::Status TlsFiles::Stage(const Identity& identity, const ClientCas* cas) {
  namespace fs = std::filesystem;
  const fs::path root(options_.staging_dir);
  const fs::path gen = root / absl::StrCat("gen-", ++generation_);
  std::error_code ec;
  fs::remove_all(gen, ec);
  fs::create_directories(gen, ec);
  auto write = [&](const char* name, const std::string& text) {
    const fs::path path = gen / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, ec);
    out << text;
    return static_cast<bool>(out.flush());
  };
  if (!write("tls.key", identity.key_pem) ||
      !write("tls.crt", identity.cert_pem) ||
      (cas != nullptr && !write("ca.crt", cas->pem))) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS: cannot write ", gen.string()));
  }
  const fs::path link = root / "current";
  const fs::path next = root / "current.next";
  fs::remove(next, ec);
  fs::create_directory_symlink(gen.filename(), next, ec);
  if (!ec) fs::rename(next, link, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS: cannot switch ", link.string(), ": ", ec.message()));
  }
  // The generation before the last may still be open in gRPC's watcher
  // thread; the one before that is not.
  fs::remove_all(root / absl::StrCat("gen-", generation_ - 2), ec);
  return absl::OkStatus();
}

std::shared_ptr<grpc::ServerCredentials> TlsFiles::GrpcCredentials() const {
  // gRPC re-reads the staged copies every second: they change only when
  // Load has checked new files.
  constexpr unsigned int kInterval = 1;
  const std::string current = options_.staging_dir + "/current/";
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
  if (options_.client_ca_file.empty()) {
    provider =
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            current + "tls.key", current + "tls.crt", kInterval);
  } else {
    provider =
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
            current + "tls.key", current + "tls.crt", current + "ca.crt",
            kInterval);
  }
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (!options_.client_ca_file.empty()) {
    tls.watch_root_certs();
    // Optional but verified: REQUIRE would fail a caller without a
    // certificate in the handshake, where it sees only UNAVAILABLE.
    tls.set_cert_request_type(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(tls);
}

bool TlsFiles::SetUp(SSL_CTX& ctx) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_cert_cb(&ctx, &TlsFiles::CertCallback, this);
  if (!options_.client_ca_file.empty()) {
    // SSL_VERIFY_PEER without FAIL_IF_NO_PEER_CERT: asked for, verified
    // when sent, not required.
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
  }
  return true;
}

int TlsFiles::CertCallback(SSL* ssl, void* arg) {
  auto* self = static_cast<TlsFiles*>(arg);
  std::shared_ptr<const Identity> identity;
  std::shared_ptr<const ClientCas> cas;
  {
    absl::MutexLock lock(&self->mu_);
    identity = self->identity_;
    cas = self->client_cas_;
  }
  if (SSL_use_certificate(ssl, identity->cert) != 1 ||
      SSL_use_PrivateKey(ssl, identity->key) != 1 ||
      SSL_set1_chain(ssl, identity->chain) != 1) {
    return 0;
  }
  if (cas != nullptr) SSL_set1_verify_cert_store(ssl, cas->store);
  return 1;
}

CertificateInfo TlsFiles::server_certificate() const {
  absl::MutexLock lock(&mu_);
  return identity_->info;
}

std::string VerifiedPeerCertificate(const SSL* ssl) {
  if (ssl == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return "";
  X509* peer = SSL_get1_peer_certificate(ssl);
  if (peer == nullptr) return "";
  std::string pem;
  if (BIO* bio = BIO_new(BIO_s_mem()); bio != nullptr) {
    if (PEM_write_bio_X509(bio, peer) == 1) {
      char* data = nullptr;
      const long n = BIO_get_mem_data(bio, &data);
      pem.assign(data, n);
    }
    BIO_free(bio);
  }
  X509_free(peer);
  return pem;
}

}  // namespace kq::auth
