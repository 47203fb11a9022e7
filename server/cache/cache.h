#pragma once

// Quota accounting: the tree of ClusterQueues and Cohorts with their
// nominal quota, borrowing and lending limits and usage, as Kueue's
// pkg/cache/scheduler (resource_node.go). The engine keeps one Cache live
// and updates usage incrementally; a scheduling cycle reads and mutates it
// directly, so admissions earlier in a cycle are seen by later entries.
//
// Example:
//   Cache cache;
//   cache.Rebuild(cluster_queues, cohorts, {"default"}, {});
//   ClusterQueueSnapshot* cq = cache.FindClusterQueue("team-a");
//   cq->AddUsage(UsageOf(workload));
//   int64_t free_cpu = cq->Available({"default", "cpu"});

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "server/core/objects.h"

namespace kq::cache {

// std::string's order (unsigned bytes, then length), inline.
inline std::strong_ordering CompareName(const std::string& a,
                                        const std::string& b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  const auto* x = reinterpret_cast<const unsigned char*>(a.data());
  const auto* y = reinterpret_cast<const unsigned char*>(b.data());
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return x[i] <=> y[i];
  }
  return a.size() <=> b.size();
}

// A (flavor, resource) pair: the unit quotas and usage are kept in.
struct FlavorResource {
  std::string flavor;
  std::string resource;
  // Ordered as std::string orders them, flavor first. Written out because
  // these are the keys of every quota and usage map the scheduler reads,
  // and their names are short: a byte loop beats a call to memcmp.
  friend std::strong_ordering operator<=>(const FlavorResource& a,
                                          const FlavorResource& b) {
    if (std::strong_ordering c = CompareName(a.flavor, b.flavor); c != 0) {
      return c;
    }
    return CompareName(a.resource, b.resource);
  }
  friend bool operator==(const FlavorResource& a, const FlavorResource& b) {
    return a.flavor.size() == b.flavor.size() &&
           a.resource.size() == b.resource.size() &&
           CompareName(a.flavor, b.flavor) == 0 &&
           CompareName(a.resource, b.resource) == 0;
  }
  // Prints "flavor/resource", for GoogleTest failure messages.
  friend void PrintTo(const FlavorResource& fr, std::ostream* os) {
    *os << fr.flavor << "/" << fr.resource;
  }
};

// Amounts in Kueue's integer units (milli-CPU, whole units otherwise), with
// Kueue's saturating arithmetic (INT64_MAX is unlimited).
using FlavorResourceQuantities = std::map<FlavorResource, int64_t>;

// The quota of one flavor-resource on one node (Kueue's ResourceQuota).
struct QuotaLimits {
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

// Quotas and usage of one node of the tree (Kueue's resourceNode).
// Thread-compatible value type.
struct ResourceNode {
  std::map<FlavorResource, QuotaLimits> quotas;
  // Nominal quota plus what the children lend (cohorts); nominal (CQs).
  FlavorResourceQuantities subtree_quota;
  // Usage of workloads holding quota reservations in this subtree, as far
  // as it is stored in this node.
  FlavorResourceQuantities usage;

  // Returns m[fr], or 0 when absent.
  int64_t Get(const FlavorResourceQuantities& m,
              const FlavorResource& fr) const;
  // Capacity visible only inside this subtree (never lent to the parent):
  // subtree quota minus the lending limit, 0 without a lending limit.
  int64_t LocalQuota(const FlavorResource& fr) const;
  // How much of LocalQuota() is still unused (never negative).
  int64_t LocalAvailable(const FlavorResource& fr) const;
};

class CohortSnapshot;

// A ClusterQueue as the scheduler sees it. Owned by Cache.
// Thread-compatible.
class ClusterQueueSnapshot {
 public:
  const std::string& name() const { return spec.meta.name; }
  bool HasParent() const { return parent != nullptr; }

  // How much more of `fr` this queue can use now, borrowing included
  // (Kueue's Available, floored at 0).
  int64_t Available(const FlavorResource& fr) const;
  // The most this queue could ever use of `fr` with nothing else running.
  int64_t PotentialAvailable(const FlavorResource& fr) const;
  // Whether `usage` fits in Available() for every flavor-resource.
  bool Fits(const FlavorResourceQuantities& usage) const;
  // Whether using `extra` more of `fr` takes the queue above nominal.
  bool BorrowingWith(const FlavorResource& fr, int64_t extra) const;
  // Whether the queue is above nominal for `fr` now.
  bool Borrowing(const FlavorResource& fr) const {
    return BorrowingWith(fr, 0);
  }
  // Usage above nominal for `fr`, as Kueue reports it in
  // status.flavorsReservation[].resources[].borrowed: 0 for a queue outside
  // any cohort, which cannot borrow.
  int64_t Borrowed(const FlavorResource& fr) const;

  // Adds or removes quota-reservation usage; it propagates to the cohorts
  // for the part above this queue's local quota.
  void AddUsage(const FlavorResourceQuantities& usage);
  void RemoveUsage(const FlavorResourceQuantities& usage);

  // Whether `fr` is one of the flavor-resources this queue has quota for.
  bool HasQuota(const FlavorResource& fr) const {
    return node.quotas.count(fr) > 0;
  }

  ClusterQueue spec;
  ResourceNode node;
  CohortSnapshot* parent = nullptr;
  // Usage of admitted workloads only (status.flavorsUsage); node.usage is
  // the reservation usage (status.flavorsReservation).
  FlavorResourceQuantities admitted_usage;

  // Kueue's Active condition.
  bool active = true;
  std::string active_reason = "Ready";
  std::string active_message = "Can admit new workloads";

  // Changes whenever usage changes anywhere in this queue's cohort tree
  // (the queue alone when it has no cohort), except inside a
  // Cache::Simulation; a value never seen before after every Rebuild. What
  // is computed from the tree (scheduler::NominationMemo) stays valid while
  // it is unchanged, whatever happens in other trees. 0 outside a Cache.
  uint64_t tree_generation() const {
    return tree_generation_slot == nullptr ? 0 : *tree_generation_slot;
  }
  // Moves tree_generation() even inside a Simulation: for a change that
  // stays (an admission made during a pass) or one the usage does not show.
  void MarkTreeChanged();

  // The owning Cache's generation, moved by AddUsage and RemoveUsage; null
  // for a snapshot outside a Cache.
  uint64_t* cache_generation = nullptr;
  // Where tree_generation() is kept: the root cohort's, or
  // own_tree_generation without a cohort (or in a cohort cycle); null
  // outside a Cache.
  uint64_t* tree_generation_slot = nullptr;
  uint64_t own_tree_generation = 0;
  // The owning Cache's count of open Simulations.
  const int* simulations = nullptr;
};

// A Cohort node, explicit (a Cohort object) or implicit (only named by a
// ClusterQueue or as a parent). Owned by Cache. Thread-compatible.
class CohortSnapshot {
 public:
  bool HasParent() const { return parent != nullptr; }

  // Kueue's available(cohort): how much more this subtree may use of `fr`,
  // taking the ancestors' quota and this cohort's borrowing limit into
  // account. Negative when the subtree is over-admitted.
  int64_t Available(const FlavorResource& fr) const;
  // Kueue's potentialAvailable(cohort): the most this subtree could use of
  // `fr` with nothing running.
  int64_t PotentialAvailable(const FlavorResource& fr) const;
  // Whether using `extra` more of `fr` takes the subtree above its subtree
  // quota.
  bool BorrowingWith(const FlavorResource& fr, int64_t extra) const;

  std::string name;
  ResourceNode node;
  // spec.fairSharing.weight of the Cohort object; absent for an implicit
  // cohort (always a root, whose share is 0 whatever its weight).
  std::optional<Quantity> fair_sharing_weight;
  CohortSnapshot* parent = nullptr;
  std::vector<CohortSnapshot*> child_cohorts;
  std::vector<ClusterQueueSnapshot*> child_cluster_queues;
  // The chain of parents from this cohort loops (Kueue's HasCycle): the
  // cohort has no root, its quota is not computed and every ClusterQueue
  // below it is inactive.
  bool has_cycle = false;
  // On a root: the tree generation of every ClusterQueue below it.
  uint64_t tree_generation = 0;
};

// The whole quota tree. Thread-compatible: owned by the engine thread.
class Cache {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Rebuilds the tree from configuration and computes which ClusterQueues
  // are active (Kueue's inactiveReason: Stopped, FlavorNotFound,
  // AdmissionCheckNotFound, AdmissionCheckInactive,
  // MultipleMultiKueueAdmissionChecks,
  // MultiKueueAdmissionCheckAppliedPerFlavor,
  // MultiKueueWithProvisioningRequest; and cohort cycles).
  // `admission_checks` names the AdmissionChecks that exist;
  // `inactive_admission_checks` those of them whose Active condition is not
  // True; `admission_check_controllers` their spec.controllerName (a check
  // left out has a controller with no constraints). Usage is reset to zero:
  // the caller re-adds the usage of every workload holding quota.
  void Rebuild(const std::map<std::string, ClusterQueue>& cluster_queues,
               const std::map<std::string, Cohort>& cohorts,
               const std::set<std::string>& flavors,
               const std::set<std::string>& admission_checks,
               const std::set<std::string>& inactive_admission_checks,
               const std::map<std::string, std::string>&
                   admission_check_controllers = {});
  // As above, with every existing AdmissionCheck active.
  void Rebuild(const std::map<std::string, ClusterQueue>& cluster_queues,
               const std::map<std::string, Cohort>& cohorts,
               const std::set<std::string>& flavors,
               const std::set<std::string>& admission_checks);

  // Changes whenever the tree is rebuilt or any usage is added or removed
  // (even if a later call undoes it), and is never the same for two Cache
  // objects: equal generations mean the same tree with the same usage.
  // What is computed from the tree can be kept as long as it is unchanged.
  uint64_t generation() const { return generation_; }

  // Usage changed while a Simulation is open is put back before it closes
  // (the preemption searches, a pass's reservations and fair-sharing
  // trials): it moves generation() but no ClusterQueue's
  // tree_generation(). Scopes nest.
  class Simulation {
   public:
    explicit Simulation(Cache& cache) : cache_(cache) { ++cache_.simulations_; }
    ~Simulation() { --cache_.simulations_; }
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

   private:
    Cache& cache_;
  };

  // Returns nullptr when unknown.
  ClusterQueueSnapshot* FindClusterQueue(const std::string& name);
  const ClusterQueueSnapshot* FindClusterQueue(const std::string& name) const;
  CohortSnapshot* FindCohort(const std::string& name);
  const CohortSnapshot* FindCohort(const std::string& name) const;

  // The ClusterQueues whose inadmissible workloads Kueue retries when quota
  // changes in `cluster_queue` (notifyRetryInadmissible): the queue itself
  // when it has no cohort, every queue of its cohort tree otherwise, none
  // when the tree has a cycle or the queue is unknown. In name order.
  std::vector<std::string> ClusterQueuesInTree(
      const std::string& cluster_queue) const;

  const std::map<std::string, std::unique_ptr<ClusterQueueSnapshot>>&
  cluster_queues() const {
    return cluster_queues_;
  }
  // Every cohort, explicit or implicit, by name.
  const std::map<std::string, std::unique_ptr<CohortSnapshot>>& cohorts()
      const {
    return cohorts_;
  }

 private:
  std::map<std::string, std::unique_ptr<ClusterQueueSnapshot>> cluster_queues_;
  // cluster_queues_ by hash: a pass looks every head's queue up.
  absl::flat_hash_map<std::string, ClusterQueueSnapshot*>
      cluster_queues_by_name_;
  std::map<std::string, std::unique_ptr<CohortSnapshot>> cohorts_;
  uint64_t generation_ = NextCacheGeneration();
  int simulations_ = 0;

 public:
  // A process-wide counter, so that generations of different Cache
  // objects never compare equal.
  static uint64_t NextCacheGeneration();
};

// Kueue's getNodeHeight: a cohort whose children are only ClusterQueues
// has height 1; each level of child cohorts adds one.
int Height(const CohortSnapshot& cohort);

// Kueue's FindHeightOfLowestSubtreeThatFits (the "borrowing level"): the
// height of the lowest subtree, from `cq` up, in which using `value` more of
// `fr` does not borrow; 0 when `cq` itself does not borrow. The second value
// says whether that subtree is smaller than the whole tree (so reclaiming
// within the hierarchy may help).
std::pair<int, bool> FindHeightOfLowestSubtreeThatFits(
    const ClusterQueueSnapshot& cq, const FlavorResource& fr, int64_t value);

// Kueue's calculateLendable(node): per resource name, the capacity the tree
// above `cohort` could lend it, i.e. PotentialAvailable() summed over every
// flavor the root's subtree has quota for. The denominator of the dominant
// resource share of `cohort`'s children.
std::map<std::string, int64_t> Lendable(const CohortSnapshot& cohort);

// The quota an admission was granted, in Kueue's integer units: for each
// pod set, each resource of resource_usage on its assigned flavor.
FlavorResourceQuantities UsageOf(const Admission& admission);

// The quota a workload holding `workload.admission` holds now (Kueue's
// totalRequestsFromAdmission): as UsageOf(admission), except that a pod set
// with fewer pods left after reclaim (PodSetsCountsAfterReclaim) than it
// was admitted with is scaled down to them (usage / admitted count * pods
// left, in integer units). An admitted count of 0 stands for the pod set's
// count (Kueue's absent count). Empty without an admission.
//
// This is the one measure of a workload's hold on the quota tree: whatever
// adds it, removes it or simulates its removal uses it, so that the tree
// never drifts when reclaimable pods change. `reclaimable_pods` is Kueue's
// ReclaimablePods gate (beta, on); off, this is UsageOf(admission).
FlavorResourceQuantities UsageOf(const Workload& workload,
                                 bool reclaimable_pods = true);

}  // namespace kq::cache
