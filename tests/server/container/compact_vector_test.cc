#include "server/container/compact_vector.h"

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace kq {
namespace {

// Long enough to live on the heap, so that a lost or doubled element shows
// under a leak checker and in the comparisons.
std::string Text(int i) {
  return "an element of a compact vector, number " + std::to_string(i);
}

TEST(CompactVectorTest, IsOnePointerAndEmptyHasNoBlock) {
  static_assert(sizeof(CompactVector<std::string>) == sizeof(void*));
  CompactVector<std::string> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(v.data(), nullptr);
  EXPECT_EQ(v.begin(), v.end());
}

TEST(CompactVectorTest, GrowsAndKeepsItsElementsInOrder) {
  CompactVector<std::string> v;
  for (int i = 0; i < 100; ++i) v.push_back(Text(i));
  ASSERT_EQ(v.size(), 100u);
  EXPECT_GE(v.capacity(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v[i], Text(i));
  EXPECT_EQ(v.front(), Text(0));
  EXPECT_EQ(v.back(), Text(99));
}

TEST(CompactVectorTest, PushingOneOfItsOwnElementsWhileGrowing) {
  CompactVector<std::string> v;
  v.push_back(Text(0));
  for (int i = 0; i < 10; ++i) {
    // Full each time the capacity is a power of two: the reference points
    // into the block that the push replaces.
    v.push_back(v.front());
    v.emplace_back(v.back());
  }
  ASSERT_EQ(v.size(), 21u);
  for (const std::string& s : v) EXPECT_EQ(s, Text(0));
}

TEST(CompactVectorTest, ResizingWithOneOfItsOwnElementsWhileGrowing) {
  CompactVector<std::string> v = {Text(1)};
  v.resize(20, v.front());
  ASSERT_EQ(v.size(), 20u);
  for (const std::string& s : v) EXPECT_EQ(s, Text(1));
}

TEST(CompactVectorTest, CopiesAreDeepMovesLeaveEmpty) {
  CompactVector<std::string> a = {Text(1), Text(2)};
  CompactVector<std::string> b = a;
  EXPECT_EQ(a, b);
  b[0] = Text(3);
  EXPECT_EQ(a[0], Text(1));
  EXPECT_FALSE(a == b);
  CompactVector<std::string> c = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT: moved-from is empty, as documented
  EXPECT_EQ(c.size(), 2u);
  a = c;
  EXPECT_EQ(a, c);
  c = std::move(b);
  EXPECT_EQ(c[0], Text(3));
  CompactVector<std::string>& self = c;
  c = self;
  EXPECT_EQ(c[0], Text(3));
}

TEST(CompactVectorTest, ComparesWithAndBuildsFromStdVector) {
  const std::vector<std::string> want = {Text(1), Text(2), Text(3)};
  CompactVector<std::string> v(want);
  EXPECT_TRUE(v == want);
  v.pop_back();
  EXPECT_FALSE(v == want);
  EXPECT_TRUE(CompactVector<std::string>() == std::vector<std::string>());
}

TEST(CompactVectorTest, InsertEraseResizeAsStdVector) {
  std::mt19937 random(7);
  CompactVector<std::string> got;
  std::vector<std::string> want;
  for (int step = 0; step < 5000; ++step) {
    const int op = static_cast<int>(random() % 7);
    const size_t n = want.size();
    const size_t at = n == 0 ? 0 : random() % (n + 1);
    switch (op) {
      case 0:
        got.push_back(Text(step));
        want.push_back(Text(step));
        break;
      case 1:
        got.insert(got.begin() + at, Text(step));
        want.insert(want.begin() + at, Text(step));
        break;
      case 2:
        if (at < n) {
          got.erase(got.begin() + at);
          want.erase(want.begin() + at);
        }
        break;
      case 3: {
        const size_t last = at + (n - at) / 2;
        auto g = got.erase(got.begin() + at, got.begin() + last);
        auto w = want.erase(want.begin() + at, want.begin() + last);
        EXPECT_EQ(g - got.begin(), w - want.begin());
        break;
      }
      case 4: {
        const size_t size = random() % 12;
        got.resize(size, Text(step));
        want.resize(size, Text(step));
        break;
      }
      case 5: {
        const std::vector<std::string> more = {Text(step), Text(step + 1)};
        got.insert(got.begin() + at, more.begin(), more.end());
        want.insert(want.begin() + at, more.begin(), more.end());
        break;
      }
      case 6:
        if (random() % 50 == 0) {
          got.clear();
          want.clear();
        } else if (n > 0) {
          got.pop_back();
          want.pop_back();
        }
        break;
    }
    ASSERT_TRUE(got == want) << "step " << step << " op " << op;
  }
  got.shrink_to_fit();
  EXPECT_EQ(got.capacity(), got.size());
  EXPECT_TRUE(got == want);
}

TEST(CompactVectorTest, ResizeDefaultConstructsAndShrinks) {
  CompactVector<std::string> v(3);
  EXPECT_EQ(v.size(), 3u);
  for (const std::string& s : v) EXPECT_TRUE(s.empty());
  v.resize(1);
  EXPECT_EQ(v.size(), 1u);
  v.clear();
  EXPECT_TRUE(v.empty());
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 0u);
}

}  // namespace
}  // namespace kq
