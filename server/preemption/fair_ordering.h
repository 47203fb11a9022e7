#pragma once

// The order in which fair-sharing preemption visits ClusterQueues for
// victims (Kueue's pkg/scheduler/preemption/fairsharing: ordering.go,
// target.go, least_common_ancestor.go), and the two shares a fair-sharing
// strategy compares.
//
// From the root of the preemptor's cohort tree, the ordering descends into
// the child with the highest dominant resource share (DRS) until it reaches
// a ClusterQueue; that is the next target. A ClusterQueue is pruned once it
// has no candidates left or (unless it is the preemptor's) once it does not
// borrow; a Cohort once it does not borrow and is not an ancestor of the
// preemptor, or once all its children are pruned. Iteration ends when the
// root is pruned. The same ClusterQueue may come back many times in a row;
// between two calls of Next() the caller must PopWorkload() or DropQueue()
// so that the iteration progresses. Shares are read from the live quota
// tree, so removals the caller makes between calls reorder the targets.
//
// Example:
//   TargetClusterQueueOrdering ordering(preemptor_cq, sorted_candidates,
//                                       now, features);
//   while (cache::ClusterQueueSnapshot* target = ordering.Next()) {
//     Candidate victim = ordering.PopWorkload(*target);
//     ...
//   }

#include <deque>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"

#include "server/cache/cache.h"
#include "server/cache/fair_sharing.h"
#include "server/preemption/ordering.h"
#include "server/preemption/priority.h"

namespace kq::preemption {

// Kueue's TargetClusterQueueOrdering. Holds pointers into the quota tree,
// which must outlive it and keep its shape (usage may change). Not
// thread-safe; lives for one preemption search.
class TargetClusterQueueOrdering {
 public:
  // `candidates` are the workloads that may be preempted, in the order they
  // are to be tried within each ClusterQueue (CandidatesOrdering); each
  // belongs to the ClusterQueue named by its cluster_queue. `now` and
  // `features` break ties between ClusterQueues of equal share by their
  // first candidates (admission fair sharing never counts there, as in
  // Kueue).
  TargetClusterQueueOrdering(cache::ClusterQueueSnapshot& preemptor_cq,
                             const std::vector<Candidate>& candidates,
                             absl::Time now, const Features& features);

  // The next target ClusterQueue, or nullptr once there is none. Without a
  // cohort, the preemptor's ClusterQueue while it has candidates.
  cache::ClusterQueueSnapshot* Next();

  // Kueue's DropQueue: `target` is not returned again.
  void DropQueue(const cache::ClusterQueueSnapshot& target);

  // Kueue's InClusterQueuePreemption: `target` is the preemptor's own
  // ClusterQueue (priority-based preemption within it).
  bool InClusterQueuePreemption(
      const cache::ClusterQueueSnapshot& target) const {
    return &target == &preemptor_cq_;
  }

  // Whether `target` has candidates left.
  bool HasWorkload(const cache::ClusterQueueSnapshot& target) const;

  // Removes and returns the first candidate left in `target`, which must
  // have one (HasWorkload()).
  Candidate PopWorkload(const cache::ClusterQueueSnapshot& target);

  // Kueue's ComputeShares: the DRS of the preemptor's and of `target`'s
  // almost-LCA (the children of their lowest common ancestor on each
  // side), as the tree is now. `target` must be in the preemptor's tree and
  // not the preemptor's ClusterQueue.
  std::pair<cache::DRS, cache::DRS> ComputeShares(
      const cache::ClusterQueueSnapshot& target) const;

  // Kueue's ComputeTargetShareAfterRemoval: the DRS of `target`'s almost-LCA
  // once `workload`'s usage is removed from `target`. The tree is changed
  // for the computation and restored before returning.
  cache::DRS ComputeTargetShareAfterRemoval(cache::ClusterQueueSnapshot& target,
                                            const Workload& workload) const;

 private:
  // Kueue's nextTarget: one descent from `cohort`; nullptr when the descent
  // only pruned nodes.
  cache::ClusterQueueSnapshot* NextTarget(cache::CohortSnapshot& cohort);
  bool OnPathFromRootToPreemptor(const cache::CohortSnapshot* cohort) const {
    return preemptor_ancestors_.count(cohort) > 0;
  }
  const cache::CohortSnapshot* LeastCommonAncestor(
      const cache::ClusterQueueSnapshot& target) const;

  cache::ClusterQueueSnapshot& preemptor_cq_;
  // The preemptor's parent, null without a cohort (or in a cohort cycle).
  cache::CohortSnapshot* preemptor_parent_ = nullptr;
  std::set<const cache::CohortSnapshot*> preemptor_ancestors_;
  // Candidates left, by ClusterQueue name, in the order given.
  std::map<std::string, std::deque<Candidate>> candidates_;
  std::set<const cache::ClusterQueueSnapshot*> pruned_cluster_queues_;
  std::set<const cache::CohortSnapshot*> pruned_cohorts_;
  absl::Time now_;
  Features features_;
};

}  // namespace kq::preemption
