#pragma once

namespace kq {

// Process-wide settings for the main() of each kq binary (kqd, kq, kq-bench,
// kq-k8s-shim), called first. Libraries and tests never call it.
//
// Turns off abseil's mutex deadlock detection. Debian builds abseil without
// NDEBUG, which leaves the detection on: every absl::Mutex lock, gRPC's
// included, then updates a lock graph behind one global lock, 2.5x the cost
// of an uncontended lock. Tests keep it on, where a lock-order inversion
// aborts the test that made it.
void InitBinary();

}  // namespace kq
