#pragma once

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "server/common/clock.h"

namespace kq::testing {

// A clock that moves only when told, starting at a fixed instant (never
// "now"), like abseil's SimulatedClock. Thread-safe.
class FakeClock : public Clock {
 public:
  static constexpr int64_t kStartSeconds = 1'700'000'000;

  absl::Time TimeNow() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void SetTime(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::FromUnixSeconds(kStartSeconds);
};

}  // namespace kq::testing
