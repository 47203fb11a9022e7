#pragma once

// Quota accounting: the tree of ClusterQueues and Cohorts with their
// nominal quota, borrowing and lending limits and usage, as Kueue's
// pkg/cache/scheduler (resource_node.go). The engine keeps one Cache live
// and updates usage incrementally; a scheduling cycle reads and mutates it
// directly, so admissions earlier in a cycle are seen by later entries.

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/core/objects.h"

namespace kq::cache {

struct FlavorResource {
  std::string flavor;
  std::string resource;
  friend auto operator<=>(const FlavorResource&,
                          const FlavorResource&) = default;
};

// Amounts in Kueue's integer units (milli-CPU, whole units otherwise), with
// Kueue's saturating arithmetic (INT64_MAX is unlimited).
using FlavorResourceQuantities = std::map<FlavorResource, int64_t>;

struct QuotaLimits {
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

// Quotas and usage of one node of the tree (Kueue's resourceNode).
struct ResourceNode {
  std::map<FlavorResource, QuotaLimits> quotas;
  // Nominal quota plus what the children lend (cohorts); nominal (CQs).
  FlavorResourceQuantities subtree_quota;
  // Usage of workloads holding quota reservations in this subtree, as far
  // as it is stored in this node.
  FlavorResourceQuantities usage;

  int64_t Get(const FlavorResourceQuantities& m,
              const FlavorResource& fr) const;
  // Capacity visible only inside this subtree (never lent to the parent).
  int64_t LocalQuota(const FlavorResource& fr) const;
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
};

// A Cohort node, explicit (a Cohort object) or implicit (only named by a
// ClusterQueue). Owned by Cache. Thread-compatible.
class CohortSnapshot {
 public:
  std::string name;
  ResourceNode node;
  CohortSnapshot* parent = nullptr;
  std::vector<CohortSnapshot*> child_cohorts;
  std::vector<ClusterQueueSnapshot*> child_cluster_queues;
  // The tree this cohort is in contains a cycle: all its queues are
  // inactive.
  bool has_cycle = false;
};

// The whole quota tree. Thread-compatible: owned by the engine thread.
class Cache {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // Rebuilds the tree from configuration and computes which ClusterQueues
  // are active (Kueue's reasons: Stopped, FlavorNotFound,
  // AdmissionCheckNotFound, cohort cycles). Usage is reset to zero: the
  // caller re-adds the usage of every workload holding quota.
  void Rebuild(const std::map<std::string, ClusterQueue>& cluster_queues,
               const std::map<std::string, Cohort>& cohorts,
               const std::set<std::string>& flavors,
               const std::set<std::string>& admission_checks);

  // Returns nullptr when unknown.
  ClusterQueueSnapshot* FindClusterQueue(const std::string& name);
  const ClusterQueueSnapshot* FindClusterQueue(const std::string& name) const;
  CohortSnapshot* FindCohort(const std::string& name);

  const std::map<std::string, std::unique_ptr<ClusterQueueSnapshot>>&
  cluster_queues() const {
    return cluster_queues_;
  }

 private:
  std::map<std::string, std::unique_ptr<ClusterQueueSnapshot>> cluster_queues_;
  std::map<std::string, std::unique_ptr<CohortSnapshot>> cohorts_;
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

// The quota a workload's admission holds, in Kueue's integer units: for
// each pod set, each resource of resource_usage on its assigned flavor.
FlavorResourceQuantities UsageOf(const Admission& admission);

}  // namespace kq::cache
