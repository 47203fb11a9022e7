#pragma once

// One Kueue scheduling cycle ("pass"): at most one head per ClusterQueue,
// nominated, ordered and admitted against the live quota cache. Pure: no
// I/O, no threads, no clock (time is a parameter); reasons are data.

#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "server/cache/cache.h"
#include "server/core/objects.h"
#include "server/scheduler/flavor_assigner.h"

namespace kq::scheduler {

// A workload popped from its ClusterQueue for this pass.
struct Head {
  const Workload* workload = nullptr;
  std::string cluster_queue;
};

// What the pass decided for one head.
struct EntryResult {
  enum class Status {
    kAdmitted,      // quota reserved; usage added to the cache
    kNoFit,         // no flavor fits now
    kSkipped,       // fitted when nominated, not after earlier admissions
    kInadmissible,  // not evaluated: queue inactive, namespace mismatch, ...
  };
  const Workload* workload = nullptr;
  std::string cluster_queue;
  Status status = Status::kNoFit;
  // Set when admitted.
  Admission admission;
  // QuotaReserved=False reason and message when not admitted.
  std::string reason;
  std::string message;
  // Not admitted because of the ClusterQueue's namespaceSelector (Kueue's
  // RequeueReasonNamespaceMismatch).
  bool namespace_mismatch = false;
};

struct CycleResult {
  // One per head, in processing order.
  std::vector<EntryResult> entries;
};

// What the pass reads besides the cache. All references must outlive the
// call.
struct SchedulingContext {
  const std::map<std::string, ResourceFlavor>* flavors = nullptr;
  // Namespace labels by namespace name. A namespace kq has no object for
  // has just Kubernetes' automatic label kubernetes.io/metadata.name.
  const std::map<std::string, Namespace>* namespaces = nullptr;
};

// Runs one pass over `heads`: nominates each (checks the queue is active
// and admits the namespace, assigns flavors), orders the entries as Kueue's
// classical iterator, then admits each that still fits, adding its usage
// to `cache` so later entries see it. Thread-compatible.
CycleResult Schedule(cache::Cache& cache, const std::vector<Head>& heads,
                     const SchedulingContext& context, absl::Time now);

// Labels of a namespace as Kubernetes sets them, including
// kubernetes.io/metadata.name.
Labels NamespaceLabels(const std::map<std::string, Namespace>& namespaces,
                       const std::string& name);

}  // namespace kq::scheduler
