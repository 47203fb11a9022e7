#pragma once

// Kueue's fair-sharing preemption (pkg/scheduler/preemption/preemption.go:
// fairPreemptions, runFirstFsStrategy, runSecondFsStrategy, with
// fairsharing/strategy.go): find workloads whose eviction lets a preemptor
// fit in its ClusterQueue without making the cohort tree less fair.
//
// Candidates are the preemptor ClusterQueue's own workloads its
// withinClusterQueue policy allows, and the workloads of every other
// ClusterQueue of the tree that borrows on a contested flavor-resource,
// as far as reclaimWithinCohort allows (borrowWithinCohort plays no part).
// With the preemptor's usage counted in, TargetClusterQueueOrdering picks
// target ClusterQueues by dominant resource share; a victim in another
// ClusterQueue is taken when the preemptor's ClusterQueue is within nominal
// quota on the contested flavor-resources (feature
// FairSharingPreemptWithinNominal), or when the configured strategy holds
// between the shares of the two almost-LCAs:
//   S2-a LessThanOrEqualToFinalShare: preemptor's share <= the target's
//        share once the victim is gone;
//   S2-b LessThanInitialShare: preemptor's share < the target's share now.
// With two strategies, the second gets the candidates the first passed
// over, at most one victim per ClusterQueue. Victims not needed after all
// are then added back, newest first ("fill-back"), as in classical
// preemption. TAS is not covered. Pure: the quota tree is changed only for
// the duration of the call and restored before returning.
//
// Example:
//   FairSharingConfig config;  // Kueue's default strategies [S2-a, S2-b]
//   std::vector<Target> targets =
//       FairTargets(cache, preemptor, holding_quota, now, features, config);

#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"

#include "server/cache/cache.h"
#include "server/core/config.h"
#include "server/core/objects.h"
#include "server/preemption/classical.h"
#include "server/preemption/priority.h"

namespace kq::preemption {

// What the search evaluated, for tests and diagnostics: the counts of the
// log entries Kueue writes at verbosity 4. Value type.
struct FairSearchStats {
  // Visits of a target ClusterQueue in which the first strategy was
  // evaluated for at least one candidate (one collapsed log entry each).
  int first_strategy_evaluations = 0;
  // Target ClusterQueues the second strategy was evaluated for.
  int second_strategy_evaluations = 0;
  // Visits of a target ClusterQueue skipped because no candidate could
  // pass either strategy (the preemptor's share is +Inf, the target's is
  // not).
  int skipped_target_cluster_queues = 0;
};

// Returns the workloads to evict so that `preemptor` fits in its
// ClusterQueue, in the order they were chosen (after fill-back, which may
// move the last one chosen into the place of one added back, as Kueue
// does), or an empty vector when the strategies cannot free enough.
// Reasons: InClusterQueue for the preemptor's own ClusterQueue,
// InCohortReclamation for victims taken under
// FairSharingPreemptWithinNominal, InCohortFairSharing for the rest.
// `holding_quota`, `now` and the preemptor's ClusterQueue are as for
// ClassicalTargets(). `config.preemption_strategies` empty means Kueue's
// default [S2-a, S2-b]. `stats`, when not null, receives what was
// evaluated. `cache` is mutated while searching and left as it was.
std::vector<Target> FairTargets(cache::Cache& cache, const Preemptor& preemptor,
                                const HoldingQuota& holders, absl::Time now,
                                const Features& features,
                                const FairSharingConfig& config,
                                FairSearchStats* stats = nullptr);
// The same over a list of the workloads holding quota (indexed per call).
std::vector<Target> FairTargets(cache::Cache& cache, const Preemptor& preemptor,
                                absl::Span<const Workload* const> holding_quota,
                                absl::Time now, const Features& features,
                                const FairSharingConfig& config,
                                FairSearchStats* stats = nullptr);

}  // namespace kq::preemption
