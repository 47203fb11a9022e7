#pragma once

// The log lines of a workload's life: what each committed batch did to
// each workload, with the workload, its LocalQueue and its ClusterQueue as
// fields (logging::With), so that a JSON log can be searched by them.

#include "server/engine/batch_observer.h"

namespace kq::engine {

// Logs the transitions of the workloads in `batch`: a workload is
// submitted (debug); reserves quota and is admitted (debug); is evicted or
// preempted (info, with the condition's reason and message: these stop a
// running job, and whoever owns it will ask why); finishes (debug, with
// Succeeded or Failed). A transition is a condition of that type that
// turned True at the batch's time, which is the time the batch stamps its
// changes with. Only the batch's end state is seen, so an eviction that the
// same batch undid (a workload preempted by an operator and admitted again
// at once, as nothing held its quota) shows as the admission alone. Called
// on the engine thread after the commit; costs one level check when
// nothing is logged.
void LogWorkloadTransitions(const CommittedBatch& batch);

// The log as the engine's observer of committed batches.
class WorkloadLog final : public BatchObserver {
 public:
  void OnCommitted(const CommittedBatch& batch) override {
    LogWorkloadTransitions(batch);
  }
};

}  // namespace kq::engine
