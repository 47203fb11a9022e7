#pragma once

// Who is calling: the identity kqd authorizes and audits. Kubernetes' user
// info (k8s.io/apiserver/pkg/authentication/user), with how it was proven.

#include <optional>
#include <string>
#include <vector>

namespace kq::auth {

// Kubernetes' well-known names.
inline constexpr char kAnonymousUser[] = "system:anonymous";
inline constexpr char kAuthenticatedGroup[] = "system:authenticated";
inline constexpr char kUnauthenticatedGroup[] = "system:unauthenticated";

enum class AuthMethod {
  // Authentication is off: kqd serves loopback without identities.
  kNone,
  // A client certificate verified against --client-ca.
  kX509,
  // A bearer token from --token-file.
  kToken,
};

// "x509", "token" or "none", as the audit log writes it.
const char* AuthMethodName(AuthMethod method);

struct UserInfo {
  std::string name;
  // Every authenticated user is also in system:authenticated (last).
  std::vector<std::string> groups;
};

struct Principal {
  UserInfo user;
  AuthMethod method = AuthMethod::kNone;
  // Set when `user` is impersonated: the caller that proved its identity
  // and holds the right to impersonate (the shim).
  std::optional<UserInfo> impersonator;
};

// Everyone when authentication is off.
Principal Anonymous();

}  // namespace kq::auth
