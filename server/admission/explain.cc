#include "server/admission/explain.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

#include "server/admission/pending_workloads.h"
#include "server/cache/cache.h"
#include "server/core/conditions.h"
#include "server/preemption/oracle.h"
#include "server/queue/manager.h"
#include "server/scheduler/flavor_assigner.h"
#include "server/scheduler/scheduler.h"

namespace kq::admission {
namespace {

// The quota of `resource` on `flavor` as the ClusterQueue spec writes it.
const ResourceQuota* SpecQuota(const FlavorQuotas& flavor,
                               const std::string& resource) {
  for (const ResourceQuota& quota : flavor.resources) {
    if (quota.name == resource) return &quota;
  }
  return nullptr;
}

// The covered resources of `flavor`'s resource group that `ps` requests
// and that do not fit on top of `assumed` (what earlier pod sets of the
// workload already took), as FitsResourceQuota decides it.
std::vector<ResourceShortage> ShortagesOf(
    const cache::ClusterQueueSnapshot& cq,
    const scheduler::PodSetAssignmentResult& ps, const std::string& flavor,
    const cache::FlavorResourceQuantities& assumed) {
  std::vector<ResourceShortage> out;
  for (const ResourceGroup& group : cq.spec.resource_groups) {
    for (const FlavorQuotas& flavor_quotas : group.flavors) {
      if (flavor_quotas.name != flavor) continue;
      for (const std::string& resource : group.covered_resources) {
        auto requested = ps.requests.find(resource);
        if (requested == ps.requests.end()) continue;
        const cache::FlavorResource fr{flavor, resource};
        auto before = assumed.find(fr);
        const int64_t value =
            SaturatingAdd(before == assumed.end() ? 0 : before->second,
                          ResourceAmount(resource, requested->second));
        const int64_t available = cq.Available(fr);
        if (value <= available) continue;
        ResourceShortage shortage{resource, requested->second,
                                  QuantityFromAmount(resource, available),
                                  Quantity(), std::nullopt};
        if (const ResourceQuota* quota = SpecQuota(flavor_quotas, resource)) {
          shortage.nominal_quota = quota->nominal_quota;
          shortage.borrowing_limit = quota->borrowing_limit;
        }
        out.push_back(std::move(shortage));
      }
      return out;
    }
  }
  return out;
}

// Whether the scheduler would rate the workload at all (its nomination
// checks): otherwise the deciding condition says why and there is nothing
// to assign.
bool WouldNominate(const AdmissionState& state, const Workload& wl,
                   const cache::ClusterQueueSnapshot* cq) {
  if (cq == nullptr || !cq->active || !wl.active) return false;
  for (const AdmissionCheckState& check : wl.admission_checks) {
    if (check.state == "Retry" || check.state == "Rejected") return false;
  }
  return cq->spec.namespace_selector.has_value() &&
         SelectorMatches(*cq->spec.namespace_selector,
                         scheduler::NamespaceLabels(state.namespaces(),
                                                    wl.meta.namespace_name));
}

// A fresh full flavor assignment of `wl` in `cq` over the live quota tree,
// with the preemption search the scheduler would use, turned into attempts
// and victims.
void ExplainAssignment(AdmissionState& state, const Workload& wl,
                       const cache::ClusterQueueSnapshot& cq, absl::Time now,
                       Explanation& out) {
  const Configuration& config = state.configuration();
  const preemption::Oracle oracle(state.cache_for_search(), state.holders(),
                                  now, {}, config.fair_sharing);
  scheduler::FlavorAssignerOptions options;
  options.enable_fair_sharing = config.fair_sharing.has_value();
  options.resources = &config.resources;
  const scheduler::FlavorAssigner assigner(wl, cq, state.flavors(), oracle,
                                           /*last_assignment=*/nullptr,
                                           options);
  const scheduler::Assignment assignment = assigner.Assign();

  cache::FlavorResourceQuantities assumed;
  for (const scheduler::PodSetAssignmentResult& ps : assignment.pod_sets) {
    if (ps.attempts.empty() && !ps.IsFit()) {
      std::vector<std::string> reasons = ps.reasons;
      if (ps.IsError()) reasons.push_back(ps.error);
      std::sort(reasons.begin(), reasons.end());
      out.attempts.push_back(
          {ps.name,
           "",
           scheduler::AssignmentModeName(scheduler::AssignmentMode::kNoFit),
           std::move(reasons),
           {}});
    }
    for (const scheduler::FlavorAssignmentAttempt& at : ps.attempts) {
      FlavorAttemptView view{ps.name,
                             at.flavor,
                             scheduler::AssignmentModeName(at.mode),
                             at.reasons,
                             {}};
      if (at.mode != scheduler::AssignmentMode::kFit &&
          at.no_fit_reason != kReasonNoMatchingFlavor) {
        view.shortages = ShortagesOf(cq, ps, at.flavor, assumed);
      }
      out.attempts.push_back(std::move(view));
    }
    // Later pod sets are rated on top of this one's flavors.
    for (const auto& [resource, fa] : ps.flavors) {
      auto requested = ps.requests.find(resource);
      if (requested == ps.requests.end()) continue;
      int64_t& used = assumed[{fa.name, resource}];
      used = SaturatingAdd(used, ResourceAmount(resource, requested->second));
    }
  }

  if (assignment.RepresentativeMode() != scheduler::AssignmentMode::kPreempt) {
    return;
  }
  for (const scheduler::PreemptionTarget& target :
       oracle.GetTargets(cq, wl, assignment)) {
    out.victims.push_back(
        {KeyOf(*target.workload), target.cluster_queue, target.reason});
  }
}

}  // namespace

const Condition* DecidingCondition(const Workload& wl) {
  auto find = [&wl](const char* type) {
    return FindCondition(wl.conditions, type);
  };
  auto with_status = [](const Condition* c, const char* status) {
    return c != nullptr && c->status == status ? c : nullptr;
  };
  switch (StateOf(wl)) {
    case WorkloadState::kFinished:
      return find(kConditionFinished);
    case WorkloadState::kAdmitted:
      if (IsEvicting(wl)) return find(kConditionEvicted);
      return find(kConditionAdmitted);
    case WorkloadState::kQuotaReserved:
      if (IsEvicting(wl)) return find(kConditionEvicted);
      if (const Condition* c = with_status(find(kConditionAdmitted), "False")) {
        return c;
      }
      return find(kConditionQuotaReserved);
    case WorkloadState::kPending:
      break;
  }
  if (!wl.active) {
    if (const Condition* c = with_status(find(kConditionEvicted), "True")) {
      return c;
    }
  }
  if (const Condition* c = with_status(find(kConditionRequeued), "False")) {
    return c;
  }
  return find(kConditionQuotaReserved);
}

absl::StatusOr<Explanation> Explain(AdmissionState& state,
                                    const NamespacedName& key, absl::Time now) {
  const Workload* wl = state.FindWorkload(key);
  if (wl == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
  }
  Explanation out;
  out.workload = *wl;
  const WorkloadState workload_state = StateOf(*wl);
  out.state = StateName(workload_state);
  out.cluster_queue = state.ClusterQueueForWorkload(*wl);
  if (const Condition* c = DecidingCondition(*wl)) {
    out.reason = c->reason;
    out.message = c->message;
  }
  out.position_in_cluster_queue = state.queues().PositionOf(key);
  out.position_in_local_queue = PositionInLocalQueue(state, key);

  if (workload_state != WorkloadState::kPending || out.cluster_queue.empty()) {
    return out;
  }
  const cache::ClusterQueueSnapshot* cq =
      state.cache_for_search().FindClusterQueue(out.cluster_queue);
  if (!WouldNominate(state, *wl, cq)) return out;
  ExplainAssignment(state, *wl, *cq, now, out);
  return out;
}

}  // namespace kq::admission
