#pragma once

// Kueue's scheduling equivalence hash (workload.computeSchedulingHash, with
// SchedulingEquivalenceHashing, beta and on by default since Kueue 0.18):
// two pending workloads with the same hash would get the same answer from
// the flavor assigner in the same state, so when one is parked as NoFit in
// a BestEffortFIFO ClusterQueue, the others are parked with it instead of
// each being tried in a pass of its own (queue::Manager).
//
// Example:
//   if (SchedulingHash(a) != 0 && SchedulingHash(a) == SchedulingHash(b)) ...

#include <cstdint>

#include "server/core/objects.h"

namespace kq::queue {

// 0 (Kueue's SchedulingHashUnknown) when a pod set's template shape is not
// known (a template stored before kqd kept its PodSet::spec_shape);
// otherwise a stable 64-bit digest (Kueue keeps 64 bits of a SHA-256) of:
// the priority, and per pod set its name, count after reclaimable pods,
// minCount, per-pod requests, node selector, tolerations, required node
// affinity and template shape. kq counts the priority-boost annotation as
// written whether or not the PriorityBoost gate is on, which can only make
// fewer workloads equivalent. TAS topology requests are not modelled.
uint64_t SchedulingHash(const Workload& workload);

}  // namespace kq::queue
