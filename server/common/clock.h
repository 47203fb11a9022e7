#pragma once

#include "absl/time/time.h"

namespace kq {

// A source of the current time. Same shape as absl::Clock, so an abseil
// upgrade is a rename. Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Returns the current time.
  virtual absl::Time TimeNow() = 0;
  // Returns the process-wide real clock (absl::Now()). Never deleted.
  static Clock& Real();
};

}  // namespace kq
