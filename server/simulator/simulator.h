#pragma once

// `kq simulate`: the admission core run offline on a scenario, with no
// server and no store. It drives the same AdmissionState as kqd's engine,
// so the live server and the simulator decide alike.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/admission/state.h"
#include "server/core/config.h"
#include "server/core/objects.h"

namespace kq::simulator {

struct Scenario {
  std::vector<ConfigObject> objects;
  // A workload with an admission and QuotaReserved=True already holds
  // quota; every other one is pending. Creation timestamps order pending
  // workloads; UIDs, when given, break ties as in Kueue.
  std::vector<Workload> workloads;
  // The scenario's Kueue Configuration (validated); default: Kueue's
  // behaviour without one.
  Configuration configuration;
};

struct Options {
  // Passes to run; a negative value runs until a pass changes nothing.
  int passes = -1;
  // The scheduler's "now" (condition times). Unset: the latest creation
  // timestamp in the scenario, so output is reproducible.
  std::optional<absl::Time> now;
};

struct Result {
  // Every workload after the passes, in (namespace, name) order.
  std::vector<Workload> workloads;
  // Views of the ClusterQueues, LocalQueues and other objects after the
  // passes, in key order.
  std::vector<admission::ObjectView> objects;
  int passes = 0;
};

// Validates the scenario (InvalidArgument naming the object and field, as
// kqd would) and runs the passes.
absl::StatusOr<Result> Simulate(Scenario scenario, const Options& options);

}  // namespace kq::simulator
