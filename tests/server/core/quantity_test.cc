#include "server/core/quantity.h"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kq {
namespace {

struct ParseCase {
  std::string text;
  int64_t milli;
};

TEST(QuantityTest, ParsesKubernetesGrammarExactly) {
  const std::vector<ParseCase> cases = {
      {"0", 0},
      {"1", 1'000},
      {"16", 16'000},
      {"+3", 3'000},
      {"-3", -3'000},
      {"500m", 500},
      {"1500m", 1'500},
      {"1.5", 1'500},
      {".5", 500},
      {"5.", 5'000},
      {"0.001", 1},
      {"1k", 1'000'000},
      {"1M", 1'000'000'000},
      {"2G", 2'000'000'000'000},
      {"1Ki", 1'024'000},
      {"1Mi", 1'048'576'000},
      {"32Gi", int64_t{32} * 1024 * 1024 * 1024 * 1000},
      {"256Gi", int64_t{256} * 1024 * 1024 * 1024 * 1000},
      {"1.5Gi", int64_t{3} * 512 * 1024 * 1024 * 1000},
      {"1e3", 1'000'000},
      {"1E3", 1'000'000},
      {"1e-3", 1},
      {"100u", 1},  // 0.0001 rounds up to one milli-unit
      {"1n", 1},    // as Kubernetes' MilliValue() rounds up
      {"0n", 0},
      {"2500u", 3},  // 2.5 milli rounds up
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<Quantity> q = Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << q.status();
    EXPECT_EQ(q->milli(), c.milli);
  }
}

TEST(QuantityTest, RefusesMalformed) {
  for (const char* text : {"", "abc", "1x", "1.2.3", "Gi", "--1", "1 Gi", "1e",
                           "1eX", "1Gib", "m", "1e99999"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<Quantity> q = Quantity::Parse(text);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find("is malformed"), std::string::npos);
  }
}

TEST(QuantityTest, SaturatesBeyondInt64) {
  EXPECT_EQ(*Quantity::Parse("10Ei"), Quantity::Max());
  EXPECT_EQ(*Quantity::Parse("1e30"), Quantity::Max());
  EXPECT_EQ(Quantity::Max().Value(), std::numeric_limits<int64_t>::max());
}

TEST(QuantityTest, ValueRoundsUp) {
  EXPECT_EQ(Quantity::FromMilli(1'500).Value(), 2);
  EXPECT_EQ(Quantity::FromMilli(2'000).Value(), 2);
  EXPECT_EQ(Quantity::FromMilli(1).Value(), 1);
  EXPECT_EQ(Quantity::FromMilli(0).Value(), 0);
}

TEST(QuantityTest, CanonicalStrings) {
  EXPECT_EQ(Quantity::FromMilli(500).ToString(), "500m");
  EXPECT_EQ(Quantity::FromUnits(16).ToString(), "16");
  EXPECT_EQ(Quantity::FromUnits(2000).ToString(), "2k");
  EXPECT_EQ(Quantity::FromUnits(0).ToString(), "0");
  EXPECT_EQ(Quantity::Parse("256Gi")->ToString(/*binary=*/true), "256Gi");
  EXPECT_EQ(Quantity::Parse("1536Mi")->ToString(true), "1536Mi");
  EXPECT_EQ(Quantity::FromUnits(1500).ToString(true), "1500");
}

TEST(QuantityTest, ResourceAmountsAreKueues) {
  // CPU in milli-units; everything else in whole units rounded up.
  EXPECT_EQ(ResourceAmount("cpu", *Quantity::Parse("1.5")), 1'500);
  EXPECT_EQ(ResourceAmount("memory", *Quantity::Parse("1.5")), 2);
  EXPECT_EQ(ResourceAmount("memory", *Quantity::Parse("1Gi")), 1 << 30);
  EXPECT_EQ(ResourceAmount("nvidia.com/gpu", *Quantity::Parse("8")), 8);
  EXPECT_EQ(QuantityFromAmount("cpu", 1'500), Quantity::FromMilli(1'500));
  EXPECT_EQ(QuantityFromAmount("memory", 2), Quantity::FromUnits(2));
  EXPECT_EQ(FormatAmount("memory", int64_t{256} << 30), "256Gi");
  EXPECT_EQ(FormatAmount("cpu", 64'000), "64");
  EXPECT_EQ(FormatAmount("nvidia.com/gpu", 8), "8");
  EXPECT_EQ(FormatAmount("hugepages-2Mi", 2 << 20), "2Mi");
}

TEST(QuantityTest, SaturatingArithmeticIsKueuesAmount) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(SaturatingAdd(kMax, 5), kMax);
  EXPECT_EQ(SaturatingAdd(kMax, -5), kMax);  // unlimited stays unlimited
  EXPECT_EQ(SaturatingSub(5, kMax), kMin);
  EXPECT_EQ(SaturatingSub(kMax, kMax), 0);
  EXPECT_EQ(SaturatingSub(kMax, 5), kMax);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 5), kMax);
  EXPECT_EQ(SaturatingMul(kMax / 2, 3), kMax);
  EXPECT_EQ(SaturatingAdd(3, 4), 7);
}

}  // namespace
}  // namespace kq
