#include "server/auth/access.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include "server/auth/x509.h"

namespace kq::auth {
namespace {

// Entries kept before the cache starts over: more distinct client
// certificates than this in use at once only costs parsing.
constexpr size_t kCertificateCacheSize = 4096;

void AddAuthenticatedGroup(UserInfo& user) {
  for (const std::string& g : user.groups) {
    if (g == kAuthenticatedGroup) return;
  }
  user.groups.push_back(kAuthenticatedGroup);
}

}  // namespace

const char* AuthMethodName(AuthMethod method) {
  switch (method) {
    case AuthMethod::kNone:
      return "none";
    case AuthMethod::kX509:
      return "x509";
    case AuthMethod::kToken:
      return "token";
  }
  return "none";
}

Principal Anonymous() {
  Principal p;
  p.user.name = kAnonymousUser;
  p.user.groups = {kUnauthenticatedGroup};
  return p;
}

Access::Access(AccessOptions options, const PolicyFiles* files,
               AuthMetrics* metrics)
    : options_(options), files_(files), metrics_(metrics) {}

absl::Status Access::Unauthenticated(const std::string& reason,
                                     absl::string_view message) {
  if (metrics_ != nullptr) metrics_->AuthenticationFailed(reason);
  return absl::UnauthenticatedError(
      absl::StrCat(kUnauthenticatedPrefix, message));
}

absl::StatusOr<UserInfo> Access::FromCertificate(const std::string& pem) {
  {
    absl::MutexLock lock(&mu_);
    auto it = certificates_.find(pem);
    if (it != certificates_.end()) return it->second;
  }
  absl::StatusOr<CertificateInfo> info = ParseCertificate(pem);
  if (!info.ok() || info->common_name.empty()) {
    return Unauthenticated("malformed",
                           "the client certificate has no subject CN");
  }
  UserInfo user;
  user.name = info->common_name;
  user.groups = info->organizations;
  AddAuthenticatedGroup(user);
  absl::MutexLock lock(&mu_);
  if (certificates_.size() >= kCertificateCacheSize) certificates_.clear();
  certificates_.emplace(pem, user);
  return user;
}

absl::StatusOr<Principal> Access::Authenticate(const Credentials& credentials) {
  if (!options_.enabled) return Anonymous();
  Principal principal;
  // kube-apiserver's union authenticator: the first that succeeds wins,
  // and the client certificate comes first.
  if (!credentials.verified_certificate.empty()) {
    absl::StatusOr<UserInfo> user =
        FromCertificate(credentials.verified_certificate);
    if (!user.ok()) return user.status();
    principal.user = *std::move(user);
    principal.method = AuthMethod::kX509;
  } else if (credentials.authorization.has_value()) {
    absl::string_view header = *credentials.authorization;
    constexpr absl::string_view kBearer = "bearer ";
    if (header.size() <= kBearer.size() ||
        !absl::StartsWithIgnoreCase(header, kBearer)) {
      return Unauthenticated(
          "malformed", "the authorization header is not `Bearer <token>`");
    }
    absl::string_view token =
        absl::StripAsciiWhitespace(header.substr(kBearer.size()));
    std::optional<UserInfo> user = files_->tokens()->Lookup(token);
    if (!user.has_value()) {
      return Unauthenticated("unknown_token", "bearer token not recognized");
    }
    principal.user = *std::move(user);
    AddAuthenticatedGroup(principal.user);
    principal.method = AuthMethod::kToken;
  } else {
    if (credentials.impersonate_user.has_value()) {
      return Unauthenticated(
          "impersonation", "impersonation requires an authenticated principal");
    }
    return Unauthenticated(
        "missing", "no verified client certificate and no bearer token");
  }
  if (!credentials.impersonate_user.has_value()) {
    if (!credentials.impersonate_groups.empty()) {
      return absl::InvalidArgumentError(
          "impersonate-group: requires impersonate-user");
    }
    return principal;
  }
  // Kubernetes' impersonation filter: the caller needs `impersonate` on
  // the user and on each group.
  Attributes request;
  request.verb = "impersonate";
  request.api_group = "";
  request.resource = "users";
  request.name = *credentials.impersonate_user;
  if (Decision d = Authorize(principal, request); !d.allowed) {
    return absl::PermissionDeniedError(d.reason);
  }
  request.resource = "groups";
  for (const std::string& group : credentials.impersonate_groups) {
    request.name = group;
    if (Decision d = Authorize(principal, request); !d.allowed) {
      return absl::PermissionDeniedError(d.reason);
    }
  }
  Principal impersonated;
  impersonated.method = principal.method;
  impersonated.user.name = *credentials.impersonate_user;
  impersonated.user.groups = credentials.impersonate_groups;
  AddAuthenticatedGroup(impersonated.user);
  impersonated.impersonator = std::move(principal.user);
  return impersonated;
}

Decision Access::Authorize(const Principal& principal,
                           const Attributes& request) const {
  if (!options_.enabled) return {true, "authorization is off"};
  Decision d = files_->policy()->Authorize(principal.user, request);
  if (metrics_ != nullptr) metrics_->Decided(d.allowed);
  return d;
}

}  // namespace kq::auth
