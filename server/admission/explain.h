#pragma once

// Why a workload is where it is (QueueService.Explain): its state, the
// condition that decides it, its place in its ClusterQueue and LocalQueue
// and, for a pending workload, a fresh flavor assignment against the live
// quota tree — per pod set and flavor what was tried, which resources were
// short and which workloads would be preempted. Pure: no I/O, no threads,
// no clock reads; the state is left exactly as it was.
//
// Example:
//   absl::StatusOr<Explanation> why = Explain(state, {"team-a", "job-1"},
//                                             now);
//   for (const FlavorAttemptView& at : why->attempts) ...

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/admission/state.h"
#include "server/core/objects.h"
#include "server/core/quantity.h"

namespace kq::admission {

// One resource of a flavor that the pod set's request does not fit in
// (ExplainResponse.ResourceShortage).
struct ResourceShortage {
  std::string resource;
  // The pod set's total request (all its pods), after the Configuration's
  // exclusions and transformations.
  Quantity requested;
  // What the ClusterQueue could use of the flavor-resource now: unused
  // nominal quota plus what it may still borrow from its cohort (Kueue's
  // Available). Earlier pod sets of the same workload count against it,
  // as in the flavor assigner, so `requested` may fit in `available` alone
  // when it does not on top of them.
  Quantity available;
  // From the ClusterQueue spec; 0 when the flavor lists no quota for it.
  Quantity nominal_quota;
  // Absent: unlimited borrowing within the cohort.
  std::optional<Quantity> borrowing_limit;

  friend bool operator==(const ResourceShortage&,
                         const ResourceShortage&) = default;
};

// One flavor the flavor assigner considered for one pod set (Kueue's
// FlavorAssignmentAttempt), with the resources that were short.
struct FlavorAttemptView {
  std::string pod_set;
  // Empty for a pod set that could not be rated on any flavor (e.g. a
  // resource the ClusterQueue does not cover); `reasons` then say why.
  std::string flavor;
  // "Fit", "Preempt" or "NoFit" (scheduler::AssignmentModeName). A Fit
  // attempt has no reasons: the flavor would take the pod set now.
  std::string mode;
  // Kueue's reasons, sorted ("insufficient unused quota for cpu in flavor
  // default, 2 more needed").
  std::vector<std::string> reasons;
  // Set for flavors rated by quota (not for a taint or node-affinity
  // mismatch): each covered resource whose request does not fit.
  std::vector<ResourceShortage> shortages;

  friend bool operator==(const FlavorAttemptView&,
                         const FlavorAttemptView&) = default;
};

// A workload that would be (or was) preempted (PreemptionVictim).
struct Victim {
  NamespacedName workload;
  // The ClusterQueue whose quota it holds.
  std::string cluster_queue;
  // Kueue's Preempted condition reason: InClusterQueue,
  // InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing.
  std::string reason;

  friend bool operator==(const Victim&, const Victim&) = default;
};

struct Explanation {
  Workload workload;
  // StateName(StateOf(workload)): Pending, QuotaReserved, Admitted,
  // Finished.
  std::string state;
  // The ClusterQueue it is admitted to or would be queued in; empty when
  // its LocalQueue does not exist.
  std::string cluster_queue;
  // The deciding condition (DecidingCondition below); empty when there is
  // none yet.
  std::string reason;
  std::string message;
  // 0-based, while queued (Kueue's visibility API: active and inadmissible
  // together, in queue order). In the LocalQueue: among the queued
  // workloads of the same ClusterQueue with the same namespace and
  // queue_name.
  std::optional<int64_t> position_in_cluster_queue;
  std::optional<int64_t> position_in_local_queue;
  // For an active pending workload whose ClusterQueue exists, is active and
  // admits its namespace: every flavor attempt of a fresh full assignment
  // (no scan bookmark, no partial admission), in pod set order, each pod
  // set's flavors by name. Pod sets after the first one that got no
  // flavors are missing, as in Kueue.
  std::vector<FlavorAttemptView> attempts;
  // When that assignment needs preemption: the workloads the preemptor
  // would evict (Kueue's GetTargets), in the order the search chose them.
  // Empty when nothing can be preempted.
  std::vector<Victim> victims;
};

// The condition that explains a workload's state: Finished for a finished
// workload; Admitted for an admitted one; for one holding quota, Evicted
// while it is being evicted, else Admitted=False (admission checks) or
// QuotaReserved; for a pending one, Evicted when it is deactivated,
// Requeued=False while it waits out a backoff or a stopped queue, else
// QuotaReserved=False. Nullptr when it has none of them.
const Condition* DecidingCondition(const Workload& workload);

// Explains the unfinished workload `key`. NotFound when it is not among
// state.workloads(). Non-const only because the preemption search tries
// removals on the live quota tree (cache_for_search()), which it restores
// before returning.
absl::StatusOr<Explanation> Explain(AdmissionState& state,
                                    const NamespacedName& key, absl::Time now);

}  // namespace kq::admission
