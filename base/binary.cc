#include "base/binary.h"

#include <cstdlib>

#include "absl/synchronization/mutex.h"

namespace kq {

void InitBinary() {
  if (std::getenv(kMutexDeadlockDetectionEnv) == nullptr) {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  }
}

}  // namespace kq
