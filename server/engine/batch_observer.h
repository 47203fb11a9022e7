#pragma once

// The engine's one seam after a commit: observers learn what each committed
// batch changed, so that capabilities that follow the state (metrics, the
// dashboard's live stream, federation bookkeeping, the admission rate) live
// in rooms of their own instead of inside the engine's batch.

#include <cstdint>

#include "absl/time/time.h"
#include "absl/types/span.h"

#include "server/store/store.h"

namespace kq::engine {

// One committed batch.
struct CommittedBatch {
  int64_t revision = 0;
  // The batch's time, which its changes were stamped with.
  absl::Time time;
  // Everything stored under `revision`, as watchers receive it: objects
  // created, configured or deleted and workloads added or modified
  // (finished ones too), with their pod templates.
  absl::Span<const store::Event> events;
};

// Called on the engine thread after each commit that stored changes, before
// the batch's callers are answered and its events published. An observer
// must not block and must not call the engine; one that needs to do more
// copies what it needs and hands it to its own thread.
class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  virtual void OnCommitted(const CommittedBatch& batch) = 0;
};

}  // namespace kq::engine
