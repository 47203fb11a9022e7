#include "server/auth/x509.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>

#include "absl/strings/ascii.h"

namespace kq::auth {
namespace {

std::string EntryText(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0) return "";
  std::string text(reinterpret_cast<char*>(utf8), n);
  OPENSSL_free(utf8);
  return text;
}

}  // namespace

absl::StatusOr<CertificateInfo> ParseCertificate(absl::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
  if (cert == nullptr) {
    return absl::InvalidArgumentError("no PEM certificate");
  }
  CertificateInfo info;
  X509_NAME* subject = X509_get_subject_name(cert.get());
  for (int i = -1;
       (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;) {
    // Kubernetes takes the first CN.
    if (info.common_name.empty()) {
      info.common_name = EntryText(X509_NAME_get_entry(subject, i));
    }
  }
  for (int i = -1; (i = X509_NAME_get_index_by_NID(
                        subject, NID_organizationName, i)) >= 0;) {
    info.organizations.push_back(EntryText(X509_NAME_get_entry(subject, i)));
  }
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) == 1) {
    info.not_after = absl::FromTimeT(timegm(&tm));
  }
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial(
      ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr),
      &BN_free);
  if (serial != nullptr) {
    char* hex = BN_bn2hex(serial.get());
    info.serial = absl::AsciiStrToLower(hex);
    OPENSSL_free(hex);
  }
  return info;
}

}  // namespace kq::auth
