#pragma once

// The live dry-run behind QueueService.Simulate: would this workload be
// admitted now, on which flavors, preempting whom? It runs Kueue
// scheduling passes on a private copy of the admission state and reports
// what happened to the workload there; the live state is not touched.
// Pure: no I/O, no threads, no clock reads.
//
// Example:
//   absl::StatusOr<WhatIf> what_if = SimulateAdmission(state, workload, now);
//   if (what_if.ok() && what_if->admissible) {
//     // what_if->workload.admission holds the flavors.
//   }

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/admission/explain.h"
#include "server/admission/state.h"
#include "server/core/objects.h"

namespace kq::admission {

// The UID a new workload gets in the copy (it is never stored): victims'
// Preempted messages name it, "Preempted to accommodate a workload (UID:
// what-if, ...".
inline constexpr char kWhatIfUid[] = "what-if";

struct WhatIf {
  // Whether the workload holds a quota reservation once the passes are
  // over (possibly after preempting `victims`). Admission checks of its
  // ClusterQueue may still be pending then (Admitted=False).
  bool admissible = false;
  // The workload as it ended in the copy: status.admission (the flavors)
  // and conditions when admissible, its QuotaReserved=False condition
  // otherwise.
  Workload workload;
  // Workloads holding quota in the live state that the copy preempted to
  // make room for this workload (their Preempted condition names its
  // UID), in (namespace, name) order. Other pending workloads that come
  // first in the queues are admitted in the copy too, as they would be
  // now, and may preempt others; those victims are not listed.
  std::vector<Victim> victims;
  // The deciding condition (DecidingCondition): QuotaReserved=False
  // (e.g. Misconfigured for a LocalQueue that does not exist, or the
  // flavor assigner's no-fit reason) when not admissible.
  std::string reason;
  std::string message;
};

// Simulates submitting `workload` now, or scheduling the stored workload
// of the same namespace and name when there is one (its stored copy is
// used; a stored workload already holding quota is reported as it is,
// without passes). A new workload gets `now` as creation time, UID
// kWhatIfUid and, with only metadata.generateName, the name
// "<generateName>what-if" (with a numeric suffix if that is taken).
//
// The copy is what a freshly restarted kqd would load: the same objects,
// workloads and Configuration, queues rebuilt from them and no flavor-scan
// bookmarks. Runners are assumed to stop at once when told, so evictions
// (those already under way included) complete without waiting for the
// grace period. Passes run until they change nothing.
//
// InvalidArgument for a workload the engine would refuse (no name,
// ValidateWorkload), NotFound for a priority class that does not exist. A
// missing LocalQueue or ClusterQueue is not an error: the workload would
// wait, and the result says why.
absl::StatusOr<WhatIf> SimulateAdmission(const AdmissionState& state,
                                         Workload workload, absl::Time now);

}  // namespace kq::admission
