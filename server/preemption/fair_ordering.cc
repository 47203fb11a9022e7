#include "server/preemption/fair_ordering.h"

namespace kq::preemption {
namespace {

using cache::ClusterQueueSnapshot;
using cache::CohortSnapshot;
using cache::DRS;

// The parent that the quota tree walks up to: none for a parent in a
// cohort cycle (Kueue leaves cyclic cohorts out of its snapshot).
CohortSnapshot* TreeParent(const ClusterQueueSnapshot& cq) {
  return cq.parent != nullptr && !cq.parent->has_cycle ? cq.parent : nullptr;
}

// Kueue's getAlmostLCA followed by DominantResourceShare: the share of the
// node on the path from `cq` up whose parent is `lca`.
DRS AlmostLcaShare(const ClusterQueueSnapshot& cq, const CohortSnapshot* lca) {
  if (cq.parent == lca) return cache::DominantResourceShare(cq);
  const CohortSnapshot* node = cq.parent;
  // `lca` is an ancestor of `cq`; the null check only guards a broken tree.
  while (node->parent != nullptr && node->parent != lca) node = node->parent;
  return cache::DominantResourceShare(*node);
}

}  // namespace

TargetClusterQueueOrdering::TargetClusterQueueOrdering(
    ClusterQueueSnapshot& preemptor_cq,
    const std::vector<Candidate>& candidates, absl::Time now,
    const Features& features)
    : preemptor_cq_(preemptor_cq),
      preemptor_parent_(TreeParent(preemptor_cq)),
      now_(now),
      features_(features) {
  // Kueue compares ClusterQueues' first candidates without admission fair
  // sharing, whatever its setting.
  features_.admission_fair_sharing = false;
  for (const CohortSnapshot* c = preemptor_parent_; c != nullptr;
       c = c->parent) {
    preemptor_ancestors_.insert(c);
  }
  for (const Candidate& candidate : candidates) {
    candidates_[std::string(candidate.cluster_queue)].push_back(candidate);
  }
}

ClusterQueueSnapshot* TargetClusterQueueOrdering::Next() {
  if (preemptor_parent_ == nullptr) {
    // Only the preemptor's own ClusterQueue can hold candidates.
    if (pruned_cluster_queues_.count(&preemptor_cq_) > 0 ||
        !HasWorkload(preemptor_cq_)) {
      return nullptr;
    }
    return &preemptor_cq_;
  }
  CohortSnapshot* root = preemptor_parent_;
  while (root->parent != nullptr) root = root->parent;
  while (pruned_cohorts_.count(root) == 0) {
    if (ClusterQueueSnapshot* target = NextTarget(*root)) return target;
  }
  return nullptr;
}

void TargetClusterQueueOrdering::DropQueue(const ClusterQueueSnapshot& target) {
  pruned_cluster_queues_.insert(&target);
}

bool TargetClusterQueueOrdering::HasWorkload(
    const ClusterQueueSnapshot& target) const {
  auto it = candidates_.find(target.name());
  return it != candidates_.end() && !it->second.empty();
}

Candidate TargetClusterQueueOrdering::PopWorkload(
    const ClusterQueueSnapshot& target) {
  std::deque<Candidate>& left = candidates_[target.name()];
  Candidate head = left.front();
  left.pop_front();
  return head;
}

ClusterQueueSnapshot* TargetClusterQueueOrdering::NextTarget(
    CohortSnapshot& cohort) {
  ClusterQueueSnapshot* highest_cq = nullptr;
  DRS highest_cq_drs = DRS::Negative();
  for (ClusterQueueSnapshot* cq : cohort.child_cluster_queues) {
    if (pruned_cluster_queues_.count(cq) > 0) continue;
    const DRS drs = cache::DominantResourceShare(*cq);
    // The preemptor's own ClusterQueue stays until it runs out of
    // candidates: priority-based preemption within it needs no borrowing.
    if ((!drs.IsBorrowing() && cq != &preemptor_cq_) || !HasWorkload(*cq)) {
      pruned_cluster_queues_.insert(cq);
      continue;
    }
    const int c = cache::CompareDRS(drs, highest_cq_drs);
    if (c == 0) {
      // Equal shares: the ClusterQueue whose next victim goes first wins.
      if (CompareCandidates(candidates_[cq->name()].front(),
                            candidates_[highest_cq->name()].front(),
                            preemptor_cq_.name(), now_, features_) < 0) {
        highest_cq = cq;
      }
    } else if (c > 0) {
      highest_cq_drs = drs;
      highest_cq = cq;
    }
  }

  CohortSnapshot* highest_cohort = nullptr;
  DRS highest_cohort_drs = DRS::Negative();
  for (CohortSnapshot* child : cohort.child_cohorts) {
    if (pruned_cohorts_.count(child) > 0) continue;
    const DRS drs = cache::DominantResourceShare(*child);
    // A cohort on the preemptor's path stays even when not borrowing: there
    // may be imbalance inside it, or preemption within the preemptor's
    // ClusterQueue. It goes once all its children are pruned.
    if (!drs.IsBorrowing() && !OnPathFromRootToPreemptor(child)) {
      pruned_cohorts_.insert(child);
    } else if (cache::CompareDRS(drs, highest_cohort_drs) >= 0) {
      highest_cohort_drs = drs;
      highest_cohort = child;
    }
  }

  if (highest_cohort == nullptr && highest_cq == nullptr) {
    pruned_cohorts_.insert(&cohort);
    return nullptr;
  }
  // On a tie the cohort wins: descending lets the most unfair node inside
  // it be chosen, which Kueue deems slightly fairer.
  if (cache::CompareDRS(highest_cohort_drs, highest_cq_drs) >= 0) {
    return NextTarget(*highest_cohort);
  }
  return highest_cq;
}

const CohortSnapshot* TargetClusterQueueOrdering::LeastCommonAncestor(
    const ClusterQueueSnapshot& target) const {
  for (const CohortSnapshot* c = TreeParent(target); c != nullptr;
       c = c->parent) {
    if (OnPathFromRootToPreemptor(c)) return c;
  }
  return nullptr;
}

std::pair<DRS, DRS> TargetClusterQueueOrdering::ComputeShares(
    const ClusterQueueSnapshot& target) const {
  const CohortSnapshot* lca = LeastCommonAncestor(target);
  return {AlmostLcaShare(preemptor_cq_, lca), AlmostLcaShare(target, lca)};
}

DRS TargetClusterQueueOrdering::ComputeTargetShareAfterRemoval(
    ClusterQueueSnapshot& target, const Workload& workload) const {
  if (!workload.admission.has_value()) {
    return AlmostLcaShare(target, LeastCommonAncestor(target));
  }
  // The removal has to go through the whole path: how much of it reaches
  // the almost-LCA depends on the lending limits below it.
  const cache::FlavorResourceQuantities usage = cache::UsageOf(workload);
  target.RemoveUsage(usage);
  const DRS share = AlmostLcaShare(target, LeastCommonAncestor(target));
  target.AddUsage(usage);
  return share;
}

}  // namespace kq::preemption
