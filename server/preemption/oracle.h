#pragma once

// Kueue's PreemptionOracle (pkg/scheduler/preemption/preemption_oracle.go)
// and Kueue's Preemptor.GetTargets: the flavor assigner asks whether
// preemption could free one flavor-resource, the scheduler asks for the
// workloads to evict for a whole assignment. Both search the live quota
// tree with ClassicalTargets, or with FairTargets when fair sharing is
// configured (Kueue's enableFairSharing).
//
// Example:
//   Oracle oracle(cache, holding_quota, now, features, config.fair_sharing);
//   scheduler::SchedulingContext context{&flavors, &namespaces};
//   context.oracle = &oracle;
//   scheduler::Schedule(cache, heads, context, now);

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "server/cache/cache.h"
#include "server/core/config.h"
#include "server/core/objects.h"
#include "server/preemption/classical.h"
#include "server/preemption/fair.h"
#include "server/preemption/priority.h"
#include "server/scheduler/flavor_assigner.h"

namespace kq::preemption {

// Kueue's flavorResourcesNeedPreemption: the flavor-resources of
// `assignment` whose mode is Preempt.
std::set<cache::FlavorResource> FlavorResourcesNeedPreemption(
    const scheduler::Assignment& assignment);

// A PreemptionOracle that searches Kueue's classical or fair-sharing way
// over the live quota tree. Holds references to the cache and to the workloads
// holding quota, which must outlive it; the cache is changed only during a call
// and restored before it returns. Thread-compatible.
class Oracle final : public scheduler::PreemptionOracle {
 public:
  // `holders` are the workloads whose usage `cache` holds (see
  // ClassicalTargets), indexed by ClusterQueue; it must outlive the oracle;
  // `now` and `features` are passed on to the search. `fair_sharing`, when set,
  // makes the search Kueue's fair-sharing one (FairTargets with its
  // strategies); otherwise it is classical.
  // `memo`, when given, keeps what classical searches learn for the next
  // Oracle over the same Cache (see WithinNominalMemo); it must outlive
  // this one. Otherwise the oracle keeps its own.
  Oracle(cache::Cache& cache, const HoldingQuota& holders, absl::Time now,
         Features features = {},
         std::optional<FairSharingConfig> fair_sharing = std::nullopt,
         WithinNominalMemo* memo = nullptr);

  // Kueue's SimulatePreemption: searches targets for `quantity` of `fr`
  // alone. Without targets: kNoCandidates and the borrowing level as the
  // tree is. With targets: the borrowing level once they are removed, and
  // kPreempt when one of them is in `cq`, kReclaim otherwise.
  scheduler::PreemptionSimulation SimulatePreemption(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const cache::FlavorResource& fr, int64_t quantity) const override;

  // Kueue's GetTargets: the search for the assignment's whole usage,
  // candidates restricted to users of its Preempt-mode flavor-resources.
  std::vector<scheduler::PreemptionTarget> GetTargets(
      const cache::ClusterQueueSnapshot& cq, const Workload& workload,
      const scheduler::Assignment& assignment) const override;

 private:
  std::vector<Target> Search(const std::string& cluster_queue,
                             const Workload& workload,
                             cache::FlavorResourceQuantities requests,
                             std::set<cache::FlavorResource> frs) const;

  cache::Cache& cache_;
  const HoldingQuota& holders_;
  absl::Time now_;
  Features features_;
  std::optional<FairSharingConfig> fair_sharing_;

  // The last search and its result. Assigning flavors to a head searches
  // for its request on the flavor that needs preemption, and GetTargets
  // then searches again for the head's whole usage, which for a
  // single-resource head is the same search over the same tree: it is
  // answered from here while the cache is at `generation`.
  struct LastSearch {
    uint64_t generation = 0;
    const Workload* workload = nullptr;
    std::string cluster_queue;
    cache::FlavorResourceQuantities requests;
    std::set<cache::FlavorResource> frs;
    std::vector<Target> targets;
  };
  mutable std::optional<LastSearch> last_search_;
  // The classical searches' answers about the tree (memo_, pointing at
  // own_memo_ unless one was given), for as long as the cache is at
  // `memo_generation_`: a search, or SimulatePreemption's removal, that
  // puts everything back moves them on to the new generation.
  mutable WithinNominalMemo own_memo_;
  WithinNominalMemo* const memo_;
  mutable uint64_t memo_generation_ = 0;
};

}  // namespace kq::preemption
