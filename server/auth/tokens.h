#pragma once

// Bearer tokens (--token-file): one line per token, `sha256:<hex> <user>
// [<group>,<group>...]`, the token itself never on disk. Kubernetes'
// static token file keeps tokens in the clear; kq keeps only their SHA-256
// (`printf %s "$TOKEN" | sha256sum`), as Slurm keeps only its key's users.

#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "server/auth/principal.h"

namespace kq::auth {

class TokenTable {
 public:
  // InvalidArgument naming the line for a malformed one ("line 3: ...");
  // `#` comments and blank lines are skipped.
  static absl::StatusOr<std::shared_ptr<const TokenTable>> Parse(
      absl::string_view text);

  // The user a token belongs to (groups without system:authenticated), or
  // nullopt. Compares digests in constant time.
  std::optional<UserInfo> Lookup(absl::string_view token) const;

  int size() const { return static_cast<int>(users_.size()); }

 private:
  // By the digest's raw 32 bytes.
  absl::flat_hash_map<std::string, UserInfo> users_;
};

// SHA-256 of `data`, 32 raw bytes.
std::string Sha256(absl::string_view data);

}  // namespace kq::auth
