#include "manifest/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kq::manifest::internal {
namespace {

using ::testing::HasSubstr;

struct ParseCase {
  std::string text;
  int64_t want_milli;
  QuantityFormat want_format;
};

TEST(QuantityTest, ParsesKubernetesQuantitiesToMilliUnits) {
  const std::vector<ParseCase> cases = {
      {"1", 1000, QuantityFormat::kDecimal},
      {"16", 16000, QuantityFormat::kDecimal},
      {"500m", 500, QuantityFormat::kDecimal},
      {"1.5", 1500, QuantityFormat::kDecimal},
      {".5", 500, QuantityFormat::kDecimal},
      {"2.", 2000, QuantityFormat::kDecimal},
      {"+3", 3000, QuantityFormat::kDecimal},
      {"-2", -2000, QuantityFormat::kDecimal},
      {"1k", 1000000, QuantityFormat::kDecimal},
      {"1M", 1000000000, QuantityFormat::kDecimal},
      {"1G", 1000000000000, QuantityFormat::kDecimal},
      {"1P", 1000000000000000000, QuantityFormat::kDecimal},
      {"1e3", 1000000, QuantityFormat::kDecimal},
      {"1E3", 1000000, QuantityFormat::kDecimal},
      {"15e-1", 1500, QuantityFormat::kDecimal},
      {"1Ki", 1024000, QuantityFormat::kBinary},
      {"1.5Ki", 1536000, QuantityFormat::kBinary},
      {"32Gi", int64_t{32} * 1024 * 1024 * 1024 * 1000,
       QuantityFormat::kBinary},
      {"200Mi", int64_t{200} * 1024 * 1024 * 1000, QuantityFormat::kBinary},
      // Below a milli-unit rounds up, as Kubernetes' MilliValue does.
      {"1n", 1, QuantityFormat::kDecimal},
      {"1500u", 2, QuantityFormat::kDecimal},
      {"0.0001", 1, QuantityFormat::kDecimal},
      // Zero has no format: it does not decide how a sum prints.
      {"0", 0, QuantityFormat::kNone},
      {"0Gi", 0, QuantityFormat::kNone},
      {"1.000000000000000000000000000000", 1000, QuantityFormat::kDecimal},
  };
  for (const ParseCase& tc : cases) {
    SCOPED_TRACE(tc.text);
    absl::StatusOr<MilliQuantity> got = ParseQuantity(tc.text);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->milli, tc.want_milli);
    EXPECT_EQ(got->format, tc.want_format);
  }
}

TEST(QuantityTest, RejectsWhatIsNotAQuantity) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"abc", "no digits"},
      {"Gi", "no digits"},
      {"1Gb", "unknown suffix \"Gb\""},
      {"1.2.3", "unknown suffix \".3\""},
      {"1e", "unknown suffix \"e\""},
      {"1ex", "bad exponent"},
      {"1 Gi", "unknown suffix \" Gi\""},
      {"1E", "too large"},
      {"10Ei", "too large"},
      {"9e30", "too large"},
      {"123456789012345678901", "too many significant digits"},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    absl::StatusOr<MilliQuantity> got = ParseQuantity(text);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(want));
  }
}

TEST(QuantityTest, FormatsCanonically) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"16", "16"},        {"1500m", "1500m"},   {"1.5", "1500m"},
      {"32Gi", "32Gi"},    {"1024Mi", "1Gi"},    {"1536Mi", "1536Mi"},
      {"1.5Gi", "1536Mi"}, {"1000", "1k"},       {"1e3", "1k"},
      {"1500", "1500"},    {"2000000", "2M"},    {"0", "0"},
      {"-500m", "-500m"},  {"1000Ki", "1000Ki"}, {"1025", "1025"},
      {"100m", "100m"},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    absl::StatusOr<MilliQuantity> parsed = ParseQuantity(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(FormatQuantity(*parsed), want);
  }
}

TEST(QuantityTest, FormatsBinaryValuesThatAreNotWholeUnitsAsDecimalMilli) {
  EXPECT_EQ(FormatQuantity({.milli = 1500, .format = QuantityFormat::kBinary}),
            "1500m");
  EXPECT_EQ(FormatQuantity({.milli = std::numeric_limits<int64_t>::min(),
                            .format = QuantityFormat::kDecimal}),
            "-9223372036854775808m");
}

TEST(QuantityTest, SumsKeepBinaryOnlyWhenEveryAddendIsBinary) {
  auto sum = [](const std::string& a, const std::string& b) {
    absl::StatusOr<MilliQuantity> x = ParseQuantity(a);
    absl::StatusOr<MilliQuantity> y = ParseQuantity(b);
    EXPECT_TRUE(x.ok() && y.ok());
    absl::StatusOr<MilliQuantity> s = AddQuantities(*x, *y);
    EXPECT_TRUE(s.ok()) << s.status();
    return FormatQuantity(*s);
  };
  EXPECT_EQ(sum("8", "8"), "16");
  EXPECT_EQ(sum("500m", "1"), "1500m");
  EXPECT_EQ(sum("32Gi", "32Gi"), "64Gi");
  EXPECT_EQ(sum("1Gi", "1G"), "2073741824");
  EXPECT_EQ(sum("0", "1Gi"), "1Gi");
  EXPECT_EQ(sum("512Mi", "512Mi"), "1Gi");
}

TEST(QuantityTest, AddReportsOverflow) {
  const MilliQuantity big{.milli = std::numeric_limits<int64_t>::max(),
                          .format = QuantityFormat::kDecimal};
  absl::StatusOr<MilliQuantity> sum =
      AddQuantities(big, {.milli = 1, .format = QuantityFormat::kDecimal});
  ASSERT_FALSE(sum.ok());
  EXPECT_THAT(sum.status().message(), HasSubstr("too large"));
}

TEST(QuantityTest, MaxPicksTheLargerValue) {
  const MilliQuantity a{.milli = 1000, .format = QuantityFormat::kDecimal};
  const MilliQuantity b{.milli = 2000, .format = QuantityFormat::kBinary};
  EXPECT_EQ(MaxQuantity(a, b).milli, 2000);
  EXPECT_EQ(MaxQuantity(b, a).format, QuantityFormat::kBinary);
}

}  // namespace
}  // namespace kq::manifest::internal
