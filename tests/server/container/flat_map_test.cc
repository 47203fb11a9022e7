#include "server/container/flat_map.h"

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

TEST(FlatMapTest, IsEightBytes) { EXPECT_EQ(sizeof(Map), 8u); }

// Inserts at the front, middle and end grow the array past its capacity
// several times; erases close the gaps. A std::map with the same calls is
// the reference. Keys longer than a string's own bytes check that the
// entries are moved and destroyed, not copied byte for byte.
TEST(FlatMapTest, GrowsAndShrinksAsAStdMapWould) {
  Map map;
  std::map<std::string, int> want;
  auto key = [](int i) {
    return "a-key-long-enough-to-be-on-the-heap-" + std::to_string(i);
  };
  for (int i : {50, 10, 90, 30, 70, 20, 80, 40, 60, 0, 100, 55, 5, 95}) {
    map[key(i)] = i;
    want[key(i)] = i;
    ASSERT_EQ(Entries(map), (std::vector<std::pair<std::string, int>>(
                                want.begin(), want.end())));
  }
  for (int i : {50, 0, 100, 30, 31}) {
    EXPECT_EQ(map.erase(key(i)), want.erase(key(i)));
    ASSERT_EQ(Entries(map), (std::vector<std::pair<std::string, int>>(
                                want.begin(), want.end())));
  }
  auto after = map.erase(map.find(key(55)));
  want.erase(key(55));
  ASSERT_NE(after, map.end());
  EXPECT_EQ(after->first, key(60));
  EXPECT_EQ(Entries(map), (std::vector<std::pair<std::string, int>>(
                              want.begin(), want.end())));
}

TEST(FlatMapTest, CopiesAreDeepAndMovesEmptyTheSource) {
  Map map{{"cpu", 1}, {"memory", 2}};
  Map copy = map;
  copy["cpu"] = 10;
  EXPECT_EQ(map.at("cpu"), 1);
  EXPECT_EQ(copy.at("cpu"), 10);
  copy = map;
  EXPECT_EQ(copy, map);

  Map moved = std::move(copy);
  EXPECT_EQ(moved, map);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move)
  copy["gpu"] = 3;            // a moved-from map is usable
  EXPECT_EQ(copy.size(), 1u);
  moved = std::move(copy);
  EXPECT_EQ(Entries(moved),
            (std::vector<std::pair<std::string, int>>{{"gpu", 3}}));
  moved.clear();
  EXPECT_TRUE(moved.empty());
  moved["cpu"] = 1;
  EXPECT_EQ(moved.at("cpu"), 1);
}

}  // namespace
}  // namespace kq
