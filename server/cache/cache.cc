#include "server/cache/cache.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kq::cache {
namespace {

// Kueue's available(node): how much more the subtree rooted at `node` may
// use, walking up through the cohorts. May be negative.
template <typename Node>
int64_t AvailableIn(const Node& n, const FlavorResource& fr);

int64_t AvailableCohort(const CohortSnapshot& c, const FlavorResource& fr);

template <typename Node>
int64_t AvailableIn(const Node& n, const FlavorResource& fr) {
  const ResourceNode& r = n.node;
  if (n.parent == nullptr) {
    return SaturatingSub(r.Get(r.subtree_quota, fr), r.Get(r.usage, fr));
  }
  int64_t parent_available = AvailableCohort(*n.parent, fr);
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

int64_t AvailableCohort(const CohortSnapshot& c, const FlavorResource& fr) {
  return AvailableIn(c, fr);
}

template <typename Node>
int64_t PotentialAvailableIn(const Node& n, const FlavorResource& fr) {
  const ResourceNode& r = n.node;
  if (n.parent == nullptr) return r.Get(r.subtree_quota, fr);
  int64_t avail =
      SaturatingAdd(r.LocalQuota(fr), PotentialAvailableIn(*n.parent, fr));
  auto q = r.quotas.find(fr);
  if (q != r.quotas.end() && q->second.borrowing_limit) {
    avail = std::min(avail, SaturatingAdd(r.Get(r.subtree_quota, fr),
                                          *q->second.borrowing_limit));
  }
  return avail;
}

template <typename Node>
void AddUsageIn(Node& n, const FlavorResource& fr, int64_t v) {
  ResourceNode& r = n.node;
  int64_t local_available = r.LocalAvailable(fr);
  r.usage[fr] = SaturatingAdd(r.Get(r.usage, fr), v);
  if (n.parent != nullptr && v > local_available) {
    AddUsageIn(*n.parent, fr, SaturatingSub(v, local_available));
  }
}

template <typename Node>
void RemoveUsageIn(Node& n, const FlavorResource& fr, int64_t v) {
  ResourceNode& r = n.node;
  int64_t stored_in_parent =
      SaturatingSub(r.Get(r.usage, fr), r.LocalQuota(fr));
  r.usage[fr] = SaturatingSub(r.Get(r.usage, fr), v);
  if (stored_in_parent <= 0 || n.parent == nullptr) return;
  RemoveUsageIn(*n.parent, fr, std::min(v, stored_in_parent));
}

std::map<FlavorResource, QuotaLimits> QuotasOf(
    const std::vector<ResourceGroup>& groups) {
  std::map<FlavorResource, QuotaLimits> quotas;
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      // A covered resource the flavor omits has nominal quota 0.
      for (const std::string& resource : group.covered_resources) {
        quotas[{flavor.name, resource}] = QuotaLimits{};
      }
      for (const ResourceQuota& q : flavor.resources) {
        QuotaLimits limits;
        limits.nominal = ResourceAmount(q.name, q.nominal_quota);
        if (q.borrowing_limit) {
          limits.borrowing_limit = ResourceAmount(q.name, *q.borrowing_limit);
        }
        if (q.lending_limit) {
          limits.lending_limit = ResourceAmount(q.name, *q.lending_limit);
        }
        quotas[{flavor.name, q.name}] = limits;
      }
    }
  }
  return quotas;
}

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

void ClusterQueueSnapshot::AddUsage(const FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) AddUsageIn(*this, fr, v);
}

void ClusterQueueSnapshot::RemoveUsage(const FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) RemoveUsageIn(*this, fr, v);
}

void Cache::Rebuild(const std::map<std::string, ClusterQueue>& cluster_queues,
                    const std::map<std::string, Cohort>& cohorts,
                    const std::set<std::string>& flavors,
                    const std::set<std::string>& admission_checks) {
  cluster_queues_.clear();
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
    cq->spec = spec;
    cq->node.quotas = QuotasOf(spec.resource_groups);
    for (const auto& [fr, q] : cq->node.quotas) {
      cq->node.subtree_quota[fr] = q.nominal;
    }
    if (!spec.cohort_name.empty()) {
      cq->parent = cohort_node(spec.cohort_name);
      cq->parent->child_cluster_queues.push_back(cq.get());
    }
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

  // 5. Active condition of each ClusterQueue (Kueue's inactiveReason).
  for (auto& [name, cq] : cluster_queues_) {
    std::vector<std::string> reasons, messages;
    if (cq->spec.stop_policy != StopPolicy::kNone) {
      reasons.push_back("Stopped");
      messages.push_back("is stopped");
    }
    std::vector<std::string> missing_flavors;
    for (const ResourceGroup& group : cq->spec.resource_groups) {
      for (const FlavorQuotas& f : group.flavors) {
        if (!flavors.count(f.name)) missing_flavors.push_back(f.name);
      }
    }
    if (!missing_flavors.empty()) {
      reasons.push_back("FlavorNotFound");
      messages.push_back(absl::StrCat("references missing ResourceFlavor(s): [",
                                      absl::StrJoin(missing_flavors, ","),
                                      "]"));
    }
    std::vector<std::string> missing_checks;
    for (const AdmissionCheckStrategyRule& rule : cq->spec.admission_checks) {
      if (!admission_checks.count(rule.name)) {
        missing_checks.push_back(rule.name);
      }
    }
    if (!missing_checks.empty()) {
      reasons.push_back("AdmissionCheckNotFound");
      messages.push_back(absl::StrCat("references missing AdmissionCheck(s): [",
                                      absl::StrJoin(missing_checks, ","), "]"));
    }
    bool in_cycle = cq->parent != nullptr && cq->parent->has_cycle;
    if (reasons.empty() && !in_cycle) {
      cq->active = true;
      cq->active_reason = "Ready";
      cq->active_message = "Can admit new workloads";
    } else if (reasons.empty()) {
      cq->active = false;
      cq->active_reason = "Unknown";
      cq->active_message = "Can't admit new workloads.";
    } else {
      cq->active = false;
      cq->active_reason = reasons.front();
      cq->active_message = absl::StrCat(
          "Can't admit new workloads: ", absl::StrJoin(messages, ", "), ".");
    }
  }
}

ClusterQueueSnapshot* Cache::FindClusterQueue(const std::string& name) {
  auto it = cluster_queues_.find(name);
  return it == cluster_queues_.end() ? nullptr : it->second.get();
}

const ClusterQueueSnapshot* Cache::FindClusterQueue(
    const std::string& name) const {
  auto it = cluster_queues_.find(name);
  return it == cluster_queues_.end() ? nullptr : it->second.get();
}

CohortSnapshot* Cache::FindCohort(const std::string& name) {
  auto it = cohorts_.find(name);
  return it == cohorts_.end() ? nullptr : it->second.get();
}

int Height(const CohortSnapshot& cohort) {
  int child_count = static_cast<int>(cohort.child_cohorts.size() +
                                     cohort.child_cluster_queues.size());
  int height = std::min(child_count, 1);
  for (const CohortSnapshot* child : cohort.child_cohorts) {
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
    const ResourceNode& r = c->node;
    bool borrowing = r.Get(r.subtree_quota, fr) <
                     SaturatingAdd(r.Get(r.usage, fr), remaining);
    if (!borrowing) return {Height(*c), c->parent != nullptr};
    remaining = SaturatingSub(remaining, r.LocalAvailable(fr));
    root = c;
    if (c->has_cycle) break;  // no root to reach
  }
  return {Height(*root), false};
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

}  // namespace kq::cache
