#include "server/core/uid.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace kq {
namespace {

constexpr char kUuid[] = "0f8fad5b-d9cb-469f-a165-70867728950e";

TEST(UidTest, IsTwentyFourBytes) { EXPECT_EQ(sizeof(Uid), 24u); }

// Every uid reads back as the text it was given: UUIDs in their canonical
// text (kept as 16 bytes) and anything else (kept as text).
TEST(UidTest, ReadsBackItsText) {
  for (const std::string& text :
       {std::string(kUuid), std::string("ffffffff-ffff-ffff-ffff-ffffffffffff"),
        std::string("00000000-0000-0000-0000-000000000001"),
        // Not canonical: kept as given.
        std::string("00000000-0000-0000-0000-000000000000"),
        std::string("0F8FAD5B-D9CB-469F-A165-70867728950E"),
        std::string("0f8fad5b-d9cb-469f-a165-70867728950"),
        std::string("0f8fad5b-d9cb-469f-a165-70867728950e0"),
        std::string("0f8fad5bxd9cb-469f-a165-70867728950e"),
        std::string("0f8fad5b-d9cb-469f-a165-70867728950g"), std::string("u"),
        std::string("uid-1")}) {
    const Uid uid(text);
    EXPECT_EQ(uid.str(), text);
    EXPECT_FALSE(uid.empty()) << text;
    EXPECT_EQ(uid, Uid(text));
  }
  EXPECT_TRUE(Uid().empty());
  EXPECT_TRUE(Uid("").empty());
  EXPECT_EQ(Uid().str(), "");
  EXPECT_EQ(Uid(), Uid(""));
}

// Uids order and compare as their texts, whichever way each is kept.
TEST(UidTest, OrdersAsItsText) {
  std::vector<std::string> texts = {
      kUuid,
      "0f8fad5b-d9cb-469f-a165-70867728950f",
      "0f8fad5b-d9cb-469f-a165-70867728950",
      "0f8fad5b-d9cb-469f-a166-00000000000a",
      "10000000-0000-0000-0000-000000000000",
      "00000000-0000-0000-0000-000000000000",
      "00000000-0000-0000-0000-000000000001",
      "0F8FAD5B-D9CB-469F-A165-70867728950E",
      "uid-1",
      "uid-10",
      "a",
      "",
  };
  for (const std::string& a : texts) {
    for (const std::string& b : texts) {
      const int want = a.compare(b);
      const int got = Uid(a).compare(Uid(b));
      EXPECT_EQ(want < 0, got < 0) << a << " vs " << b;
      EXPECT_EQ(want == 0, got == 0) << a << " vs " << b;
      EXPECT_EQ(a < b, Uid(a) < Uid(b)) << a << " vs " << b;
      EXPECT_EQ(a == b, Uid(a) == Uid(b)) << a << " vs " << b;
    }
  }
}

TEST(UidTest, CopiesMovesAndHashes) {
  Uid text("uid-1");
  Uid copy = text;
  EXPECT_EQ(copy, text);
  Uid uuid(kUuid);
  copy = uuid;
  EXPECT_EQ(copy, uuid);
  copy = text;
  EXPECT_EQ(copy.str(), "uid-1");
  Uid moved = std::move(copy);
  EXPECT_EQ(moved, text);
  moved.clear();
  EXPECT_TRUE(moved.empty());

  absl::flat_hash_set<Uid> set = {text, uuid, Uid(kUuid), Uid("uid-1")};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_TRUE(set.contains(Uid(std::string(kUuid))));
}

}  // namespace
}  // namespace kq
