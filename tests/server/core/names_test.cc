#include "server/core/names.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "server/core/uid.h"

namespace kq {
namespace {

using ::testing::MatchesRegex;

TEST(NameGeneratorTest, UidsAreDistinctVersion4UuidsKeptAsTheirBytes) {
  NameGenerator names;
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::string uid = names.NewUid();
    // Version 4; the variant's top bits are 10 (8, 9, a or b).
    EXPECT_THAT(uid, MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                  "[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
    // Canonical, so a Uid keeps it in 16 bytes and gives the same text back.
    EXPECT_EQ(Uid(uid).str(), uid);
    seen.insert(uid);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(NameGeneratorTest, GeneratedNamesAreThePrefixAndFiveCharacters) {
  NameGenerator names;
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string name = names.GenerateName("sample-job-");
    EXPECT_THAT(name, MatchesRegex("sample-job-[bcdfghjklmnpqrstvwxz2456789]"
                                   "{5}"));
    seen.insert(name);
  }
  // 27^5 names: two of 200 draws are alike about once in 720 runs, which
  // this allows; two such pairs would be once in a million.
  EXPECT_GE(seen.size(), 199u);
}

}  // namespace
}  // namespace kq
