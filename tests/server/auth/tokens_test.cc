#include "server/auth/tokens.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace kq::auth {
namespace {

std::string Line(const std::string& token, const std::string& rest) {
  return "sha256:" + absl::BytesToHexString(Sha256(token)) + " " + rest;
}

TEST(TokensTest, LooksUpByHash) {
  auto table = TokenTable::Parse("# team tokens\n\n" +
                                 Line("tok-alice", "alice team-a,ml") + "\n" +
                                 Line("tok-prom", "prometheus") + "\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ((*table)->size(), 2);
  std::optional<UserInfo> alice = (*table)->Lookup("tok-alice");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->groups, (std::vector<std::string>{"team-a", "ml"}));
  EXPECT_TRUE((*table)->Lookup("tok-prom").has_value());
  EXPECT_FALSE((*table)->Lookup("tok-alicE").has_value());
  EXPECT_FALSE((*table)->Lookup("").has_value());
}

TEST(TokensTest, KnownDigest) {
  // printf %s tok-alice | sha256sum
  EXPECT_EQ(absl::BytesToHexString(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokensTest, UpperCaseHexIsAccepted) {
  std::string line = Line("t", "u");
  for (size_t i = 7; i < 71; ++i) line[i] = absl::ascii_toupper(line[i]);
  auto table = TokenTable::Parse(line);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE((*table)->Lookup("t").has_value());
}

TEST(TokensTest, PlainTokensAreRefused) {
  auto table = TokenTable::Parse("tok-alice alice team-a\n");
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find(
                "line 1: the token must be given as its hash"),
            std::string::npos);
  // The refusal never repeats the token.
  EXPECT_EQ(table.status().message().find("tok-alice"), std::string::npos);
}

TEST(TokensTest, MalformedLinesAreNamed) {
  EXPECT_EQ(TokenTable::Parse("# x\nsha256:abc alice\n").status().message(),
            "line 2: sha256: expected 64 hex digits");
  EXPECT_EQ(TokenTable::Parse(Line("t", "")).status().message(),
            "line 1: expected `sha256:<64 hex digits> <user> "
            "[<group>,<group>...]`");
  EXPECT_EQ(TokenTable::Parse(Line("t", "a") + "\n" + Line("t", "b"))
                .status()
                .message(),
            "line 2: the same token appears twice");
}

}  // namespace
}  // namespace kq::auth
