#pragma once

// Flavor assignment, as Kueue's pkg/scheduler/flavorassigner/flavorassigner.go
// does it for quota (no TAS, DRA, workload slices or concurrent admission):
// for each pod set and each resource group it requests, scan the
// ClusterQueue's flavors in order (resuming after the last tried flavor),
// filter them by taints and node affinity, rate each one by quota
// (fit / preempt / no fit and how far up the cohort tree it must borrow),
// and pick by the ClusterQueue's flavorFungibility. Pure: reads the quota
// tree, writes nothing; preemption is only simulated through an oracle.
//
// Example:
//   NoPreemptionOracle oracle;
//   FlavorAssigner assigner(workload, *cq, flavors, oracle);
//   Assignment assignment = assigner.Assign();
//   if (assignment.RepresentativeMode() == AssignmentMode::kFit) {
//     Admission admission = assignment.ToAdmission(cq->name());
//   }

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/types/span.h"

#include "server/cache/cache.h"
#include "server/core/conditions.h"
#include "server/core/config.h"
#include "server/core/objects.h"

namespace kq::scheduler {

// The QuotaReserved=False reasons the flavor assigner produces
// (NoMatchingFlavor, ExceedsMaxQuota, WaitingForQuota) are
// core/conditions.h's.

// Kueue's FlavorAssignmentMode: whether a flavor can be assigned now or what
// has to happen first. Ordered from least to most preferred; a pod set's
// mode is the worst of its resources', a workload's the worst of its pod
// sets'.
enum class AssignmentMode {
  // Not enough quota even with preemption, or preemption is needed while
  // borrowing and the policy forbids it.
  kNoFit = 0,
  // The quota allows it, but only after preempting other workloads (whether
  // candidates exist is decided later).
  kPreempt = 1,
  // Fits, but must wait for preemptions issued this cycle to finish. Only
  // produced by the preemption-overlap recomputation, which kq does not
  // have yet.
  kDeferredFit = 2,
  // Enough unused quota now, possibly by borrowing.
  kFit = 3,
};

// "NoFit", "Preempt", "DeferredFit", "Fit".
const char* AssignmentModeName(AssignmentMode mode);
inline std::ostream& operator<<(std::ostream& os, AssignmentMode mode) {
  return os << AssignmentModeName(mode);
}

// What a preemption simulation found (Kueue's
// preemptioncommon.PreemptionPossibility).
enum class PreemptionPossibility {
  // Preemption would be needed but nothing may be preempted.
  kNoCandidates = 0,
  // Some candidate is in the preemptor's own ClusterQueue.
  kPreempt = 1,
  // Every candidate is in another ClusterQueue of the cohort (reclamation).
  kReclaim = 2,
};
const char* PreemptionPossibilityName(PreemptionPossibility possibility);

// The flavor assigner's internal rating of one flavor for one resource
// (Kueue's preemptionMode). Ordered from worst to best.
// kNoPreemptionCandidates, kPreempt and kReclaim all surface as
// AssignmentMode::kPreempt.
enum class PreemptionMode {
  kNoFit = 0,
  kNoPreemptionCandidates = 1,
  kPreempt = 2,
  kReclaim = 3,
  kFit = 4,
};

// Kueue's granularMode: a preemption mode and the borrowing level (0: the
// ClusterQueue's own nominal quota suffices; higher: the height of the
// lowest cohort subtree whose quota covers it).
struct GranularMode {
  PreemptionMode preemption_mode = PreemptionMode::kNoFit;
  int borrowing_level = INT_MAX;
  friend bool operator==(const GranularMode&, const GranularMode&) = default;
};

// Whether `a` is strictly better than `b` under the ClusterQueue's flavor
// fungibility (Kueue's isPreferred): no-fit is worst, a mode without
// preemption candidates is next; then PreemptionOverBorrowing compares the
// borrowing level first and the preemption mode second, anything else
// (BorrowingOverPreemption, unset) the other way round.
bool IsPreferred(const GranularMode& a, const GranularMode& b,
                 const FlavorFungibility& fungibility);

// Whether the flavor scan goes on after a flavor rated `mode` (Kueue's
// shouldTryNextFlavor): always after no-fit or no candidates, after a
// preempting mode when whenCanPreempt is TryNextFlavor, after borrowing when
// whenCanBorrow is TryNextFlavor.
bool ShouldTryNextFlavor(const GranularMode& mode,
                         const FlavorFungibility& fungibility);

// The outcome of a preemption simulation.
struct PreemptionSimulation {
  PreemptionPossibility possibility = PreemptionPossibility::kNoCandidates;
  // Borrowing level once the candidates are gone (or now, without any).
  int borrowing_level = 0;
};

struct Assignment;

// A workload to evict so that a preemptor fits (Kueue's preemption.Target).
// Does not own the workload. Value type.
struct PreemptionTarget {
  const Workload* workload = nullptr;
  // Why: the Preempted condition's reason (InClusterQueue,
  // InCohortReclamation, InCohortReclaimWhileBorrowing, ...).
  std::string reason;
  // The ClusterQueue whose quota the workload holds.
  std::string cluster_queue;
  friend bool operator==(const PreemptionTarget&,
                         const PreemptionTarget&) = default;
};

// Answers "could preemption make `quantity` of `fr` available to `workload`
// in `cq`?" for the flavor assigner (Kueue's preemptionOracle interface),
// and finds the workloads to preempt for a whole assignment for the
// scheduler (the Kueue Preemptor's GetTargets, which the oracle wraps).
// The scheduler depends only on this interface; the classical search lives
// in kq::preemption (Oracle). Implementations must not
// change the quota tree as seen after a call. Thread-compatible.
class PreemptionOracle {
 public:
  virtual ~PreemptionOracle() = default;

  virtual PreemptionSimulation SimulatePreemption(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const cache::FlavorResource& fr, int64_t quantity) const = 0;

  // Kueue's Preemptor.GetTargets: the workloads to evict so that
  // `workload`, with the Preempt-mode `assignment` in `cq`, fits; empty
  // when no set of candidates is enough.
  virtual std::vector<PreemptionTarget> GetTargets(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const Assignment& assignment) const = 0;
};

// The oracle for a scheduler that cannot preempt: never any candidates,
// with the borrowing level of the quota tree as it is (what Kueue's oracle
// returns when its search finds no targets). Stateless, thread-safe.
class NoPreemptionOracle final : public PreemptionOracle {
 public:
  PreemptionSimulation SimulatePreemption(const cache::ClusterQueueSnapshot& cq,
                                          const Workload& workload,
                                          const cache::FlavorResource& fr,
                                          int64_t quantity) const override;
  // Always empty.
  std::vector<PreemptionTarget> GetTargets(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const Assignment& assignment) const override;
};

// The flavor-scan bookmark of a workload (Kueue's
// AssignmentClusterQueueState). Every assignment records one; the caller
// keeps the latest per workload and passes it back to the next assignment of
// that workload, which then resumes each scan after the flavor it last tried
// instead of restarting from the first. The caller must drop it when the
// workload's pod sets or requests change (Kueue compares scheduling hashes)
// and may use LastAssignmentOutdated() for the rest. Value type.
struct LastAssignment {
  // Per pod set (by index in the workload), per resource that got a flavor:
  // the index of the last flavor tried in its resource group, or -1 when
  // the scan reached the group's last flavor (start over next time).
  std::vector<std::map<std::string, int>> last_tried_flavor_idx;
  // Kueue's AllocatableResourceGeneration of the ClusterQueue when this was
  // recorded (bumped whenever quota may have been freed or changed).
  int64_t cluster_queue_generation = 0;
  // The scheduling cycle that recorded it.
  int64_t scheduling_cycle = 0;

  // Where the scan of `resource`'s group for pod set `pod_set` starts:
  // after the recorded index, or 0 without one.
  int NextFlavorToTry(size_t pod_set, const std::string& resource) const;
  // Whether some scan stopped before its group's last flavor (Kueue
  // requeues such a BestEffortFIFO workload immediately).
  bool PendingFlavors() const;

  friend bool operator==(const LastAssignment&,
                         const LastAssignment&) = default;
};

// Whether `last` no longer describes the state and the scan must start over
// (Kueue's lastAssignmentOutdated with FlavorFungibilityPreserveScanProgress
// on): a bookmark from this or the previous cycle is kept; an older one is
// dropped once the ClusterQueue's generation moved past it.
bool LastAssignmentOutdated(const LastAssignment& last,
                            int64_t cluster_queue_generation,
                            int64_t scheduling_cycle);

// The flavor chosen for one resource of one pod set.
struct FlavorAssignment {
  std::string name;
  AssignmentMode mode = AssignmentMode::kNoFit;
  // The scan bookmark for this resource: index of the last flavor tried, or
  // -1 when the scan reached the last flavor of the group.
  int tried_flavor_idx = 0;
  // Borrowing level of this resource on this flavor.
  int borrow = 0;
  friend bool operator==(const FlavorAssignment&,
                         const FlavorAssignment&) = default;
};

// One flavor considered for a pod set, with its worst outcome across the
// resources of its group (Kueue's FlavorAssignmentAttempt). Used to explain
// NoFit (NoFitReason) and in events.
struct FlavorAssignmentAttempt {
  std::string flavor;
  AssignmentMode mode = AssignmentMode::kNoFit;
  int borrow = 0;
  // Set when the flavor needed preemption.
  std::optional<PreemptionPossibility> preemption_possibility;
  // Why it was not a plain fit, sorted.
  std::vector<std::string> reasons;
  // NoMatchingFlavor, ExceedsMaxQuota, WaitingForQuota or empty.
  std::string no_fit_reason;
  friend bool operator==(const FlavorAssignmentAttempt&,
                         const FlavorAssignmentAttempt&) = default;
};

// The flavors of one pod set and why it cannot be admitted as is (Kueue's
// PodSetAssignment; `reasons`/`error` are its Status).
struct PodSetAssignmentResult {
  std::string name;
  // Resource -> flavor, for every resource that got one. Empty when the pod
  // set (or the pod set group it belongs to) could not get flavors.
  std::map<std::string, FlavorAssignment> flavors;
  // Why flavors are not a plain fit (unsorted; Message() sorts).
  std::vector<std::string> reasons;
  // Set when the pod set could not be evaluated (malformed node affinity).
  std::string error;
  // Totals for `count` pods, including `pods` when the ClusterQueue covers
  // it and zero requests.
  ResourceList requests;
  int32_t count = 0;
  // Flavors considered, sorted by name.
  std::vector<FlavorAssignmentAttempt> attempts;

  // Kueue's Status.IsFit / IsError.
  bool IsFit() const { return error.empty() && reasons.empty(); }
  bool IsError() const { return !error.empty(); }
  // The worst mode of its flavors: kFit when the status is a fit, kNoFit on
  // an error or without flavors.
  AssignmentMode RepresentativeMode() const;
  // Kueue's Status.Message(): the error, or the reasons sorted and joined
  // with ", ".
  std::string StatusMessage() const;
};

// The result of assigning flavors to a workload in one ClusterQueue (Kueue's
// flavorassigner.Assignment).
struct Assignment {
  // In the workload's order; assignment stops at the first pod set that
  // cannot get flavors, so later pod sets may be missing.
  std::vector<PodSetAssignmentResult> pod_sets;
  // The highest borrowing level of any assigned flavor (0: no borrowing).
  int borrowing = 0;
  // The bookmark to keep for the next assignment of this workload.
  LastAssignment last_state;
  // Quota the assignment takes, in Kueue's integer units, including zero
  // requests that got a flavor.
  cache::FlavorResourceQuantities usage;
  // With mode kNoFit, the QuotaReserved=False reason (Kueue's
  // resolveNoFitReason): per pod set the least severe reason among a
  // group's alternative flavors, then the most severe across groups and pod
  // sets. May be empty (Kueue only counts flavors that were rated NoFit).
  std::string no_fit_reason;

  // The worst mode of the pod sets; kNoFit without pod sets.
  AssignmentMode RepresentativeMode() const;
  // Whether admitting needs quota above nominal somewhere.
  bool RequiresBorrowing() const { return borrowing > 0; }
  // Kueue's Assignment.Message(): "couldn't assign flavors to pod set main:
  // <sorted reasons>" for each pod set that is not a fit, joined with "; ",
  // or "failed to assign flavors to pod set X: <error>" alone.
  std::string Message() const;
  // Message(), computed once: a memoised assignment is reported for every
  // head that shares it. Not for an assignment that is still changing.
  const std::string& CachedMessage() const;
  // The admission to record (Kueue's ToAPI): per pod set its flavors, the
  // usage of the resources that got a flavor, and its count.
  Admission ToAdmission(const std::string& cluster_queue) const;

 private:
  mutable std::optional<std::string> message_;
};

// Settings of one flavor assignment that are not part of the workload or
// the ClusterQueue.
struct FlavorAssignerOptions {
  // Kueue's fair sharing: lets a ClusterQueue whose reclaimWithinCohort is
  // not Never try preemption while borrowing.
  bool enable_fair_sharing = false;
  // Recorded in Assignment::last_state.
  int64_t scheduling_cycle = 0;
  int64_t cluster_queue_generation = 0;
  // Exclusions, transformations and the quota check strategy of Kueue's
  // Configuration; null: requests as written, undeclared resources block.
  // Must outlive the assigner.
  const ResourceConfig* resources = nullptr;
  // Kueue's ReclaimablePods gate (beta, on): a pod set's requests are for
  // its pods left after reclaim (PodSetsCountsAfterReclaim). kq runs with
  // it on; off is for Kueue's test tables.
  bool reclaimable_pods = true;
};

// Assigns flavors to the pod sets of one workload in one ClusterQueue
// (Kueue's FlavorAssigner). Holds references to its inputs, which must
// outlive it and not change while Assign() runs. Thread-compatible.
class FlavorAssigner {
 public:
  // `last_assignment` may be null (scan every group from its first flavor).
  FlavorAssigner(const Workload& workload,
                 const cache::ClusterQueueSnapshot& cq,
                 const std::map<std::string, ResourceFlavor>& flavors,
                 const PreemptionOracle& oracle,
                 const LastAssignment* last_assignment = nullptr,
                 FlavorAssignerOptions options = {});

  // Assigns flavors to every pod set. `counts`, when not empty, gives the
  // pod count of each pod set (partial admission) and must have one entry
  // per pod set; requests are scaled to it.
  Assignment Assign(absl::Span<const int32_t> counts = {}) const;

 private:
  struct FlavorSearch;
  struct QuotaFit;

  // Kueue's findFlavorForPodSets: scans the flavors of `resource`'s group
  // (from the bookmark on) for the requests of that group, with the usage
  // already assigned to earlier pod sets.
  FlavorSearch FindFlavorForPodSet(
      size_t pod_set_index, const std::map<std::string, int64_t>& requests,
      const std::string& resource,
      const cache::FlavorResourceQuantities& assigned_usage) const;
  // Taints and node affinity; returns reasons (and `error`) when the flavor
  // does not match.
  std::vector<std::string> CheckFlavorForPodSet(const std::string& flavor,
                                                const PodSet& pod_set,
                                                std::string* error) const;
  // Kueue's fitsResourceQuota: rates `request` more of `fr` on top of
  // `assumed` (earlier pod sets) against the quota tree.
  QuotaFit FitsResourceQuota(const cache::FlavorResource& fr, int64_t assumed,
                             int64_t request, int64_t nominal) const;
  // borrowWithinCohort allows it, or fair sharing with reclaimWithinCohort
  // other than Never.
  bool CanPreemptWhileBorrowing() const;

  const Workload& workload_;
  const cache::ClusterQueueSnapshot& cq_;
  const std::map<std::string, ResourceFlavor>& flavors_;
  const PreemptionOracle& oracle_;
  const LastAssignment* last_assignment_;
  FlavorAssignerOptions options_;
};

// Kueue's CanBePartiallyAdmitted: some pod set has count > minCount.
bool CanBePartiallyAdmitted(const Workload& workload);

}  // namespace kq::scheduler
