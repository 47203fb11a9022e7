#pragma once

// The engine's one seam after a commit: observers learn what each committed
// batch changed, so that capabilities that follow the state (metrics, the
// dashboard's live stream, federation bookkeeping, the admission rate) live
// in rooms of their own instead of inside the engine's batch.

#include <cstdint>

#include "absl/time/time.h"
#include "absl/types/span.h"

#include "server/admission/state.h"
#include "server/store/store.h"

namespace kq::engine {

// One scheduling pass of a batch: Kueue's admission attempt.
struct SchedulingPass {
  // Quota reservations it made; Kueue's attempt "success" when > 0.
  int reserved = 0;
  absl::Duration duration;
};

// One committed batch.
struct CommittedBatch {
  // The state as committed, readable during the call only.
  const admission::AdmissionState* state = nullptr;
  int64_t revision = 0;
  // The batch's time, which its changes were stamped with.
  absl::Time time;
  // Everything stored under `revision`, as watchers receive it: objects
  // created, configured or deleted and workloads added or modified
  // (finished ones too), with their pod templates.
  absl::Span<const store::Event> events;
  absl::Span<const SchedulingPass> passes;
  // Commands the batch applied.
  size_t commands = 0;
  // From the batch's start to its commit's end, and the store's commit
  // alone (zero when nothing was stored).
  absl::Duration duration;
  absl::Duration commit_duration;
};

// Called on the engine thread after each batch that stored changes or ran
// scheduling passes (then `events` may be empty), before the batch's callers
// are answered and its events published; not after a failed commit. An observer
// must not block and must not call the engine; one that needs to do more
// copies what it needs and hands it to its own thread.
class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  virtual void OnCommitted(const CommittedBatch& batch) = 0;
};

}  // namespace kq::engine
