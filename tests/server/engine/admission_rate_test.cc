#include "server/engine/admission_rate.h"

#include <optional>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kq::engine {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

TEST(AdmissionRateTest, NothingRecordedMeansNoRateAndNoEstimate) {
  AdmissionRate rate;
  EXPECT_EQ(rate.PerMinute("cq", kStart), 0);
  EXPECT_EQ(rate.EstimatedStart("cq", 3, kStart), std::nullopt);
}

TEST(AdmissionRateTest, RateIsAdmissionsOverTheWindowInMinutes) {
  AdmissionRate rate(absl::Minutes(10));
  for (int i = 0; i < 20; ++i) rate.Record("cq", kStart + absl::Seconds(i));
  rate.Record("other", kStart);
  EXPECT_DOUBLE_EQ(rate.PerMinute("cq", kStart + absl::Minutes(1)), 2.0);
  EXPECT_DOUBLE_EQ(rate.PerMinute("other", kStart + absl::Minutes(1)), 0.1);
  // Two a minute: the head waits half a minute, the third in line 1.5.
  EXPECT_EQ(rate.EstimatedStart("cq", 0, kStart + absl::Minutes(1)),
            kStart + absl::Minutes(1.5));
  EXPECT_EQ(rate.EstimatedStart("cq", 2, kStart + absl::Minutes(1)),
            kStart + absl::Minutes(2.5));
}

TEST(AdmissionRateTest, AdmissionsOlderThanTheWindowStopCounting) {
  AdmissionRate rate(absl::Minutes(15));
  rate.Record("cq", kStart);
  rate.Record("cq", kStart + absl::Minutes(10));
  // The window's first instant still counts; a nanosecond later it does not.
  EXPECT_DOUBLE_EQ(rate.PerMinute("cq", kStart + absl::Minutes(15)), 2 / 15.0);
  EXPECT_DOUBLE_EQ(
      rate.PerMinute("cq", kStart + absl::Minutes(15) + absl::Nanoseconds(1)),
      1 / 15.0);
  // Forget drops them for good, and a queue with none left altogether.
  rate.Forget(kStart + absl::Minutes(30));
  EXPECT_EQ(rate.PerMinute("cq", kStart + absl::Minutes(10)), 0);
  EXPECT_EQ(rate.EstimatedStart("cq", 0, kStart + absl::Minutes(30)),
            std::nullopt);
}

}  // namespace
}  // namespace kq::engine
