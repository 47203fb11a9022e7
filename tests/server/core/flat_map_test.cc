#include "server/core/flat_map.h"

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace kq {
namespace {

using Map = FlatMap<std::string, int>;

std::vector<std::pair<std::string, int>> Entries(const Map& map) {
  return {map.begin(), map.end()};
}

TEST(FlatMapTest, KeepsItsEntriesInKeyOrder) {
  Map map;
  EXPECT_TRUE(map.empty());
  map["memory"] = 2;
  map["cpu"] = 1;
  map["nvidia.com/gpu"] = 3;
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(Entries(map),
            (std::vector<std::pair<std::string, int>>{
                {"cpu", 1}, {"memory", 2}, {"nvidia.com/gpu", 3}}));
  // The first of equal keys wins, as in std::map.
  Map listed = {{"b", 2}, {"a", 1}, {"b", 9}};
  EXPECT_EQ(Entries(listed),
            (std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 2}}));
  const std::map<std::string, int> ordered = {{"z", 26}, {"y", 25}};
  Map from_range(ordered.begin(), ordered.end());
  EXPECT_EQ(Entries(from_range),
            (std::vector<std::pair<std::string, int>>{{"y", 25}, {"z", 26}}));
}

TEST(FlatMapTest, LooksUpInsertsAndErasesAsAStdMap) {
  Map map = {{"a", 1}, {"c", 3}};
  ASSERT_NE(map.find("c"), map.end());
  EXPECT_EQ(map.find("c")->second, 3);
  EXPECT_EQ(map.find("b"), map.end());
  EXPECT_EQ(map.count("a"), 1u);
  EXPECT_EQ(map.count("b"), 0u);
  EXPECT_TRUE(map.contains("a"));
  EXPECT_EQ(map.at("a"), 1);
  EXPECT_THROW(map.at("b"), std::out_of_range);
  EXPECT_EQ(map.lower_bound("b")->first, "c");

  EXPECT_FALSE(map.try_emplace("a", 7).second);
  EXPECT_EQ(map.at("a"), 1);
  EXPECT_TRUE(map.emplace("b", 2).second);
  EXPECT_FALSE(map.insert({"b", 8}).second);
  EXPECT_FALSE(map.insert_or_assign("b", 5).second);
  EXPECT_EQ(map.at("b"), 5);
  EXPECT_EQ(map["d"], 0);  // made
  EXPECT_EQ(map.size(), 4u);

  EXPECT_EQ(map.erase("x"), 0u);
  EXPECT_EQ(map.erase("d"), 1u);
  auto next = map.erase(map.find("a"));
  EXPECT_EQ(next->first, "b");
  EXPECT_EQ(Entries(map),
            (std::vector<std::pair<std::string, int>>{{"b", 5}, {"c", 3}}));
  map.clear();
  EXPECT_TRUE(map.empty());
}

TEST(FlatMapTest, EqualWhenTheirEntriesAre) {
  Map a = {{"x", 1}, {"y", 2}};
  Map b;
  b["y"] = 2;
  b["x"] = 1;
  EXPECT_TRUE(a == b);
  b["x"] = 3;
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(a == Map());
}

}  // namespace
}  // namespace kq
