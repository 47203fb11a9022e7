#pragma once

// Kueue's Incremental dispatcher
// (pkg/controller/workloaddispatcher/incrementaldispatcher.go) as pure
// functions: every round nominates the next `stepSize` clusters of the
// MultiKueueConfig, appended to the workload's nominations, and a round
// lasts `incremental_round_timeout` (Kueue: a fixed 5 minutes). Kueue keeps
// the round start in memory, so a manager restart starts a new round at
// once; kq persists it with the nominations (ManagerState::round_start), in
// the same update. ReconcileGroup then copies the workload to exactly the
// nominated clusters. No I/O, threads or clock reads: `now` is an input.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "server/core/objects.h"
#include "server/federation/group.h"

namespace kq::federation {

// Kueue's DefaultStepSize.
inline constexpr int32_t kDefaultStepSize = 3;

// Kueue's ErrNoMoreWorkers, "no more workers to nominate": every cluster
// of the config is nominated already. kOutOfRange (the nominations ran past
// the config's end); the runtime retries with backoff, as controller-runtime
// does with Kueue's error.
absl::Status NoMoreWorkersError();
bool IsNoMoreWorkers(const absl::Status& status);

struct IncrementalInput {
  // The workload, or null when it is not found (Kueue's NotFound).
  const Workload* workload = nullptr;
  bool deleted = false;
  ManagerState state;
  // The name of the workload's MultiKueue admission check (empty: none).
  std::string check_name;
  // The config's clusters, in config order (all of them, connected or not).
  std::vector<std::string> clusters;
  Settings settings;
  absl::Time now;
};

struct IncrementalDecision {
  // OK; kNotFound for a missing workload; kFailedPrecondition, "no active
  // clusters", for a config without clusters (Kueue's ErrNoActiveClusters);
  // NoMoreWorkersError().
  absl::Status status;
  // The new nominations (the old ones with the next batch appended).
  std::optional<std::vector<std::string>> nominated_cluster_names;
  // Set (a new round starts now) or cleared (nullopt inside).
  std::optional<std::optional<absl::Time>> round_start;
  absl::Duration requeue_after = absl::ZeroDuration();

  bool steady() const {
    return !nominated_cluster_names.has_value() && !round_start.has_value();
  }
};

// Kueue's IncrementalDispatcherReconciler.Reconcile: skip unless the
// MultiKueue check is Pending with no clusterName; clear the round of a
// finished workload or one without quota; otherwise NominateWorkers.
IncrementalDecision IncrementalReconcile(const IncrementalInput& input);

// Kueue's nominateWorkers: while a round is in progress, requeue for the
// rest of it; otherwise append the next batch of not yet nominated
// clusters (config order, or alphabetical without respect_config_order)
// and start a round now. NoMoreWorkersError() when none is left; the
// nominations and the round are then left as they are.
IncrementalDecision NominateWorkers(const ManagerState& state,
                                    const std::vector<std::string>& clusters,
                                    const Settings& settings, absl::Time now);

}  // namespace kq::federation
