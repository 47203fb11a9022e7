#include "cli/printers/age.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace kq::cli {
namespace {

// "<big><unit>" or "<big><unit><small><small_unit>" when small is non-zero.
std::string TwoUnits(int64_t big, const char* big_unit, int64_t small,
                     const char* small_unit) {
  if (small == 0) {
    return absl::StrCat(big, big_unit);
  }
  return absl::StrCat(big, big_unit, small, small_unit);
}

bool IsUnset(const google::protobuf::Timestamp& timestamp) {
  return timestamp.seconds() == 0 && timestamp.nanos() == 0;
}

}  // namespace

std::string HumanDuration(absl::Duration d) {
  // Truncation toward zero, as Go's int(d.Seconds()) does.
  const int64_t seconds = absl::ToInt64Seconds(d);
  if (seconds < -1) {
    return "<invalid>";
  }
  if (seconds < 0) {
    return "0s";
  }
  if (seconds < 2 * 60) {
    return absl::StrCat(seconds, "s");
  }
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    return TwoUnits(minutes, "m", seconds % 60, "s");
  }
  if (minutes < 3 * 60) {
    return absl::StrCat(minutes, "m");
  }
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    return TwoUnits(hours, "h", minutes % 60, "m");
  }
  if (hours < 48) {
    return absl::StrCat(hours, "h");
  }
  const int64_t days = hours / 24;
  if (hours < 8 * 24) {
    return TwoUnits(days, "d", hours % 24, "h");
  }
  if (days < 2 * 365) {
    return absl::StrCat(days, "d");
  }
  const int64_t years = days / 365;
  if (days < 8 * 365) {
    return TwoUnits(years, "y", days % 365, "d");
  }
  return absl::StrCat(years, "y");
}

absl::Time ToTime(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixSeconds(timestamp.seconds()) +
         absl::Nanoseconds(timestamp.nanos());
}

std::string FormatAge(const google::protobuf::Timestamp& created,
                      absl::Time now) {
  if (IsUnset(created)) {
    return "<unknown>";
  }
  return HumanDuration(now - ToTime(created));
}

std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp) {
  if (IsUnset(timestamp)) {
    return "<unknown>";
  }
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", ToTime(timestamp),
                          absl::UTCTimeZone());
}

}  // namespace kq::cli
