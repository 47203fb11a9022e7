#include "server/preemption/oracle.h"

#include <utility>

namespace kq::preemption {

std::set<cache::FlavorResource> FlavorResourcesNeedPreemption(
    const scheduler::Assignment& assignment) {
  std::set<cache::FlavorResource> frs;
  for (const scheduler::PodSetAssignmentResult& ps : assignment.pod_sets) {
    for (const auto& [resource, flavor] : ps.flavors) {
      if (flavor.mode == scheduler::AssignmentMode::kPreempt) {
        frs.insert(cache::FlavorResource{flavor.name, resource});
      }
    }
  }
  return frs;
}

Oracle::Oracle(cache::Cache& cache, const HoldingQuota& holders, absl::Time now,
               Features features, std::optional<FairSharingConfig> fair_sharing,
               WithinNominalMemo* memo)
    : cache_(cache),
      holders_(holders),
      now_(now),
      features_(features),
      fair_sharing_(std::move(fair_sharing)),
      memo_(memo != nullptr ? memo : &own_memo_) {}

std::vector<Target> Oracle::Search(const std::string& cluster_queue,
                                   const Workload& workload,
                                   cache::FlavorResourceQuantities requests,
                                   std::set<cache::FlavorResource> frs) const {
  if (last_search_.has_value() &&
      last_search_->generation == cache_.generation() &&
      last_search_->workload == &workload &&
      last_search_->cluster_queue == cluster_queue &&
      last_search_->requests == requests && last_search_->frs == frs) {
    return last_search_->targets;
  }
  Preemptor preemptor{.workload = &workload,
                      .cluster_queue = cluster_queue,
                      .requests = std::move(requests),
                      .frs_need_preemption = std::move(frs)};
  if (memo_generation_ != cache_.generation()) {
    memo_->ClearUsage();
    memo_generation_ = cache_.generation();
  }
  std::vector<Target> targets =
      fair_sharing_.has_value() ? FairTargets(cache_, preemptor, holders_, now_,
                                              features_, *fair_sharing_)
                                : ClassicalTargets(cache_, preemptor, holders_,
                                                   now_, features_, memo_);
  // The search put back every usage it changed: the tree is as it was.
  memo_generation_ = cache_.generation();
  last_search_ = LastSearch{.generation = cache_.generation(),
                            .workload = &workload,
                            .cluster_queue = cluster_queue,
                            .requests = std::move(preemptor.requests),
                            .frs = std::move(preemptor.frs_need_preemption),
                            .targets = targets};
  return targets;
}

scheduler::PreemptionSimulation Oracle::SimulatePreemption(
    const cache::ClusterQueueSnapshot& cq, const Workload& workload,
    const cache::FlavorResource& fr, int64_t quantity) const {
  std::vector<Target> targets =
      Search(cq.name(), workload, {{fr, quantity}}, {fr});
  if (targets.empty()) {
    return {scheduler::PreemptionPossibility::kNoCandidates,
            cache::FindHeightOfLowestSubtreeThatFits(cq, fr, quantity).first};
  }
  // The borrowing level once the targets are gone (Kueue's
  // SimulateWorkloadUsageRemoval, reverted right after).
  const uint64_t generation_before_removal = cache_.generation();
  std::vector<
      std::pair<cache::ClusterQueueSnapshot*, cache::FlavorResourceQuantities>>
      removed;
  for (const Target& target : targets) {
    cache::ClusterQueueSnapshot* holder =
        cache_.FindClusterQueue(target.cluster_queue);
    if (holder == nullptr || !target.workload->admission.has_value()) continue;
    removed.emplace_back(holder, cache::UsageOf(*target.workload));
    holder->RemoveUsage(removed.back().second);
  }
  const int borrowing =
      cache::FindHeightOfLowestSubtreeThatFits(cq, fr, quantity).first;
  for (auto& [holder, usage] : removed) holder->AddUsage(usage);
  // Put back as it was: the search just made, and what the searches know
  // of the tree, stay valid.
  if (last_search_.has_value()) last_search_->generation = cache_.generation();
  if (memo_generation_ == generation_before_removal) {
    memo_generation_ = cache_.generation();
  }

  for (const Target& target : targets) {
    if (target.cluster_queue == cq.name()) {
      return {scheduler::PreemptionPossibility::kPreempt, borrowing};
    }
  }
  return {scheduler::PreemptionPossibility::kReclaim, borrowing};
}

std::vector<scheduler::PreemptionTarget> Oracle::GetTargets(
    const cache::ClusterQueueSnapshot& cq, const Workload& workload,
    const scheduler::Assignment& assignment) const {
  std::vector<scheduler::PreemptionTarget> out;
  for (Target& target : Search(cq.name(), workload, assignment.usage,
                               FlavorResourcesNeedPreemption(assignment))) {
    out.push_back({target.workload, std::move(target.reason),
                   std::move(target.cluster_queue)});
  }
  return out;
}

}  // namespace kq::preemption
