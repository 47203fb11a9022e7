#pragma once

// Kueue's classical preemption (pkg/scheduler/preemption/preemption.go:
// classicalPreemptions, with classical/candidate_generator.go and
// classical/hierarchical_preemption.go): find a small set of workloads
// whose eviction lets a preemptor fit in its ClusterQueue. Candidates are
// tried in order, removing each from the quota tree until the preemptor
// fits; then those that are not needed after all are added back, newest
// removal first ("fill-back"). Fair-sharing preemption is in fair.h; TAS
// is not covered. Pure: the quota tree is changed only for the duration of the
// call and restored before returning.
//
// Example:
//   Preemptor preemptor{.workload = &incoming,
//                       .cluster_queue = "team-a",
//                       .requests = {{{"default", "cpu"}, 4'000}},
//                       .frs_need_preemption = {{"default", "cpu"}}};
//   std::vector<Target> targets =
//       ClassicalTargets(cache, preemptor, holding_quota, now, features);

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

#include "server/cache/cache.h"
#include "server/core/objects.h"
#include "server/preemption/holders.h"
#include "server/preemption/priority.h"

namespace kq::preemption {

// Why a workload is preempted: the Preempted condition's reason, as Kueue
// writes it.
inline constexpr char kReasonInClusterQueue[] = "InClusterQueue";
inline constexpr char kReasonInCohortReclamation[] = "InCohortReclamation";
inline constexpr char kReasonInCohortFairSharing[] = "InCohortFairSharing";
inline constexpr char kReasonInCohortReclaimWhileBorrowing[] =
    "InCohortReclaimWhileBorrowing";

// The workload that needs room (the parts of Kueue's preemptionCtx that
// are not the snapshot). Does not own the workload. Value type.
struct Preemptor {
  const Workload* workload = nullptr;
  // The ClusterQueue it is to be admitted to.
  std::string cluster_queue;
  // The quota its flavor assignment would use (Kueue's
  // assignment.TotalRequestsFor), every flavor-resource of it, whether it
  // needs preemption or fits already.
  cache::FlavorResourceQuantities requests;
  // The flavor-resources whose assignment mode is Preempt (Kueue's
  // frsNeedPreemption): only workloads using one of them are candidates.
  std::set<cache::FlavorResource> frs_need_preemption;
};

// A workload to evict so that the preemptor fits. Does not own the
// workload. Value type.
struct Target {
  const Workload* workload = nullptr;
  // One of the kReason* constants.
  std::string reason;
  // The ClusterQueue whose quota the workload holds.
  std::string cluster_queue;
};

// What classical searches read alike from the quota tree, kept for the
// next one: for a set of contested flavor-resources, whether each node is
// within nominal in them (IsWithinNominalInResources) and which holders of
// each ClusterQueue use them (WorkloadUsesResources). A search asks this of
// every ClusterQueue and cohort of the preemptor's tree while it collects
// candidates; with 100 ClusterQueues per cohort that was most of a search.
// The answers about nodes hold only for the usage they were computed from:
// the owner calls ClearUsage() when the usage may have changed (Oracle:
// Cache::generation() moved other than by its own searches putting their
// removals back). Those about holders are checked against
// HoldingQuota::VersionOf() on every use, so they last across passes for
// every ClusterQueue whose holders did not change, as long as no holder's
// admission changes while it holds quota.
// Thread-compatible.
class WithinNominalMemo {
 public:
  // The answers for one set of contested flavor-resources.
  class Table {
   public:
    bool IsWithinNominal(const cache::ResourceNode& node);
    // The workloads holding quota in `cq` that use one of the
    // flavor-resources (WorkloadUsesResources), in `holders`' order. Valid
    // until the next call.
    absl::Span<const Workload* const> Users(
        const cache::ClusterQueueSnapshot& cq, const HoldingQuota& holders);

   private:
    friend class WithinNominalMemo;
    explicit Table(std::set<cache::FlavorResource> frs)
        : frs_(std::move(frs)) {}
    std::set<cache::FlavorResource> frs_;
    absl::flat_hash_map<const cache::ResourceNode*, bool> within_;
    // By ClusterQueue, with its name (a Cache rebuilt in between may have
    // put another ClusterQueue at the same address) and the version of the
    // holders they were read from.
    struct CqUsers {
      std::string cluster_queue;
      uint64_t holders_version = 0;
      std::vector<const Workload*> workloads;
    };
    absl::flat_hash_map<const cache::ClusterQueueSnapshot*, CqUsers> users_;
  };

  // The table for `frs`, created empty on first use. Stays valid until
  // Clear().
  Table& For(const std::set<cache::FlavorResource>& frs);
  // Forgets every answer (for a rebuilt Cache, whose nodes have moved).
  void Clear() { tables_.clear(); }
  // Forgets the answers about nodes (IsWithinNominal), keeping Users.
  void ClearUsage() {
    for (const std::unique_ptr<Table>& table : tables_) table->within_.clear();
  }

 private:
  // A pass contests few distinct sets: a short list beats a map.
  std::vector<std::unique_ptr<Table>> tables_;
};

// How ClassicalTargets searches; the defaults are what kqd runs.
struct ClassicalOptions {
  // Ends a search before reading any candidate when a bound shows the
  // preemptor cannot fit whatever is removed (see MightFindTargets in
  // classical.cc). Off, every search reads and orders all its candidates
  // first, as Kueue does: the answer is the same, which tests check.
  bool skip_hopeless = true;
};

// Returns the workloads to evict so that `preemptor` fits in its
// ClusterQueue, in the order they were chosen (after fill-back, which may
// move the last one chosen into the place of one added back, as Kueue
// does), or an empty vector when no set of candidates is enough.
// `holding_quota` are the workloads whose usage the quota tree in `cache`
// holds (QuotaReserved, with an admission); workloads without an admission
// are ignored. `now` stands for the reservation time of a workload without
// a QuotaReserved=True condition when ordering candidates. The
// preemptor's ClusterQueue must exist in `cache` (otherwise no targets).
// `cache` is mutated while searching and left as it was. `memo`, when
// given, must hold answers for this same usage and these same `holders`
// only (see WithinNominalMemo); the search fills it in.
std::vector<Target> ClassicalTargets(cache::Cache& cache,
                                     const Preemptor& preemptor,
                                     const HoldingQuota& holders,
                                     absl::Time now, const Features& features,
                                     WithinNominalMemo* memo = nullptr,
                                     const ClassicalOptions& options = {});
// The same over a list of the workloads holding quota (indexed per call).
std::vector<Target> ClassicalTargets(
    cache::Cache& cache, const Preemptor& preemptor,
    absl::Span<const Workload* const> holding_quota, absl::Time now,
    const Features& features, WithinNominalMemo* memo = nullptr,
    const ClassicalOptions& options = {});

// Kueue's QuantitiesFitInQuota: whether `requests` fit in the subtree quota
// of `node` on top of its usage, and what is left of each request after
// the node's LocalAvailable() (what must come from the ancestors).
std::pair<bool, cache::FlavorResourceQuantities> QuantitiesFitInQuota(
    const cache::ResourceNode& node,
    const cache::FlavorResourceQuantities& requests);

// Kueue's WorkloadUsesResources: whether the workload's admission assigns
// one of `frs` to some resource (false without an admission).
bool WorkloadUsesResources(const Workload& workload,
                           const std::set<cache::FlavorResource>& frs);

// Kueue's IsWithinNominalInResources: whether the node's usage is at most
// its subtree quota for every flavor-resource in `frs`.
bool IsWithinNominalInResources(const cache::ResourceNode& node,
                                const std::set<cache::FlavorResource>& frs);

// Kueue's IsBorrowingWithinCohortForbidden: whether the ClusterQueue's
// borrowWithinCohort policy is absent or Never.
bool IsBorrowingWithinCohortForbidden(const ClusterQueue& cluster_queue);

}  // namespace kq::preemption
