#include "cli/printers/age.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

struct AgeCase {
  absl::Duration age;
  std::string want;
};

TEST(HumanDurationTest, FollowsKubectlAgeRules) {
  const std::vector<AgeCase> cases = {
      {absl::ZeroDuration(), "0s"},
      {absl::Milliseconds(-500), "0s"},  // clock skew tolerated
      {absl::Seconds(-1), "0s"},
      {absl::Seconds(-2), "<invalid>"},
      {absl::Milliseconds(45900), "45s"},  // truncated, not rounded
      {absl::Seconds(119), "119s"},
      {absl::Seconds(120), "2m"},
      {absl::Seconds(125), "2m5s"},
      {absl::Seconds(9 * 60 + 59), "9m59s"},
      {absl::Minutes(10), "10m"},
      {absl::Minutes(10) + absl::Seconds(30), "10m"},
      {absl::Minutes(95), "95m"},
      {absl::Minutes(179), "179m"},
      {absl::Hours(3), "3h"},
      {absl::Hours(3) + absl::Minutes(5), "3h5m"},
      {absl::Hours(7) + absl::Minutes(59), "7h59m"},
      {absl::Hours(8) + absl::Minutes(59), "8h"},
      {absl::Hours(47), "47h"},
      {absl::Hours(48), "2d"},
      {absl::Hours(50), "2d2h"},
      {absl::Hours(8 * 24 + 5), "8d"},
      {absl::Hours(729 * 24), "729d"},
      {absl::Hours(730 * 24), "2y"},
      {absl::Hours(731 * 24), "2y1d"},
      {absl::Hours(8 * 365 * 24 + 24), "8y"},
  };
  for (const AgeCase& tc : cases) {
    SCOPED_TRACE(absl::FormatDuration(tc.age));
    EXPECT_EQ(HumanDuration(tc.age), tc.want);
  }
}

TEST(FormatAgeTest, UsesTheGivenNow) {
  google::protobuf::Timestamp created;
  created.set_seconds(absl::ToUnixSeconds(testing::kNow) - 300);
  EXPECT_EQ(FormatAge(created, testing::kNow), "5m");
  EXPECT_EQ(FormatAge(created, testing::kNow + absl::Hours(1)), "65m");
}

TEST(FormatAgeTest, UnsetTimestampIsUnknown) {
  EXPECT_EQ(FormatAge(google::protobuf::Timestamp(), testing::kNow),
            "<unknown>");
}

TEST(FormatTimestampTest, RendersRfc3339Utc) {
  google::protobuf::Timestamp t;
  t.set_seconds(absl::ToUnixSeconds(testing::kNow));
  EXPECT_EQ(FormatTimestamp(t), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatTimestamp(google::protobuf::Timestamp()), "<unknown>");
}

}  // namespace
}  // namespace kq::cli
