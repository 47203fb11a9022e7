#include "server/container/boxed.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace kq {
namespace {

TEST(BoxedTest, EmptyUntilSetAndAfterReset) {
  Boxed<std::string> box;
  EXPECT_FALSE(box.has_value());
  EXPECT_FALSE(box);
  EXPECT_TRUE(box == std::nullopt);
  EXPECT_EQ(box.value_or("fallback"), "fallback");
  box = std::string("set");
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(*box, "set");
  EXPECT_EQ(box->size(), 3u);
  EXPECT_EQ(box.value_or("fallback"), "set");
  box.reset();
  EXPECT_FALSE(box.has_value());
  box.emplace(3, 'x');
  EXPECT_EQ(*box, "xxx");
  box = std::nullopt;
  EXPECT_FALSE(box.has_value());
}

TEST(BoxedTest, CopiesAreDeepAndCompareByValue) {
  Boxed<std::string> a = std::string("one");
  Boxed<std::string> b = a;
  EXPECT_TRUE(a == b);
  *b = "two";
  EXPECT_EQ(*a, "one");
  EXPECT_FALSE(a == b);
  a = b;
  EXPECT_EQ(*a, "two");
  *a = "three";
  EXPECT_EQ(*b, "two");
  Boxed<std::string> empty;
  EXPECT_FALSE(a == empty);
  EXPECT_TRUE(empty == Boxed<std::string>());
  a = empty;
  EXPECT_FALSE(a.has_value());
  Boxed<std::string> moved = std::move(b);
  EXPECT_EQ(*moved, "two");
}

TEST(BoxedTest, ConvertsFromAndToOptional) {
  Boxed<int> box = std::optional<int>(7);
  EXPECT_EQ(*box, 7);
  box = std::optional<int>();
  EXPECT_FALSE(box.has_value());
  EXPECT_EQ(box.ToOptional(), std::nullopt);
  box = 9;
  EXPECT_EQ(box.ToOptional(), std::optional<int>(9));
}

TEST(BoxedMapTest, AnEmptyMapCostsAPointer) {
  EXPECT_EQ(sizeof(BoxedMap<std::string, std::string>), sizeof(void*));
  BoxedMap<std::string, int> map;
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.begin(), map.end());
  EXPECT_EQ(map.find("a"), map.end());
  EXPECT_EQ(map.count("a"), 0u);
  EXPECT_FALSE(map.contains("a"));
  EXPECT_EQ(map.erase("a"), 0u);
  const BoxedMap<std::string, int>& read = map;
  EXPECT_EQ(read.find("a"), read.end());
  EXPECT_THROW(read.at("a"), std::out_of_range);
}

TEST(BoxedMapTest, BehavesAsAStdMap) {
  BoxedMap<std::string, int> map;
  map["b"] = 2;
  EXPECT_TRUE(map.insert({"a", 1}).second);
  EXPECT_FALSE(map.emplace("a", 9).second);
  EXPECT_TRUE(map.try_emplace("c", 3).second);
  map.insert_or_assign("c", 4);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.at("c"), 4);
  std::map<std::string, int> seen(map.begin(), map.end());
  EXPECT_EQ(seen, (std::map<std::string, int>{{"a", 1}, {"b", 2}, {"c", 4}}));
  EXPECT_EQ(map.begin()->first, "a");  // in key order
  auto it = map.find("b");
  ASSERT_NE(it, map.end());
  it->second = 5;
  EXPECT_EQ(map.at("b"), 5);
  it = map.erase(it);
  EXPECT_EQ(it->first, "c");
  EXPECT_EQ(map.erase("a"), 1u);
  EXPECT_EQ(map.ToMap(), (std::map<std::string, int>{{"c", 4}}));
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.begin(), map.end());
}

TEST(BoxedMapTest, CopiesAreDeepAndEmptyEqualsEmptied) {
  using StringMap = BoxedMap<std::string, std::string>;
  StringMap a = {{"k", "v"}};
  StringMap b = a;
  b["k"] = "w";
  EXPECT_EQ(a.at("k"), "v");
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_TRUE(a == b);
  StringMap emptied = a;
  emptied.erase("k");
  EXPECT_TRUE(emptied == StringMap());
  EXPECT_FALSE(emptied == a);
  a = StringMap();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(b.at("k"), "v");
  StringMap moved = std::move(b);
  EXPECT_EQ(moved.at("k"), "v");
  const std::map<std::string, std::string> plain = {{"x", "y"}};
  StringMap from_plain = plain;
  EXPECT_EQ(from_plain.ToMap(), plain);
  from_plain = {};
  EXPECT_TRUE(from_plain.empty());
}

TEST(BoxedVectorTest, AnEmptyListCostsAPointer) {
  EXPECT_EQ(sizeof(BoxedVector<std::string>), sizeof(void*));
  BoxedVector<std::string> list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.begin(), list.end());
  EXPECT_EQ(list.erase(list.begin(), list.end()), list.end());
  int seen = 0;
  for (const std::string& s : list) seen += static_cast<int>(s.size()) + 1;
  EXPECT_EQ(seen, 0);
  EXPECT_EQ(list.ToVector(), std::vector<std::string>());
}

TEST(BoxedVectorTest, BehavesAsAStdVector) {
  BoxedVector<std::string> list;
  list.push_back("b");
  list.emplace_back("c");
  list.insert(list.begin(), "a");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list.front(), "a");
  EXPECT_EQ(list.back(), "c");
  list[1] = "B";
  EXPECT_EQ(list.ToVector(), (std::vector<std::string>{"a", "B", "c"}));
  auto it = list.erase(list.begin());
  EXPECT_EQ(*it, "B");
  EXPECT_EQ(list.ToVector(), (std::vector<std::string>{"B", "c"}));
  BoxedVector<std::string> fresh;
  fresh.insert(fresh.end(), "only");
  EXPECT_EQ(fresh.ToVector(), std::vector<std::string>{"only"});
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.begin(), list.end());
}

TEST(BoxedVectorTest, CopiesAreDeepAndEmptyEqualsEmptied) {
  using StringList = BoxedVector<std::string>;
  StringList a = {"x", "y"};
  StringList b = a;
  b[0] = "z";
  EXPECT_EQ(a[0], "x");
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_TRUE(a == b);
  StringList emptied = a;
  emptied.erase(emptied.begin(), emptied.end());
  EXPECT_TRUE(emptied == StringList());
  EXPECT_FALSE(emptied == a);
  StringList moved = std::move(b);
  EXPECT_EQ(moved.ToVector(), (std::vector<std::string>{"x", "y"}));
  const std::vector<std::string> plain = {"p"};
  StringList from_plain = plain;
  EXPECT_EQ(from_plain.ToVector(), plain);
  from_plain = {};
  EXPECT_TRUE(from_plain.empty());
}

TEST(BoxedStringTest, AnEmptyStringCostsAPointer) {
  EXPECT_EQ(sizeof(BoxedString), sizeof(void*));
  BoxedString s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.str(), "");
}

TEST(BoxedStringTest, ReadsAsTheStringItHolds) {
  BoxedString s = "job-";
  EXPECT_FALSE(s.empty());
  const std::string& read = s;
  EXPECT_EQ(read, "job-");
  s = std::string("a-prefix-longer-than-a-string's-own-bytes-");
  EXPECT_EQ(s.str(), "a-prefix-longer-than-a-string's-own-bytes-");
  s = "";  // empty again, holding nothing
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s, BoxedString());
  s = "x";
  s.clear();
  EXPECT_TRUE(s.empty());
  // Release moves the text out (a template detached to disk).
  s = "{\"spec\":{}}";
  EXPECT_EQ(s.Release(), "{\"spec\":{}}");
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.Release(), "");
}

TEST(BoxedStringTest, CopiesAreDeepAndCompareByValue) {
  BoxedString a = "high";
  BoxedString b = a;
  b = "low";
  EXPECT_EQ(a, "high");
  EXPECT_EQ(b, "low");
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_EQ(a, b);
  BoxedString moved = std::move(b);
  EXPECT_EQ(moved, "high");
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace kq
