#pragma once

// kubectl's AGE column.

#include <string>

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace kq::cli {

// Renders a duration the way kubectl's AGE column does
// (k8s.io/apimachinery duration.HumanDuration): exact seconds under 2
// minutes ("45s"); minutes and seconds under 10 minutes ("5m7s", "5m");
// minutes under 3 hours ("95m"); hours and minutes under 8 hours ("7h5m");
// hours under 2 days ("30h"); days and hours under 8 days ("3d4h"); days
// under 2 years ("200d"); years and days under 8 years ("3y45d"); then years.
// A zero-valued second unit is dropped ("3d", not "3d0h"). Negative
// durations of up to one second (clock skew) are "0s"; more is "<invalid>".
std::string HumanDuration(absl::Duration d);

// The AGE of an object created at `created`, seen at `now`; "<unknown>" when
// the timestamp is unset, as kubectl prints it.
std::string FormatAge(const google::protobuf::Timestamp& created,
                      absl::Time now);

// Converts a protobuf timestamp; an unset one (0) maps to the Unix epoch.
absl::Time ToTime(const google::protobuf::Timestamp& timestamp);

// "2023-11-14T22:13:20Z" (RFC 3339, UTC), or "<unknown>" when unset.
std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp);

}  // namespace kq::cli
