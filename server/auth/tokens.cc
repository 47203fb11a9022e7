#include "server/auth/tokens.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kq::auth {

std::string Sha256(absl::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

absl::StatusOr<std::shared_ptr<const TokenTable>> TokenTable::Parse(
    absl::string_view text) {
  auto table = std::shared_ptr<TokenTable>(new TokenTable());
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    auto error = [number](absl::string_view reason) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", reason));
    };
    if (fields.size() < 2 || fields.size() > 3) {
      return error(
          "expected `sha256:<64 hex digits> <user> [<group>,<group>...]`");
    }
    if (!absl::StartsWith(fields[0], "sha256:")) {
      return error(
          "the token must be given as its hash, sha256:<64 hex digits> "
          "(printf %s \"$TOKEN\" | sha256sum); tokens are never stored in "
          "the clear");
    }
    absl::string_view hex = fields[0].substr(7);
    std::string digest;
    if (hex.size() != 64 || !absl::c_all_of(hex, [](char c) {
          return absl::ascii_isxdigit(static_cast<unsigned char>(c));
        })) {
      return error("sha256: expected 64 hex digits");
    }
    digest = absl::HexStringToBytes(absl::AsciiStrToLower(hex));
    UserInfo user;
    user.name = std::string(fields[1]);
    if (fields.size() == 3) {
      for (absl::string_view g : absl::StrSplit(fields[2], ',')) {
        if (!g.empty()) user.groups.emplace_back(g);
      }
    }
    if (!table->users_.emplace(std::move(digest), std::move(user)).second) {
      return error("the same token appears twice");
    }
  }
  return std::shared_ptr<const TokenTable>(std::move(table));
}

std::optional<UserInfo> TokenTable::Lookup(absl::string_view token) const {
  const std::string digest = Sha256(token);
  auto it = users_.find(digest);
  // The map finds the entry by hash; the final comparison is the one an
  // attacker could time, so it is constant-time.
  if (it == users_.end() ||
      CRYPTO_memcmp(it->first.data(), digest.data(), digest.size()) != 0) {
    return std::nullopt;
  }
  return it->second;
}

}  // namespace kq::auth
