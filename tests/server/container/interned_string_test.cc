#include "server/container/interned_string.h"

#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace kq {
namespace {

TEST(InternedStringTest, IsOnePointerAndEmptyHasNoEntry) {
  static_assert(sizeof(InternedString) == sizeof(void*));
  const size_t before = InternedString::TableSizeForTest();
  InternedString empty;
  InternedString also_empty("");
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(also_empty.empty());
  EXPECT_EQ(empty, also_empty);
  EXPECT_EQ(empty.str(), "");
  EXPECT_EQ(InternedString::TableSizeForTest(), before);
}

TEST(InternedStringTest, EqualTextsShareOneEntryFreedWithTheLastCopy) {
  const size_t before = InternedString::TableSizeForTest();
  {
    InternedString a("team-ml-interned-test");
    InternedString b(std::string("team-ml-interned-test"));
    EXPECT_EQ(&a.str(), &b.str());
    EXPECT_EQ(a, b);
    EXPECT_EQ(InternedString::TableSizeForTest(), before + 1);
    InternedString c = a;
    InternedString d = std::move(b);
    EXPECT_TRUE(b.empty());  // NOLINT: moved-from is empty
    a = "another-text-interned-test";
    EXPECT_EQ(InternedString::TableSizeForTest(), before + 2);
    c = d;
    EXPECT_EQ(c, d);
  }
  EXPECT_EQ(InternedString::TableSizeForTest(), before);
}

TEST(InternedStringTest, ReadsAndComparesAsItsText) {
  InternedString ns("team-a");
  const std::string& text = ns;
  EXPECT_EQ(text, "team-a");
  EXPECT_EQ(ns.size(), 6u);
  EXPECT_STREQ(ns.c_str(), "team-a");
  EXPECT_TRUE(ns == "team-a");
  EXPECT_TRUE(ns == std::string("team-a"));
  EXPECT_TRUE(std::string("team-a") == ns);
  EXPECT_TRUE(ns != "team-b");
  EXPECT_TRUE(InternedString("a") < InternedString("b"));
  EXPECT_TRUE(InternedString("b") > InternedString("a"));
  EXPECT_TRUE(InternedString("a") < std::string("ab"));
  EXPECT_TRUE(std::string("a") < InternedString("ab"));
  EXPECT_FALSE(InternedString("b") < InternedString("b"));
  const std::string team_b = "team-b";
  EXPECT_TRUE(std::tie(ns, text) < std::tie(ns, team_b));
  EXPECT_EQ(absl::Hash<InternedString>()(ns),
            absl::Hash<absl::string_view>()("team-a"));
  std::map<std::string, int> by_text = {{"team-a", 1}};
  EXPECT_EQ(by_text.at(ns), 1);
  std::ostringstream os;
  os << ns;
  EXPECT_EQ(os.str(), "team-a");
}

TEST(InternedStringTest, ThreadsInterningAndDroppingTheSameTexts) {
  const size_t before = InternedString::TableSizeForTest();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      std::vector<InternedString> held;
      for (int i = 0; i < 20000; ++i) {
        InternedString s("shared-" + std::to_string(i % 7));
        if (i % 3 == t % 3) held.push_back(s);
        if (held.size() > 50) held.erase(held.begin(), held.begin() + 25);
        EXPECT_EQ(s.str(), "shared-" + std::to_string(i % 7));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(InternedString::TableSizeForTest(), before);
}

}  // namespace
}  // namespace kq
