#include "server/core/boxed.h"

#include <optional>
#include <string>
#include <utility>

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

}  // namespace
}  // namespace kq
