#include "server/scheduler/fair_sharing_iterator.h"

#include <functional>
#include <tuple>

namespace kq::scheduler {
namespace {

using DRSPath =
    std::vector<std::pair<const cache::CohortSnapshot*, cache::DRS>>;

// The parent a node shares quota with: none when the parent is part of a
// cohort cycle, as in the cache (such a tree is left out of scheduling).
cache::CohortSnapshot* TreeParent(cache::CohortSnapshot* parent) {
  return parent != nullptr && !parent->has_cycle ? parent : nullptr;
}

}  // namespace

bool FairSharingEntryLess(const TournamentEntry& a, const TournamentEntry& b) {
  // 1. Kueue's PrioritizePreemptorWorkloads (alpha, off) is not modelled.
  // 2. Nominal first: a node borrowing on another flavor-resource than the
  //    ones the entry asks for does not count against it.
  const bool a_borrowing =
      a.requested != nullptr && a.drs->IsBorrowingOn(*a.requested);
  const bool b_borrowing =
      b.requested != nullptr && b.drs->IsBorrowingOn(*b.requested);
  if (a_borrowing != b_borrowing) return !a_borrowing;
  // 3. Dominant resource fairness.
  if (const int cmp = cache::CompareDRS(*a.drs, *b.drs); cmp != 0) {
    return cmp < 0;
  }
  // 4. Priority, 5. FIFO, then kq's total-order tie-break.
  const Workload& wa = *a.workload;
  const Workload& wb = *b.workload;
  return std::make_tuple(-int64_t{wa.priority}, QueueOrderTimestamp(wa),
                         std::cref(wa.meta.uid),
                         std::cref(wa.meta.namespace_name),
                         std::cref(wa.meta.name)) <
         std::make_tuple(-int64_t{wb.priority}, QueueOrderTimestamp(wb),
                         std::cref(wb.meta.uid),
                         std::cref(wb.meta.namespace_name),
                         std::cref(wb.meta.name));
}

FairSharingIterator::FairSharingIterator(
    std::vector<FairSharingCandidate> candidates)
    : candidates_(std::move(candidates)),
      paths_(candidates_.size()),
      popped_(candidates_.size(), false),
      remaining_(candidates_.size()) {
  for (size_t i = 0; i < candidates_.size(); ++i) {
    for (cache::CohortSnapshot* cohort =
             TreeParent(candidates_[i].cluster_queue->parent);
         cohort != nullptr; cohort = TreeParent(cohort->parent)) {
      paths_[i].push_back(cohort);
    }
    by_cluster_queue_[candidates_[i].cluster_queue].push_back(i);
  }
}

size_t FairSharingIterator::Pop() {
  size_t first = 0;
  while (popped_[first]) ++first;
  size_t next = first;
  if (!paths_[first].empty()) {
    const cache::CohortSnapshot& root = *paths_[first].back();
    const int winner = RunTournament(root, ComputeDRS(root));
    // The first candidate is in this tree, so there is a winner.
    next = static_cast<size_t>(winner);
  }
  popped_[next] = true;
  --remaining_;
  return next;
}

std::vector<DRSPath> FairSharingIterator::ComputeDRS(
    const cache::CohortSnapshot& root) const {
  std::vector<DRSPath> drs_at(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) {
    const std::vector<cache::CohortSnapshot*>& path = paths_[i];
    if (popped_[i] || path.empty() || path.back() != &root) continue;
    cache::ClusterQueueSnapshot& cq = *candidates_[i].cluster_queue;
    // Add the entry's usage, as if admitted, and put every touched usage
    // back as it was afterwards (Kueue's SimulateUsageAddition and revert).
    std::vector<cache::FlavorResourceQuantities> saved;
    saved.reserve(path.size() + 1);
    saved.push_back(cq.node.usage);
    for (const cache::CohortSnapshot* cohort : path) {
      saved.push_back(cohort->node.usage);
    }
    if (candidates_[i].usage != nullptr) cq.AddUsage(*candidates_[i].usage);
    // Below each cohort of the path, the share of the child on the path.
    cache::DRS share = cache::DominantResourceShare(cq);
    for (const cache::CohortSnapshot* cohort : path) {
      drs_at[i].emplace_back(cohort, share);
      share = cache::DominantResourceShare(*cohort);
    }
    cq.node.usage = std::move(saved[0]);
    for (size_t k = 0; k < path.size(); ++k) {
      path[k]->node.usage = std::move(saved[k + 1]);
    }
  }
  return drs_at;
}

int FairSharingIterator::RunTournament(
    const cache::CohortSnapshot& cohort,
    const std::vector<DRSPath>& drs_at) const {
  std::vector<size_t> contenders;
  for (const cache::CohortSnapshot* child : cohort.child_cohorts) {
    const int winner = RunTournament(*child, drs_at);
    if (winner >= 0) contenders.push_back(static_cast<size_t>(winner));
  }
  for (const cache::ClusterQueueSnapshot* child : cohort.child_cluster_queues) {
    auto it = by_cluster_queue_.find(child);
    if (it == by_cluster_queue_.end()) continue;
    for (size_t i : it->second) {
      if (!popped_[i]) contenders.push_back(i);
    }
  }
  if (contenders.empty()) return -1;
  // Every contender is in this cohort's subtree, so ComputeDRS recorded
  // its share below this cohort.
  auto at_cohort = [&](size_t i) {
    TournamentEntry entry{candidates_[i].workload, nullptr,
                          candidates_[i].usage};
    for (const auto& [node, drs] : drs_at[i]) {
      if (node == &cohort) entry.drs = &drs;
    }
    return entry;
  };
  size_t best = contenders[0];
  TournamentEntry best_entry = at_cohort(best);
  for (size_t k = 1; k < contenders.size(); ++k) {
    const TournamentEntry entry = at_cohort(contenders[k]);
    if (FairSharingEntryLess(entry, best_entry)) {
      best = contenders[k];
      best_entry = entry;
    }
  }
  return static_cast<int>(best);
}

}  // namespace kq::scheduler
