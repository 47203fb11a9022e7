#pragma once

// Helpers shared by the files that define AdmissionState, which are split by
// Kueue's concepts; not part of the admission library's interface.

#include <string>

#include "server/cache/cache.h"
#include "server/core/objects.h"

namespace kq::admission {

// Adds (or removes) a workload's usage to its ClusterQueue's admitted
// usage (status.flavorsUsage).
void AdjustAdmittedUsage(cache::ClusterQueueSnapshot& cq,
                         const cache::FlavorResourceQuantities& usage,
                         bool add);

// Whether `wl` was evicted by an admission check and waits out its backoff
// (Requeued=False, reason AdmissionCheck) before it is queued again.
bool WaitsForCheckBackoff(const Workload& wl);

// Kueue's schedulerSetReasons (workload_controller.go): the QuotaReserved=False
// reasons the scheduler writes and the workload controller keeps, with their
// messages, until the next scheduling cycle: WaitingForQuota,
// NoMatchingFlavor, ExceedsMaxQuota, TopologyPlacementFailed,
// WaitingForPreemptedWorkloads, WaitingForPodsReady and PendingEvaluation.
// Not Suspended or Misconfigured, which the controller re-derives from the
// queues at every reconcile.
bool IsSchedulerSetReason(const std::string& reason);

}  // namespace kq::admission
