#include "server/common/binary.h"

#include "absl/synchronization/mutex.h"

namespace kq {

void InitBinary() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace kq
