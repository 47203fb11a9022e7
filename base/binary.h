#pragma once

namespace kq {

// The environment variable that keeps abseil's deadlock detection on in a
// kq binary (any value): the tests that start kqd set it.
inline constexpr char kMutexDeadlockDetectionEnv[] =
    "KQ_MUTEX_DEADLOCK_DETECTION";

// Process-wide settings for the main() of each kq binary (kqd, kq, kq-bench,
// kq-k8s-shim), called first. Libraries never call it.
//
// Turns off abseil's mutex deadlock detection unless
// kMutexDeadlockDetectionEnv is set. Debian builds abseil without NDEBUG,
// which leaves the detection on: every absl::Mutex lock, gRPC's included,
// then updates a lock graph behind one global lock, 2.5x the cost of an
// uncontended lock. Unit tests, and the tests that start kqd with the
// variable set, keep it: there a lock-order inversion aborts the process
// that made it.
void InitBinary();

}  // namespace kq
