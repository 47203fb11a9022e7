#include "server/common/clock.h"

#include "absl/time/clock.h"

namespace kq {
namespace {

class RealClock : public Clock {
 public:
  absl::Time TimeNow() override { return absl::Now(); }
};

}  // namespace

Clock& Clock::Real() {
  static RealClock* clock = new RealClock();
  return *clock;
}

}  // namespace kq
