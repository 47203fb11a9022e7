#pragma once

// The order of a pass's entries under fair sharing: Kueue's
// fairSharingIterator (pkg/scheduler/fair_sharing_iterator.go). Entries of
// ClusterQueues without a cohort come out as they are; within a cohort tree
// each Pop() runs a tournament from the root down: at every cohort, the
// entries its child ClusterQueues hold and the winners of its child
// cohorts compete, and the winner is the one whose child node (ClusterQueue
// or cohort) of that cohort would be fairest off after admitting it. The
// shares are recomputed on every Pop(), so the caller's admissions and
// reservations between pops count.
//
// Example:
//   FairSharingIterator it(candidates);
//   while (it.HasNext()) {
//     const size_t i = it.Pop();
//     Process(entries[i]);  // may add usage to candidates[i].cluster_queue
//   }

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "server/cache/cache.h"
#include "server/cache/fair_sharing.h"
#include "server/core/objects.h"

namespace kq::scheduler {

// What the tournament compares of an entry at one cohort.
struct TournamentEntry {
  const Workload* workload = nullptr;
  // The dominant resource share, with the entry's usage added, of the
  // entry's node just below that cohort: its ClusterQueue, or the child
  // cohort on the path to it. Must not be null.
  const cache::DRS* drs = nullptr;
  // The entry's usage (Kueue's requestedFRs); null means none.
  const cache::FlavorResourceQuantities* requested = nullptr;
};

// Kueue's entryComparer.less with its default gates
// (FairSharingPrioritizeNonBorrowing and PrioritySortingWithinCohort on,
// PrioritizePreemptorWorkloads off): whether `a` wins over `b` at one
// cohort. In order: an entry whose node does not borrow on any
// flavor-resource it requests wins over one whose node does; then the lower
// share (CompareDRS); then the higher priority; then the earlier
// QueueOrderTimestamp(). Where Kueue leaves the winner to the order it
// visits candidates in (an unordered set), UID, namespace and name decide,
// as in EntryOrderLess, so that the order is total.
bool FairSharingEntryLess(const TournamentEntry& a, const TournamentEntry& b);

// One entry to order: its workload, its ClusterQueue in the cache and the
// usage its assignment would add there. Pointers must outlive the iterator.
struct FairSharingCandidate {
  const Workload* workload = nullptr;
  cache::ClusterQueueSnapshot* cluster_queue = nullptr;
  const cache::FlavorResourceQuantities* usage = nullptr;
};

// Yields the indices of the candidates in Kueue's fair-sharing order.
// Between pops the caller may change the usage in the cache (admissions,
// reservations); Pop() reads the cache as it then is. Pop() adds each
// competing entry's usage to its ClusterQueue to compute the shares and
// restores the usage exactly before returning: the cache is left as it was.
// Thread-compatible.
class FairSharingIterator {
 public:
  explicit FairSharingIterator(std::vector<FairSharingCandidate> candidates);

  bool HasNext() const { return remaining_ > 0; }

  // The index in the constructor's vector of the next entry to process.
  // Kueue starts from an arbitrary ClusterQueue with an entry; kq takes the
  // first remaining candidate, which only decides the order between
  // separate cohort trees (and queues without a cohort), whose entries do
  // not compete for the same quota. Requires HasNext().
  size_t Pop();

 private:
  // The tournament at `cohort`: the winning remaining candidate of its
  // subtree, or -1 when none is left. `drs_at` holds, per candidate, the
  // share of its node below each cohort of its path.
  int RunTournament(
      const cache::CohortSnapshot& cohort,
      const std::vector<
          std::vector<std::pair<const cache::CohortSnapshot*, cache::DRS>>>&
          drs_at) const;

  // Kueue's computeDRS for every remaining candidate of the tree of `root`.
  std::vector<std::vector<std::pair<const cache::CohortSnapshot*, cache::DRS>>>
  ComputeDRS(const cache::CohortSnapshot& root) const;

  std::vector<FairSharingCandidate> candidates_;
  // Per candidate: the cohorts from its ClusterQueue's parent up to the
  // root of its tree; empty for a ClusterQueue without a cohort.
  std::vector<std::vector<cache::CohortSnapshot*>> paths_;
  // Candidate indices by ClusterQueue (a pass has one head per queue;
  // several are tolerated).
  std::map<const cache::ClusterQueueSnapshot*, std::vector<size_t>>
      by_cluster_queue_;
  std::vector<bool> popped_;
  size_t remaining_ = 0;
};

}  // namespace kq::scheduler
