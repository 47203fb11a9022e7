#include "server/preemption/fair.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "server/cache/fair_sharing.h"
#include "server/preemption/fair_ordering.h"
#include "server/preemption/ordering.h"
#include "server/preemption/policy.h"

namespace kq::preemption {
namespace {

using cache::ClusterQueueSnapshot;
using cache::CohortSnapshot;
using cache::DRS;
using cache::FlavorResource;

// Kueue's fairsharing.Strategy: whether a victim may be taken, given the
// preemptor's share with its workload, the target's share now and the
// target's share once the victim is gone.
using Strategy = bool (*)(const DRS& preemptor_new_share,
                          const DRS& target_old_share,
                          const DRS& target_new_share);

// Rule S2-a.
bool LessThanOrEqualToFinalShare(const DRS& preemptor_new_share,
                                 const DRS& /*target_old_share*/,
                                 const DRS& target_new_share) {
  return cache::CompareDRS(preemptor_new_share, target_new_share) <= 0;
}

// Rule S2-b.
bool LessThanInitialShare(const DRS& preemptor_new_share,
                          const DRS& target_old_share,
                          const DRS& /*target_new_share*/) {
  return cache::CompareDRS(preemptor_new_share, target_old_share) < 0;
}

// Kueue's parseStrategies.
std::vector<Strategy> ParseStrategies(const FairSharingConfig& config) {
  if (config.preemption_strategies.empty()) {
    return {LessThanOrEqualToFinalShare, LessThanInitialShare};
  }
  std::vector<Strategy> strategies;
  for (FairSharingStrategy s : config.preemption_strategies) {
    strategies.push_back(s == FairSharingStrategy::kLessThanInitialShare
                             ? LessThanInitialShare
                             : LessThanOrEqualToFinalShare);
  }
  return strategies;
}

// Kueue's fsStrategyUnsatisfiable: a preemptor whose share is +Inf (it
// borrows on a fair weight of 0) ranks above any target whose share is
// finite, before and after any removal (removing usage never raises a
// share), so neither strategy can pass.
bool StrategyUnsatisfiable(const DRS& preemptor_new_share,
                           const DRS& target_old_share) {
  auto is_inf = [](const DRS& d) {
    const double share = d.PreciseWeightedShare();
    return std::isinf(share) && share > 0;
  };
  return is_inf(preemptor_new_share) && !is_inf(target_old_share);
}

// The parent that the quota tree walks up to: none for a parent in a
// cohort cycle (Kueue leaves cyclic cohorts out of its snapshot).
CohortSnapshot* TreeParent(const ClusterQueueSnapshot& cq) {
  return cq.parent != nullptr && !cq.parent->has_cycle ? cq.parent : nullptr;
}

// Kueue's SubtreeClusterQueues.
void CollectSubtreeClusterQueues(
    const CohortSnapshot& cohort,
    std::vector<const ClusterQueueSnapshot*>* out) {
  out->insert(out->end(), cohort.child_cluster_queues.begin(),
              cohort.child_cluster_queues.end());
  for (const CohortSnapshot* child : cohort.child_cohorts) {
    CollectSubtreeClusterQueues(*child, out);
  }
}

// The search state for one preemptor (Kueue's preemptionCtx with the fair
// half of the Preemptor). Lives for one call.
class FairSearch {
 public:
  FairSearch(cache::Cache& cache, ClusterQueueSnapshot& cq,
             const Preemptor& preemptor, const HoldingQuota& holders,
             absl::Time now, const Features& features, FairSearchStats* stats)
      : cache_(cache),
        cq_(cq),
        preemptor_(preemptor),
        now_(now),
        features_(features),
        stats_(stats),
        holders_(holders) {}

  std::vector<Target> Run(const std::vector<Strategy>& strategies) {
    std::vector<Candidate> candidates = FindCandidates();
    if (candidates.empty()) return {};
    std::sort(candidates.begin(), candidates.end(),
              CandidatesOrdering(cq_.name(), now_, features_));

    // Shares must count the incoming workload.
    cq_.AddUsage(preemptor_.requests);
    std::vector<Target> targets;
    std::vector<Candidate> retry;
    bool fits =
        RunFirstStrategy(candidates, strategies.front(), &targets, &retry);
    if (!fits && strategies.size() > 1) {
      fits = RunSecondStrategy(retry, &targets);
    }
    cq_.RemoveUsage(preemptor_.requests);

    if (!fits) {
      Restore(targets);
      return {};
    }
    FillBack(targets);
    Restore(targets);
    return targets;
  }

 private:
  // Kueue's findCandidates.
  std::vector<Candidate> FindCandidates() const {
    std::vector<Candidate> candidates;
    if (cq_.spec.preemption.within_cluster_queue != kPolicyNever) {
      AppendCandidates(cq_, cq_.spec.preemption.within_cluster_queue,
                       &candidates);
    }
    CohortSnapshot* parent = TreeParent(cq_);
    if (parent != nullptr &&
        cq_.spec.preemption.reclaim_within_cohort != kPolicyNever) {
      const CohortSnapshot* root = parent;
      while (root->parent != nullptr) root = root->parent;
      std::vector<const ClusterQueueSnapshot*> cqs;
      CollectSubtreeClusterQueues(*root, &cqs);
      for (const ClusterQueueSnapshot* other : cqs) {
        // Nothing to reclaim from itself or from queues within nominal.
        if (other == &cq_ || !IsBorrowingInResourcesNeedingPreemption(*other)) {
          continue;
        }
        AppendCandidates(*other, cq_.spec.preemption.reclaim_within_cohort,
                         &candidates);
      }
    }
    return candidates;
  }

  // Kueue's findCandidatesForPolicy.
  void AppendCandidates(const ClusterQueueSnapshot& cq,
                        const std::string& policy,
                        std::vector<Candidate>* out) const {
    for (const Workload* workload : holders_.InClusterQueue(cq.name())) {
      if (!SatisfiesPreemptionPolicy(*preemptor_.workload, *workload, policy,
                                     features_) ||
          !WorkloadUsesResources(*workload, preemptor_.frs_need_preemption)) {
        continue;
      }
      out->push_back({.workload = workload, .cluster_queue = cq.name()});
    }
  }

  // Kueue's cqIsBorrowing.
  bool IsBorrowingInResourcesNeedingPreemption(
      const ClusterQueueSnapshot& cq) const {
    if (TreeParent(cq) == nullptr) return false;
    for (const FlavorResource& fr : preemptor_.frs_need_preemption) {
      if (cq.Borrowing(fr)) return true;
    }
    return false;
  }

  // Kueue's queueWithinNominalInResourcesNeedingPreemption: usage at most
  // nominal on every contested flavor-resource.
  bool WithinNominalInResourcesNeedingPreemption() const {
    for (const FlavorResource& fr : preemptor_.frs_need_preemption) {
      if (cq_.Borrowing(fr)) return false;
    }
    return true;
  }

  // Kueue's runFirstFsStrategy. Returns whether the preemptor fits; fills
  // `retry` with the candidates the strategy passed over, for rule S2-b.
  bool RunFirstStrategy(const std::vector<Candidate>& candidates,
                        Strategy strategy, std::vector<Target>* targets,
                        std::vector<Candidate>* retry) {
    TargetClusterQueueOrdering ordering(cq_, candidates, now_, features_);
    // A preemptor within its nominal quota on the contested resources (its
    // workload counted) is entitled to it whatever the shares, so every
    // candidate from another ClusterQueue may be taken; nothing is left for
    // the second strategy then.
    const bool preemptor_within_nominal =
        features_.fair_sharing_preempt_within_nominal &&
        WithinNominalInResourcesNeedingPreemption();
    while (ClusterQueueSnapshot* target = ordering.Next()) {
      if (ordering.InClusterQueuePreemption(*target)) {
        Take(ordering.PopWorkload(*target), kReasonInClusterQueue, targets);
        if (FitsForFairSharing()) return true;
        continue;
      }
      if (preemptor_within_nominal) {
        Take(ordering.PopWorkload(*target), kReasonInCohortReclamation,
             targets);
        if (FitsForFairSharing()) return true;
        continue;
      }

      const auto [preemptor_new_share, target_old_share] =
          ordering.ComputeShares(*target);
      if (StrategyUnsatisfiable(preemptor_new_share, target_old_share)) {
        // The candidates still go to rule S2-b, which recomputes the shares
        // once this loop may have changed the tree.
        if (stats_ != nullptr) ++stats_->skipped_target_cluster_queues;
        while (ordering.HasWorkload(*target)) {
          retry->push_back(ordering.PopWorkload(*target));
        }
        continue;
      }
      bool evaluated = false;
      bool fits = false;
      while (ordering.HasWorkload(*target)) {
        Candidate candidate = ordering.PopWorkload(*target);
        const DRS target_new_share = ordering.ComputeTargetShareAfterRemoval(
            *target, *candidate.workload);
        evaluated = true;
        if (!strategy(preemptor_new_share, target_old_share,
                      target_new_share)) {
          retry->push_back(std::move(candidate));
          continue;
        }
        Take(candidate, kReasonInCohortFairSharing, targets);
        fits = FitsForFairSharing();
        // Otherwise the shares changed: the next target may be another
        // ClusterQueue.
        break;
      }
      if (evaluated && stats_ != nullptr) ++stats_->first_strategy_evaluations;
      if (fits) return true;
    }
    return false;
  }

  // Kueue's runSecondFsStrategy (rule S2-b over the candidates the first
  // strategy passed over): at most one victim per ClusterQueue, as the rule
  // does not depend on which workload goes.
  bool RunSecondStrategy(const std::vector<Candidate>& retry,
                         std::vector<Target>* targets) {
    TargetClusterQueueOrdering ordering(cq_, retry, now_, features_);
    while (ClusterQueueSnapshot* target = ordering.Next()) {
      const auto [preemptor_new_share, target_old_share] =
          ordering.ComputeShares(*target);
      const bool passed =
          LessThanInitialShare(preemptor_new_share, target_old_share, DRS{});
      Candidate candidate = ordering.PopWorkload(*target);
      if (stats_ != nullptr) ++stats_->second_strategy_evaluations;
      if (passed) {
        Take(candidate, kReasonInCohortFairSharing, targets);
        if (FitsForFairSharing()) return true;
      }
      ordering.DropQueue(*target);
    }
    return false;
  }

  // Kueue's workloadFits with borrowing allowed (without TAS).
  bool Fits() const {
    for (const auto& [fr, value] : preemptor_.requests) {
      if (value > cq_.Available(fr)) return false;
    }
    return true;
  }

  // Kueue's workloadFitsForFairSharing: Fits() without the incoming
  // workload's usage, which the search keeps in the tree for the shares.
  bool FitsForFairSharing() {
    cq_.RemoveUsage(preemptor_.requests);
    const bool fits = Fits();
    cq_.AddUsage(preemptor_.requests);
    return fits;
  }

  // Kueue's fillBackWorkloads with borrowing allowed.
  void FillBack(std::vector<Target>& targets) {
    for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
      Add(targets[i]);
      if (Fits()) {
        targets[i] = std::move(targets.back());
        targets.pop_back();
      } else {
        Remove(targets[i]);
      }
    }
  }

  void Take(const Candidate& candidate, const char* reason,
            std::vector<Target>* targets) {
    targets->push_back({.workload = candidate.workload,
                        .reason = reason,
                        .cluster_queue = std::string(candidate.cluster_queue)});
    Remove(targets->back());
  }

  void Restore(const std::vector<Target>& targets) {
    for (const Target& t : targets) Add(t);
  }

  void Remove(const Target& target) {
    cache_.FindClusterQueue(target.cluster_queue)
        ->RemoveUsage(cache::UsageOf(*target.workload));
  }

  void Add(const Target& target) {
    cache_.FindClusterQueue(target.cluster_queue)
        ->AddUsage(cache::UsageOf(*target.workload));
  }

  cache::Cache& cache_;
  ClusterQueueSnapshot& cq_;
  const Preemptor& preemptor_;
  const absl::Time now_;
  const Features features_;
  FairSearchStats* stats_;
  const HoldingQuota& holders_;
};

}  // namespace

std::vector<Target> FairTargets(cache::Cache& cache, const Preemptor& preemptor,
                                const HoldingQuota& holders, absl::Time now,
                                const Features& features,
                                const FairSharingConfig& config,
                                FairSearchStats* stats) {
  ClusterQueueSnapshot* cq = cache.FindClusterQueue(preemptor.cluster_queue);
  if (cq == nullptr || preemptor.workload == nullptr) return {};
  FairSearch search(cache, *cq, preemptor, holders, now, features, stats);
  return search.Run(ParseStrategies(config));
}

std::vector<Target> FairTargets(cache::Cache& cache, const Preemptor& preemptor,
                                absl::Span<const Workload* const> holding_quota,
                                absl::Time now, const Features& features,
                                const FairSharingConfig& config,
                                FairSearchStats* stats) {
  return FairTargets(cache, preemptor, HoldingQuota(holding_quota), now,
                     features, config, stats);
}

}  // namespace kq::preemption
