#pragma once

// Flavor assignment (Kueue's pkg/scheduler/flavorassigner): for each pod
// set and each resource group it requests, the first flavor in the
// ClusterQueue's order that passes the flavor filters (taints, node
// affinity) and whose quota fits. Pure: reads the cache, writes nothing.

#include <map>
#include <string>
#include <vector>

#include "server/cache/cache.h"
#include "server/core/objects.h"

namespace kq::scheduler {

// How an assignment could be admitted. Order matters: a workload's mode is
// the worst of its pod sets'.
enum class AssignmentMode {
  kNoFit,  // some pod set cannot get a flavor now
  kFit,    // every pod set fits in available quota
};

// The flavors of one pod set.
struct PodSetAssignmentResult {
  std::string name;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  ResourceList requests;                       // totals for `count` pods
  int32_t count = 0;
  // Why flavors were rejected, sorted and joined as Kueue's Status.Message.
  std::vector<std::string> reasons;
  bool fits = false;
};

struct Assignment {
  std::vector<PodSetAssignmentResult> pod_sets;
  AssignmentMode mode = AssignmentMode::kNoFit;
  // The QuotaReserved=False reason when it does not fit: the most severe of
  // NoMatchingFlavor > ExceedsMaxQuota > WaitingForQuota.
  std::string no_fit_reason;
  // Quota the assignment would take, in Kueue's integer units.
  cache::FlavorResourceQuantities usage;

  // Kueue's Assignment.Message(): "couldn't assign flavors to pod set main:
  // insufficient unused quota for cpu in flavor default, 2 more needed".
  std::string Message() const;
  // The admission to record when the assignment is admitted.
  Admission ToAdmission(const std::string& cluster_queue) const;
};

// Assigns flavors to every pod set of `workload` in `cq`.
Assignment AssignFlavors(const Workload& workload,
                         const cache::ClusterQueueSnapshot& cq,
                         const std::map<std::string, ResourceFlavor>& flavors);

// Whether `tolerations` tolerate every NoSchedule/NoExecute taint; sets
// *untolerated to the first one that is not.
bool ToleratesTaints(const std::vector<Taint>& taints,
                     const std::vector<Toleration>& tolerations,
                     const Taint** untolerated);

}  // namespace kq::scheduler
