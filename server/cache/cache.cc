#include "server/cache/cache.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kq::cache {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// Kueue truncates condition messages to 32 KiB (pkg/util/api).
constexpr size_t kMaxConditionMessageSize = 32 * 1024;

// The parent that quota arithmetic walks up to. A parent in a cohort cycle
// has no root to stop at, so a node below one is treated as a root of its
// own: its ClusterQueues are inactive anyway, and walking the cycle would
// never end (Kueue leaves cyclic cohorts out of its snapshot).
template <typename Node>
CohortSnapshot* QuotaParent(const Node& n) {
  return n.parent != nullptr && !n.parent->has_cycle ? n.parent : nullptr;
}

// Kueue's available(node): how much more the subtree rooted at `n` may use,
// walking up through the cohorts. May be negative.
template <typename Node>
int64_t AvailableIn(const Node& n, const FlavorResource& fr) {
  const ResourceNode& r = n.node;
  const CohortSnapshot* parent = QuotaParent(n);
  if (parent == nullptr) {
    return SaturatingSub(r.Get(r.subtree_quota, fr), r.Get(r.usage, fr));
  }
  int64_t parent_available = AvailableIn(*parent, fr);
  auto q = r.quotas.find(fr);
  if (q != r.quotas.end() && q->second.borrowing_limit) {
    int64_t local = r.LocalQuota(fr);
    int64_t stored_in_parent = SaturatingSub(r.Get(r.subtree_quota, fr), local);
    int64_t used_in_parent =
        std::max<int64_t>(0, SaturatingSub(r.Get(r.usage, fr), local));
    int64_t with_max_from_parent =
        SaturatingAdd(SaturatingSub(stored_in_parent, used_in_parent),
                      *q->second.borrowing_limit);
    parent_available = std::min(with_max_from_parent, parent_available);
  }
  return SaturatingAdd(r.LocalAvailable(fr), parent_available);
}

// Kueue's potentialAvailable(node): the most the subtree rooted at `n`
// could use with no usage anywhere, within its borrowing limit.
template <typename Node>
int64_t PotentialAvailableIn(const Node& n, const FlavorResource& fr) {
  const ResourceNode& r = n.node;
  const CohortSnapshot* parent = QuotaParent(n);
  if (parent == nullptr) return r.Get(r.subtree_quota, fr);
  int64_t avail =
      SaturatingAdd(r.LocalQuota(fr), PotentialAvailableIn(*parent, fr));
  auto q = r.quotas.find(fr);
  if (q != r.quotas.end() && q->second.borrowing_limit) {
    avail = std::min(avail, SaturatingAdd(r.Get(r.subtree_quota, fr),
                                          *q->second.borrowing_limit));
  }
  return avail;
}

// Kueue's addUsage: the part of `v` that does not fit in what is left of
// the node's local quota is stored in the parent, recursively.
template <typename Node>
void AddUsageIn(Node& n, const FlavorResource& fr, int64_t v) {
  ResourceNode& r = n.node;
  int64_t local_available = r.LocalAvailable(fr);
  r.usage[fr] = SaturatingAdd(r.Get(r.usage, fr), v);
  CohortSnapshot* parent = QuotaParent(n);
  if (parent != nullptr && v > local_available) {
    AddUsageIn(*parent, fr, SaturatingSub(v, local_available));
  }
}

// Kueue's removeUsage: the parent gives back at most what the node had
// stored in it before the removal.
template <typename Node>
void RemoveUsageIn(Node& n, const FlavorResource& fr, int64_t v) {
  ResourceNode& r = n.node;
  int64_t stored_in_parent =
      SaturatingSub(r.Get(r.usage, fr), r.LocalQuota(fr));
  r.usage[fr] = SaturatingSub(r.Get(r.usage, fr), v);
  CohortSnapshot* parent = QuotaParent(n);
  if (stored_in_parent <= 0 || parent == nullptr) return;
  RemoveUsageIn(*parent, fr, std::min(v, stored_in_parent));
}

// Kueue's AmountFromQuantity: like ResourceAmount, but a CPU quota of at
// least INT64_MAX/1000 cores is unlimited (its milli-value would be within
// int64 yet is meant as "no limit").
int64_t QuotaAmount(const std::string& resource, Quantity q) {
  if (resource == "cpu" && q.milli() >= (kUnlimited / 1000) * 1000) {
    return kUnlimited;
  }
  return ResourceAmount(resource, q);
}

std::map<FlavorResource, QuotaLimits> QuotasOf(
    const std::vector<ResourceGroup>& groups) {
  std::map<FlavorResource, QuotaLimits> quotas;
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      // A covered resource the flavor omits has nominal quota 0 (Kueue's
      // validation forbids the omission; kq tolerates it).
      for (const std::string& resource : group.covered_resources) {
        quotas[{flavor.name, resource}] = QuotaLimits{};
      }
      for (const ResourceQuota& q : flavor.resources) {
        QuotaLimits limits;
        limits.nominal = QuotaAmount(q.name, q.nominal_quota);
        if (q.borrowing_limit) {
          limits.borrowing_limit = QuotaAmount(q.name, *q.borrowing_limit);
        }
        if (q.lending_limit) {
          limits.lending_limit = QuotaAmount(q.name, *q.lending_limit);
        }
        quotas[{flavor.name, q.name}] = limits;
      }
    }
  }
  return quotas;
}

// Kueue's accumulateFromChild for quotas: the child lends everything above
// its local quota. Zero entries are kept on purpose: the root's subtree
// quota then lists every flavor-resource of the tree (calculateLendable
// relies on it).
void AccumulateFromChild(ResourceNode& parent, const ResourceNode& child) {
  for (const auto& [fr, quota] : child.subtree_quota) {
    parent.subtree_quota[fr] =
        SaturatingAdd(parent.Get(parent.subtree_quota, fr),
                      SaturatingSub(quota, child.LocalQuota(fr)));
  }
}

// Recomputes subtree quotas top-down from a root (Kueue's
// updateCohortResourceNode).
void UpdateSubtreeQuota(CohortSnapshot& cohort) {
  cohort.node.subtree_quota.clear();
  for (const auto& [fr, q] : cohort.node.quotas) {
    cohort.node.subtree_quota[fr] = q.nominal;
  }
  for (CohortSnapshot* child : cohort.child_cohorts) {
    UpdateSubtreeQuota(*child);
    AccumulateFromChild(cohort.node, child->node);
  }
  for (ClusterQueueSnapshot* child : cohort.child_cluster_queues) {
    AccumulateFromChild(cohort.node, child->node);
  }
}

void CollectClusterQueues(const CohortSnapshot& cohort,
                          std::vector<std::string>& names) {
  for (const ClusterQueueSnapshot* cq : cohort.child_cluster_queues) {
    names.push_back(cq->name());
  }
  for (const CohortSnapshot* child : cohort.child_cohorts) {
    CollectClusterQueues(*child, names);
  }
}

// Kueue's clusterQueue.updateQueueStatus and inactiveReason for a queue
// that is not in a cohort cycle: sets whether the queue is active and the
// Active condition's reason and message.
void SetActiveCondition(
    ClusterQueueSnapshot& cq, const std::set<std::string>& flavors,
    const std::set<std::string>& admission_checks,
    const std::set<std::string>& inactive_checks,
    const std::map<std::string, std::string>& check_controllers) {
  std::vector<std::string> reasons, messages;
  if (cq.spec.stop_policy != StopPolicy::kNone) {
    reasons.push_back("Stopped");
    messages.push_back("is stopped");
  }
  // Kueue lists missing flavors in resource-group order.
  std::vector<std::string> missing_flavors;
  for (const ResourceGroup& group : cq.spec.resource_groups) {
    for (const FlavorQuotas& f : group.flavors) {
      if (!flavors.count(f.name)) missing_flavors.push_back(f.name);
    }
  }
  if (!missing_flavors.empty()) {
    reasons.push_back("FlavorNotFound");
    messages.push_back(absl::StrCat("references missing ResourceFlavor(s): ",
                                    absl::StrJoin(missing_flavors, ",")));
  }
  // Kueue keeps the checks in a map and sorts what it reports.
  std::set<std::string> missing_checks, inactive;
  // Kueue's updateWithAdmissionChecks: the MultiKueue and provisioning
  // checks among the existing ones, and the MultiKueue checks that do not
  // apply to every flavor of the ClusterQueue.
  std::set<std::string> multikueue, provisioning, per_flavor_multikueue;
  std::set<std::string> all_flavors;
  for (const ResourceGroup& group : cq.spec.resource_groups) {
    for (const FlavorQuotas& f : group.flavors) all_flavors.insert(f.name);
  }
  for (const AdmissionCheckStrategyRule& rule : cq.spec.admission_checks) {
    if (!admission_checks.count(rule.name)) {
      missing_checks.insert(rule.name);
      continue;
    }
    if (inactive_checks.count(rule.name)) inactive.insert(rule.name);
    auto controller = check_controllers.find(rule.name);
    if (controller == check_controllers.end()) continue;
    if (controller->second == kProvisioningRequestControllerName) {
      provisioning.insert(rule.name);
    }
    if (controller->second == kMultiKueueControllerName) {
      multikueue.insert(rule.name);
      // A rule without onFlavors applies to all flavors; one listing
      // exactly all of them is no per-flavor rule either (Kueue compares
      // the sets).
      const std::set<std::string> on(rule.on_flavors.begin(),
                                     rule.on_flavors.end());
      if (!rule.on_flavors.empty() && on != all_flavors) {
        per_flavor_multikueue.insert(rule.name);
      }
    }
  }
  if (!missing_checks.empty()) {
    reasons.push_back("AdmissionCheckNotFound");
    messages.push_back(absl::StrCat("references missing AdmissionCheck(s): ",
                                    absl::StrJoin(missing_checks, ",")));
  }
  if (!inactive.empty()) {
    reasons.push_back("AdmissionCheckInactive");
    messages.push_back(absl::StrCat("references inactive AdmissionCheck(s): ",
                                    absl::StrJoin(inactive, ",")));
  }
  if (multikueue.size() > 1) {
    reasons.push_back("MultipleMultiKueueAdmissionChecks");
    messages.push_back(
        absl::StrCat("Cannot use multiple MultiKueue AdmissionChecks on the "
                     "same ClusterQueue, found: ",
                     absl::StrJoin(multikueue, ",")));
  }
  if (!per_flavor_multikueue.empty()) {
    reasons.push_back("MultiKueueAdmissionCheckAppliedPerFlavor");
    messages.push_back(
        absl::StrCat("Cannot specify MultiKueue AdmissionCheck per flavor, "
                     "found: ",
                     absl::StrJoin(per_flavor_multikueue, ",")));
  }
  // Provisioning belongs on the workers, not on a MultiKueue manager.
  if (!multikueue.empty() && !provisioning.empty()) {
    reasons.push_back("MultiKueueWithProvisioningRequest");
    messages.push_back(absl::StrCat(
        "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks "
        "together, found: ",
        absl::StrJoin(multikueue, ","), ", ",
        absl::StrJoin(provisioning, ",")));
  }
  if (reasons.empty()) {
    cq.active = true;
    cq.active_reason = "Ready";
    cq.active_message = "Can admit new workloads";
    return;
  }
  cq.active = false;
  cq.active_reason = reasons.front();
  cq.active_message = absl::StrCat(
      "Can't admit new workloads: ", absl::StrJoin(messages, ", "), ".");
  if (cq.active_message.size() > kMaxConditionMessageSize) {
    constexpr char kSuffix[] = " ...";
    cq.active_message.resize(kMaxConditionMessageSize - (sizeof(kSuffix) - 1));
    cq.active_message += kSuffix;
  }
}

}  // namespace

int64_t ResourceNode::Get(const FlavorResourceQuantities& m,
                          const FlavorResource& fr) const {
  auto it = m.find(fr);
  return it == m.end() ? 0 : it->second;
}

int64_t ResourceNode::LocalQuota(const FlavorResource& fr) const {
  auto q = quotas.find(fr);
  if (q == quotas.end() || !q->second.lending_limit) return 0;
  return std::max<int64_t>(
      0, SaturatingSub(Get(subtree_quota, fr), *q->second.lending_limit));
}

int64_t ResourceNode::LocalAvailable(const FlavorResource& fr) const {
  return std::max<int64_t>(0, SaturatingSub(LocalQuota(fr), Get(usage, fr)));
}

int64_t ClusterQueueSnapshot::Available(const FlavorResource& fr) const {
  return std::max<int64_t>(0, AvailableIn(*this, fr));
}

int64_t ClusterQueueSnapshot::PotentialAvailable(
    const FlavorResource& fr) const {
  return PotentialAvailableIn(*this, fr);
}

bool ClusterQueueSnapshot::Fits(const FlavorResourceQuantities& usage) const {
  for (const auto& [fr, v] : usage) {
    if (Available(fr) < v) return false;
  }
  return true;
}

bool ClusterQueueSnapshot::BorrowingWith(const FlavorResource& fr,
                                         int64_t extra) const {
  return node.Get(node.subtree_quota, fr) <
         SaturatingAdd(node.Get(node.usage, fr), extra);
}

int64_t ClusterQueueSnapshot::Borrowed(const FlavorResource& fr) const {
  if (!HasParent()) return 0;
  auto q = node.quotas.find(fr);
  int64_t nominal = q == node.quotas.end() ? 0 : q->second.nominal;
  return std::max<int64_t>(0, SaturatingSub(node.Get(node.usage, fr), nominal));
}

void ClusterQueueSnapshot::MarkTreeChanged() {
  if (tree_generation_slot != nullptr) {
    *tree_generation_slot = Cache::NextCacheGeneration();
  }
}

void ClusterQueueSnapshot::AddUsage(const FlavorResourceQuantities& usage) {
  if (cache_generation != nullptr) {
    *cache_generation = Cache::NextCacheGeneration();
  }
  if (simulations == nullptr || *simulations == 0) MarkTreeChanged();
  for (const auto& [fr, v] : usage) AddUsageIn(*this, fr, v);
}

void ClusterQueueSnapshot::RemoveUsage(const FlavorResourceQuantities& usage) {
  if (cache_generation != nullptr) {
    *cache_generation = Cache::NextCacheGeneration();
  }
  if (simulations == nullptr || *simulations == 0) MarkTreeChanged();
  for (const auto& [fr, v] : usage) RemoveUsageIn(*this, fr, v);
}

uint64_t Cache::NextCacheGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

int64_t CohortSnapshot::Available(const FlavorResource& fr) const {
  return AvailableIn(*this, fr);
}

int64_t CohortSnapshot::PotentialAvailable(const FlavorResource& fr) const {
  return PotentialAvailableIn(*this, fr);
}

bool CohortSnapshot::BorrowingWith(const FlavorResource& fr,
                                   int64_t extra) const {
  return node.Get(node.subtree_quota, fr) <
         SaturatingAdd(node.Get(node.usage, fr), extra);
}

void Cache::Rebuild(const std::map<std::string, ClusterQueue>& cluster_queues,
                    const std::map<std::string, Cohort>& cohorts,
                    const std::set<std::string>& flavors,
                    const std::set<std::string>& admission_checks) {
  Rebuild(cluster_queues, cohorts, flavors, admission_checks, {});
}

void Cache::Rebuild(
    const std::map<std::string, ClusterQueue>& cluster_queues,
    const std::map<std::string, Cohort>& cohorts,
    const std::set<std::string>& flavors,
    const std::set<std::string>& admission_checks,
    const std::set<std::string>& inactive_admission_checks,
    const std::map<std::string, std::string>& admission_check_controllers) {
  generation_ = NextCacheGeneration();
  cluster_queues_.clear();
  cluster_queues_by_name_.clear();
  cohorts_.clear();

  auto cohort_node = [&](const std::string& name) -> CohortSnapshot* {
    auto& slot = cohorts_[name];
    if (!slot) {
      slot = std::make_unique<CohortSnapshot>();
      slot->name = name;
    }
    return slot.get();
  };

  // 1. Cohorts, explicit ones with their quota, and their parents.
  for (const auto& [name, cohort] : cohorts) {
    CohortSnapshot* node = cohort_node(name);
    node->node.quotas = QuotasOf(cohort.resource_groups);
    node->fair_sharing_weight = cohort.fair_sharing_weight;
  }
  for (const auto& [name, cohort] : cohorts) {
    if (cohort.parent_name.empty()) continue;
    CohortSnapshot* node = cohort_node(name);
    CohortSnapshot* parent = cohort_node(cohort.parent_name);
    node->parent = parent;
    parent->child_cohorts.push_back(node);
  }

  // 2. ClusterQueues, joining (possibly implicit) cohorts.
  for (const auto& [name, spec] : cluster_queues) {
    auto cq = std::make_unique<ClusterQueueSnapshot>();
    cq->cache_generation = &generation_;
    cq->simulations = &simulations_;
    cq->spec = spec;
    cq->node.quotas = QuotasOf(spec.resource_groups);
    for (const auto& [fr, q] : cq->node.quotas) {
      cq->node.subtree_quota[fr] = q.nominal;
    }
    if (!spec.cohort_name.empty()) {
      cq->parent = cohort_node(spec.cohort_name);
      cq->parent->child_cluster_queues.push_back(cq.get());
    }
    cluster_queues_by_name_[name] = cq.get();
    cluster_queues_[name] = std::move(cq);
  }

  // 3. Cycles: a cohort whose chain of parents loops has no root.
  for (auto& [name, cohort] : cohorts_) {
    std::set<const CohortSnapshot*> seen;
    for (CohortSnapshot* c = cohort.get(); c != nullptr; c = c->parent) {
      if (!seen.insert(c).second) {
        cohort->has_cycle = true;
        break;
      }
    }
  }

  // 4. Subtree quotas, from each root down.
  for (auto& [name, cohort] : cohorts_) {
    if (cohort->parent == nullptr) UpdateSubtreeQuota(*cohort);
  }

  // Each tree starts at a generation no earlier tree had.
  for (auto& [name, cq] : cluster_queues_) {
    cq->own_tree_generation = NextCacheGeneration();
    cq->tree_generation_slot = &cq->own_tree_generation;
    if (cq->parent == nullptr || cq->parent->has_cycle) continue;
    CohortSnapshot* root = cq->parent;
    while (root->parent != nullptr) root = root->parent;
    if (root->tree_generation == 0) {
      root->tree_generation = NextCacheGeneration();
    }
    cq->tree_generation_slot = &root->tree_generation;
  }

  // 5. Active condition of each ClusterQueue (Kueue's inactiveReason).
  for (auto& [name, cq] : cluster_queues_) {
    if (cq->parent != nullptr && cq->parent->has_cycle) {
      // Kueue fails to add or update a ClusterQueue whose cohort is in a
      // cycle, which leaves its status "pending" with none of the listed
      // reasons: inactiveReason then reports Unknown. (A queue that was
      // active before the cycle formed keeps Kueue's condition but is left
      // out of every snapshot; kq, which rebuilds from configuration,
      // reports both the same way.)
      cq->active = false;
      cq->active_reason = "Unknown";
      cq->active_message = "Can't admit new workloads.";
      continue;
    }
    SetActiveCondition(*cq, flavors, admission_checks,
                       inactive_admission_checks, admission_check_controllers);
  }
}

ClusterQueueSnapshot* Cache::FindClusterQueue(const std::string& name) {
  auto it = cluster_queues_by_name_.find(name);
  return it == cluster_queues_by_name_.end() ? nullptr : it->second;
}

const ClusterQueueSnapshot* Cache::FindClusterQueue(
    const std::string& name) const {
  auto it = cluster_queues_by_name_.find(name);
  return it == cluster_queues_by_name_.end() ? nullptr : it->second;
}

CohortSnapshot* Cache::FindCohort(const std::string& name) {
  auto it = cohorts_.find(name);
  return it == cohorts_.end() ? nullptr : it->second.get();
}

const CohortSnapshot* Cache::FindCohort(const std::string& name) const {
  auto it = cohorts_.find(name);
  return it == cohorts_.end() ? nullptr : it->second.get();
}

std::vector<std::string> Cache::ClusterQueuesInTree(
    const std::string& cluster_queue) const {
  std::vector<std::string> names;
  const ClusterQueueSnapshot* cq = FindClusterQueue(cluster_queue);
  if (cq == nullptr) return names;
  if (cq->parent == nullptr) {
    names.push_back(cq->name());
    return names;
  }
  // Kueue silently skips trees with a cycle; they are reconciled once the
  // cycle is removed.
  if (cq->parent->has_cycle) return names;
  const CohortSnapshot* root = cq->parent;
  while (root->parent != nullptr) root = root->parent;
  CollectClusterQueues(*root, names);
  std::sort(names.begin(), names.end());
  return names;
}

int Height(const CohortSnapshot& cohort) {
  int child_count = static_cast<int>(cohort.child_cohorts.size() +
                                     cohort.child_cluster_queues.size());
  int height = std::min(child_count, 1);
  for (const CohortSnapshot* child : cohort.child_cohorts) {
    // Only a cohort of a cycle has a child in the cycle; stopping there
    // keeps the recursion finite.
    if (child->has_cycle) continue;
    height = std::max(height, Height(*child) + 1);
  }
  return height;
}

std::pair<int, bool> FindHeightOfLowestSubtreeThatFits(
    const ClusterQueueSnapshot& cq, const FlavorResource& fr, int64_t value) {
  if (!cq.BorrowingWith(fr, value) || !cq.HasParent()) {
    return {0, cq.HasParent()};
  }
  int64_t remaining = SaturatingSub(value, cq.node.LocalAvailable(fr));
  const CohortSnapshot* root = cq.parent;
  for (const CohortSnapshot* c = cq.parent; c != nullptr; c = c->parent) {
    if (!c->BorrowingWith(fr, remaining)) {
      return {Height(*c), c->parent != nullptr};
    }
    remaining = SaturatingSub(remaining, c->node.LocalAvailable(fr));
    root = c;
    if (c->has_cycle) break;  // no root to reach
  }
  return {Height(*root), false};
}

std::map<std::string, int64_t> Lendable(const CohortSnapshot& cohort) {
  const CohortSnapshot* root = &cohort;
  while (const CohortSnapshot* parent = QuotaParent(*root)) root = parent;
  std::map<std::string, int64_t> lendable;
  for (const auto& [fr, quota] : root->node.subtree_quota) {
    lendable[fr.resource] =
        SaturatingAdd(lendable[fr.resource], cohort.PotentialAvailable(fr));
  }
  return lendable;
}

FlavorResourceQuantities UsageOf(const Admission& admission) {
  FlavorResourceQuantities usage;
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    for (const auto& [resource, quantity] : psa.resource_usage) {
      auto flavor = psa.flavors.find(resource);
      if (flavor == psa.flavors.end()) continue;
      FlavorResource fr{flavor->second, resource};
      usage[fr] = SaturatingAdd(usage[fr], ResourceAmount(resource, quantity));
    }
  }
  return usage;
}

FlavorResourceQuantities UsageOf(const Workload& workload,
                                 bool reclaimable_pods) {
  FlavorResourceQuantities usage;
  if (!workload.admission.has_value()) return usage;
  std::map<std::string, int32_t> spec_counts;
  for (const PodSet& ps : workload.pod_sets) spec_counts[ps.name] = ps.count;
  const std::map<std::string, int32_t> counts_after_reclaim =
      reclaimable_pods ? PodSetsCountsAfterReclaim(workload) : spec_counts;
  for (const PodSetAssignment& psa : workload.admission->pod_set_assignments) {
    int32_t admitted = psa.count;
    if (admitted == 0) {
      auto spec = spec_counts.find(psa.name);
      admitted = spec == spec_counts.end() ? 0 : spec->second;
    }
    auto after = counts_after_reclaim.find(psa.name);
    // A pod set admitted with fewer pods than it has left was partially
    // admitted: its usage stands.
    const bool scale = after != counts_after_reclaim.end() && admitted > 0 &&
                       after->second < admitted;
    for (const auto& [resource, quantity] : psa.resource_usage) {
      auto flavor = psa.flavors.find(resource);
      if (flavor == psa.flavors.end()) continue;
      int64_t amount = ResourceAmount(resource, quantity);
      if (scale) amount = SaturatingMul(amount / admitted, after->second);
      FlavorResource fr{flavor->second, resource};
      usage[fr] = SaturatingAdd(usage[fr], amount);
    }
  }
  return usage;
}

}  // namespace kq::cache
