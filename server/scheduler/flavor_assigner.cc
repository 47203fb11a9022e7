#include "server/scheduler/flavor_assigner.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/scheduler/node_matching.h"

namespace kq::scheduler {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

// Kueue's reasonSeverity: NoMatchingFlavor > ExceedsMaxQuota >
// WaitingForQuota > TopologyPlacementFailed (TAS, which kq does not have) >
// anything else.
int ReasonSeverity(const std::string& reason) {
  if (reason == kReasonNoMatchingFlavor) return 4;
  if (reason == kReasonExceedsMaxQuota) return 3;
  if (reason == kReasonWaitingForQuota) return 2;
  if (reason == kReasonTopologyPlacementFailed) return 1;
  return 0;
}

// Kueue's mostSevereReason; `a` wins ties.
std::string MostSevereReason(const std::string& a, const std::string& b) {
  return ReasonSeverity(a) >= ReasonSeverity(b) ? a : b;
}

AssignmentMode ToAssignmentMode(PreemptionMode mode) {
  switch (mode) {
    case PreemptionMode::kNoFit:
      return AssignmentMode::kNoFit;
    case PreemptionMode::kNoPreemptionCandidates:
    case PreemptionMode::kPreempt:
    case PreemptionMode::kReclaim:
      return AssignmentMode::kPreempt;
    case PreemptionMode::kFit:
      return AssignmentMode::kFit;
  }
  return AssignmentMode::kNoFit;
}

PreemptionMode FromPreemptionPossibility(PreemptionPossibility p) {
  switch (p) {
    case PreemptionPossibility::kNoCandidates:
      return PreemptionMode::kNoPreemptionCandidates;
    case PreemptionPossibility::kPreempt:
      return PreemptionMode::kPreempt;
    case PreemptionPossibility::kReclaim:
      return PreemptionMode::kReclaim;
  }
  return PreemptionMode::kNoPreemptionCandidates;
}

std::optional<PreemptionPossibility> ToPreemptionPossibility(
    PreemptionMode mode) {
  switch (mode) {
    case PreemptionMode::kNoPreemptionCandidates:
      return PreemptionPossibility::kNoCandidates;
    case PreemptionMode::kPreempt:
      return PreemptionPossibility::kPreempt;
    case PreemptionMode::kReclaim:
      return PreemptionPossibility::kReclaim;
    case PreemptionMode::kNoFit:
    case PreemptionMode::kFit:
      return std::nullopt;
  }
  return std::nullopt;
}

// Kueue's ResourceFormatter.AmountQuantityString: quota amounts may be
// Unlimited.
std::string AmountString(const std::string& resource, int64_t amount) {
  if (amount == kUnlimited) return "<unlimited>";
  return FormatAmount(resource, amount);
}

// The resource group of the ClusterQueue covering `resource`, or -1 (Kueue's
// RGByResource).
int GroupOf(const ClusterQueue& cq, const std::string& resource) {
  for (size_t g = 0; g < cq.resource_groups.size(); ++g) {
    const auto& covered = cq.resource_groups[g].covered_resources;
    if (std::find(covered.begin(), covered.end(), resource) != covered.end()) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

// Kueue's findRGIndicesByFlavor.
std::vector<int> GroupsWithFlavor(const ClusterQueue& cq,
                                  const std::string& flavor) {
  std::vector<int> groups;
  for (size_t g = 0; g < cq.resource_groups.size(); ++g) {
    for (const FlavorQuotas& fq : cq.resource_groups[g].flavors) {
      if (fq.name == flavor) {
        groups.push_back(static_cast<int>(g));
        break;
      }
    }
  }
  return groups;
}

// Unique, sorted union of two reason lists (Kueue's mergeUnique + sort).
// Every head's nomination merges its reasons: sorting one vector costs
// one allocation where a std::set costs one per reason.
std::vector<std::string> MergeUnique(std::vector<std::string> a,
                                     const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

// Kueue's mergeFlavorAttempts: a flavor seen for several resources keeps its
// worst mode, highest borrowing, lowest preemption possibility, all reasons
// and the most severe no-fit reason.
void MergeFlavorAttempts(std::map<std::string, FlavorAssignmentAttempt>& dst,
                         const std::vector<FlavorAssignmentAttempt>& src) {
  for (const FlavorAssignmentAttempt& at : src) {
    auto it = dst.find(at.flavor);
    if (it == dst.end()) {
      FlavorAssignmentAttempt& added = dst[at.flavor];
      added = at;
      added.reasons = MergeUnique(std::move(added.reasons), {});
      continue;
    }
    FlavorAssignmentAttempt& existing = it->second;
    existing.mode = std::min(existing.mode, at.mode);
    existing.borrow = std::max(existing.borrow, at.borrow);
    if (at.preemption_possibility &&
        (!existing.preemption_possibility ||
         *at.preemption_possibility < *existing.preemption_possibility)) {
      existing.preemption_possibility = at.preemption_possibility;
    }
    existing.reasons = MergeUnique(std::move(existing.reasons), at.reasons);
    existing.no_fit_reason =
        MostSevereReason(existing.no_fit_reason, at.no_fit_reason);
  }
}

// Kueue's mergeFlavorAttemptsForResource: after merging, a flavor of
// `resource`'s group that was considered before but not for `resource`
// does not provide it.
void MergeFlavorAttemptsForResource(
    std::map<std::string, FlavorAssignmentAttempt>& dst,
    const std::vector<FlavorAssignmentAttempt>& src,
    const std::string& resource, const ClusterQueue& cq) {
  MergeFlavorAttempts(dst, src);
  if (src.empty()) return;
  int group = GroupOf(cq, resource);
  if (group < 0) return;
  // A group has a few flavors: scans, not sets, which would allocate.
  const std::vector<FlavorQuotas>& group_flavors =
      cq.resource_groups[group].flavors;
  for (auto& [flavor, at] : dst) {
    const bool in_group =
        std::any_of(group_flavors.begin(), group_flavors.end(),
                    [&](const FlavorQuotas& fq) { return fq.name == flavor; });
    const bool present = std::any_of(
        src.begin(), src.end(),
        [&](const FlavorAssignmentAttempt& a) { return a.flavor == flavor; });
    if (!in_group || present) continue;
    at.mode = AssignmentMode::kNoFit;
    at.reasons =
        MergeUnique(std::move(at.reasons),
                    {absl::StrCat("flavor ", flavor,
                                  " does not provide resource ", resource)});
    at.no_fit_reason = kReasonNoMatchingFlavor;
  }
}

// A pod set's requests in Kueue's integer units (workload.PodSetResources):
// per-pod amounts floored at 0 (non-CPU rounded up per pod), times count.
struct PodSetRequests {
  std::string name;
  int32_t count = 0;
  std::map<std::string, int64_t> requests;

  // Kueue's PodSetResources.ScaledTo: the totals for `new_count` pods.
  PodSetRequests ScaledTo(int32_t new_count) const {
    PodSetRequests scaled = *this;
    if (count != 0 && count != new_count) {
      for (auto& [resource, amount] : scaled.requests) {
        amount = SaturatingMul(amount / count, new_count);
      }
      scaled.count = new_count;
    }
    return scaled;
  }
};

// Kueue's totalRequestsFromPodSets for one pod set of `count` pods (its
// count after reclaim).
PodSetRequests TotalRequests(const PodSet& ps, int32_t count,
                             const ResourceConfig* config) {
  PodSetRequests r{ps.name, count, {}};
  // Kueue derives the quota requests from the pod template on every
  // evaluation, so exclusions and transformations apply to workloads
  // created before the Configuration changed.
  const ResourceList per_pod_requests =
      config == nullptr ? ps.requests : EffectiveRequests(ps.requests, *config);
  for (const auto& [resource, per_pod] : per_pod_requests) {
    int64_t amount = std::max<int64_t>(0, ResourceAmount(resource, per_pod));
    r.requests[resource] = SaturatingMul(amount, count);
  }
  return r;
}

ResourceList ToResourceList(const std::map<std::string, int64_t>& amounts) {
  ResourceList list;
  for (const auto& [resource, amount] : amounts) {
    list[resource] = QuantityFromAmount(resource, amount);
  }
  return list;
}

// Kueue's Assignment.append: records the pod set, its usage on the assigned
// flavors, the borrowing level and the scan bookmark.
void AppendPodSet(Assignment& assignment,
                  const std::map<std::string, int64_t>& requests,
                  PodSetAssignmentResult ps) {
  std::map<std::string, int> tried;
  for (const auto& [resource, fa] : ps.flavors) {
    assignment.borrowing = std::max(assignment.borrowing, fa.borrow);
    cache::FlavorResource fr{fa.name, resource};
    auto req = requests.find(resource);
    int64_t amount = req == requests.end() ? 0 : req->second;
    auto& used = assignment.usage[fr];
    used = SaturatingAdd(used, amount);
    tried[resource] = fa.tried_flavor_idx;
  }
  assignment.last_state.last_tried_flavor_idx.push_back(std::move(tried));
  assignment.pod_sets.push_back(std::move(ps));
}

// The order in which Kueue walks the resources of a pod set's requests
// (VectorizedResourceRequests, on by default: pkg/resources/
// slice_requests.go): by FNV-1a 64-bit hash of the name, then by name. It
// decides which resource a failing group stops on, hence the reason.
uint64_t Fnv1a64(const std::string& name) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::vector<std::pair<std::string, int64_t>> InKueueResourceOrder(
    const std::map<std::string, int64_t>& requests) {
  std::vector<std::pair<std::string, int64_t>> ordered(requests.begin(),
                                                       requests.end());
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    const uint64_t ha = Fnv1a64(a.first);
    const uint64_t hb = Fnv1a64(b.first);
    return ha != hb ? ha < hb : a.first < b.first;
  });
  return ordered;
}

// Kueue's IgnoreUndeclaredResources (the QuotaCheckStrategy gate is on by
// default).
bool IgnoresUndeclared(const ResourceConfig* config) {
  return config != nullptr &&
         config->quota_check_strategy == QuotaCheckStrategy::kIgnoreUndeclared;
}

// Kueue's resolveNoFitReason.
void ResolveNoFitReason(Assignment& assignment, const ClusterQueue& cq) {
  if (assignment.RepresentativeMode() != AssignmentMode::kNoFit) return;
  std::string overall;
  for (const PodSetAssignmentResult& ps : assignment.pod_sets) {
    if (ps.RepresentativeMode() != AssignmentMode::kNoFit) continue;
    if (ps.attempts.empty()) {
      overall = MostSevereReason(overall, kReasonNoMatchingFlavor);
      continue;
    }
    // Alternatives within a resource group: the least severe blocker.
    std::map<int, std::string> group_min_reason;
    for (size_t i = 0; i < ps.attempts.size(); ++i) {
      const FlavorAssignmentAttempt& at = ps.attempts[i];
      if (at.mode != AssignmentMode::kNoFit) continue;
      std::vector<int> groups = GroupsWithFlavor(cq, at.flavor);
      if (groups.empty()) {
        // A flavor in no group (deleted): a group of its own.
        groups.push_back(-1 - static_cast<int>(i));
      }
      for (int g : groups) {
        auto it = group_min_reason.find(g);
        if (it == group_min_reason.end() ||
            ReasonSeverity(at.no_fit_reason) < ReasonSeverity(it->second)) {
          group_min_reason[g] = at.no_fit_reason;
        }
      }
    }
    // Co-requisite groups: the most severe.
    std::string pod_set_reason;
    for (const auto& [group, reason] : group_min_reason) {
      pod_set_reason = MostSevereReason(pod_set_reason, reason);
    }
    overall = MostSevereReason(overall, pod_set_reason);
  }
  assignment.no_fit_reason = overall;
}

}  // namespace

const char* AssignmentModeName(AssignmentMode mode) {
  switch (mode) {
    case AssignmentMode::kNoFit:
      return "NoFit";
    case AssignmentMode::kPreempt:
      return "Preempt";
    case AssignmentMode::kDeferredFit:
      return "DeferredFit";
    case AssignmentMode::kFit:
      return "Fit";
  }
  return "Unknown";
}

const char* PreemptionPossibilityName(PreemptionPossibility possibility) {
  switch (possibility) {
    case PreemptionPossibility::kNoCandidates:
      return "NoCandidates";
    case PreemptionPossibility::kPreempt:
      return "Preempt";
    case PreemptionPossibility::kReclaim:
      return "Reclaim";
  }
  return "Unknown";
}

bool IsPreferred(const GranularMode& a, const GranularMode& b,
                 const FlavorFungibility& fungibility) {
  if (a.preemption_mode == PreemptionMode::kNoFit) return false;
  if (b.preemption_mode == PreemptionMode::kNoFit) return true;
  // A flavor without candidates cannot be admitted in this attempt: it
  // ranks below every viable mode whatever the preference.
  const bool a_no_candidates =
      a.preemption_mode == PreemptionMode::kNoPreemptionCandidates;
  const bool b_no_candidates =
      b.preemption_mode == PreemptionMode::kNoPreemptionCandidates;
  if (a_no_candidates != b_no_candidates) return !a_no_candidates;

  if (fungibility.preference == "PreemptionOverBorrowing") {
    if (a.borrowing_level != b.borrowing_level) {
      return a.borrowing_level < b.borrowing_level;
    }
    return a.preemption_mode > b.preemption_mode;
  }
  // BorrowingOverPreemption, or no preference.
  if (a.preemption_mode != b.preemption_mode) {
    return a.preemption_mode > b.preemption_mode;
  }
  return a.borrowing_level < b.borrowing_level;
}

bool ShouldTryNextFlavor(const GranularMode& mode,
                         const FlavorFungibility& fungibility) {
  if (mode.preemption_mode == PreemptionMode::kNoFit ||
      mode.preemption_mode == PreemptionMode::kNoPreemptionCandidates) {
    return true;
  }
  const bool preempts = mode.preemption_mode == PreemptionMode::kPreempt ||
                        mode.preemption_mode == PreemptionMode::kReclaim;
  if (preempts &&
      fungibility.when_can_preempt == FungibilityPolicy::kTryNextFlavor) {
    return true;
  }
  if (mode.borrowing_level != 0 &&
      fungibility.when_can_borrow == FungibilityPolicy::kTryNextFlavor) {
    return true;
  }
  return false;
}

PreemptionSimulation NoPreemptionOracle::SimulatePreemption(
    const cache::ClusterQueueSnapshot& cq, const Workload& /*workload*/,
    const cache::FlavorResource& fr, int64_t quantity) const {
  return {PreemptionPossibility::kNoCandidates,
          cache::FindHeightOfLowestSubtreeThatFits(cq, fr, quantity).first};
}

std::vector<PreemptionTarget> NoPreemptionOracle::GetTargets(
    const cache::ClusterQueueSnapshot& /*cq*/, const Workload& /*workload*/,
    const Assignment& /*assignment*/) const {
  return {};
}

int LastAssignment::NextFlavorToTry(size_t pod_set,
                                    const std::string& resource) const {
  if (pod_set >= last_tried_flavor_idx.size()) return 0;
  const auto& tried = last_tried_flavor_idx[pod_set];
  auto it = tried.find(resource);
  return it == tried.end() ? 0 : it->second + 1;
}

bool LastAssignment::PendingFlavors() const {
  for (const auto& pod_set : last_tried_flavor_idx) {
    for (const auto& [resource, idx] : pod_set) {
      if (idx != -1) return true;
    }
  }
  return false;
}

bool LastAssignmentOutdated(const LastAssignment& last,
                            int64_t cluster_queue_generation,
                            int64_t scheduling_cycle) {
  // The generation moves on every admission or eviction in the cohort; a
  // bookmark from the previous cycle would rarely survive it.
  if (scheduling_cycle - last.scheduling_cycle <= 1) return false;
  return cluster_queue_generation > last.cluster_queue_generation;
}

AssignmentMode PodSetAssignmentResult::RepresentativeMode() const {
  if (IsFit()) return AssignmentMode::kFit;
  if (IsError() || flavors.empty()) return AssignmentMode::kNoFit;
  AssignmentMode mode = AssignmentMode::kFit;
  for (const auto& [resource, fa] : flavors) mode = std::min(mode, fa.mode);
  return mode;
}

std::string PodSetAssignmentResult::StatusMessage() const {
  if (IsError()) return error;
  std::vector<std::string> sorted = reasons;
  std::sort(sorted.begin(), sorted.end());
  return absl::StrJoin(sorted, ", ");
}

AssignmentMode Assignment::RepresentativeMode() const {
  if (pod_sets.empty()) return AssignmentMode::kNoFit;
  AssignmentMode mode = AssignmentMode::kFit;
  for (const PodSetAssignmentResult& ps : pod_sets) {
    mode = std::min(mode, ps.RepresentativeMode());
  }
  return mode;
}

const std::string& Assignment::CachedMessage() const {
  if (!message_.has_value()) message_ = Message();
  return *message_;
}

std::string Assignment::Message() const {
  std::string message;
  for (const PodSetAssignmentResult& ps : pod_sets) {
    if (ps.IsFit()) continue;
    if (ps.IsError()) {
      return absl::StrCat("failed to assign flavors to pod set ", ps.name, ": ",
                          ps.error);
    }
    if (!message.empty()) absl::StrAppend(&message, "; ");
    absl::StrAppend(&message, "couldn't assign flavors to pod set ", ps.name,
                    ": ", ps.StatusMessage());
  }
  return message;
}

Admission Assignment::ToAdmission(const std::string& cluster_queue) const {
  Admission admission;
  admission.cluster_queue = cluster_queue;
  for (const PodSetAssignmentResult& ps : pod_sets) {
    PodSetAssignment psa;
    psa.name = ps.name;
    psa.count = ps.count;
    // Only resources that got a flavor (a zero request of a resource the
    // ClusterQueue does not cover has none).
    for (const auto& [resource, fa] : ps.flavors) {
      psa.flavors[resource] = fa.name;
      auto it = ps.requests.find(resource);
      psa.resource_usage[resource] =
          it == ps.requests.end() ? Quantity() : it->second;
    }
    admission.pod_set_assignments.push_back(std::move(psa));
  }
  return admission;
}

bool CanBePartiallyAdmitted(const Workload& workload) {
  for (const PodSet& ps : workload.pod_sets) {
    if (ps.count > ps.min_count.value_or(ps.count)) return true;
  }
  return false;
}

// What FindFlavorForPodSet found for one resource group.
struct FlavorAssigner::FlavorSearch {
  // The chosen flavor for every requested resource of the group; empty when
  // none can be assigned.
  std::map<std::string, FlavorAssignment> flavors;
  // Kueue returns a nil status for a plain fit and a (possibly empty) status
  // otherwise; only a non-nil one contributes reasons.
  bool has_status = false;
  std::vector<std::string> reasons;
  std::string error;
  std::vector<FlavorAssignmentAttempt> attempts;
};

// What FitsResourceQuota found for one flavor-resource.
struct FlavorAssigner::QuotaFit {
  PreemptionMode mode = PreemptionMode::kNoFit;
  int borrow = 0;
  bool has_status = false;
  std::vector<std::string> reasons;
  std::string no_fit_reason;
};

FlavorAssigner::FlavorAssigner(
    const Workload& workload, const cache::ClusterQueueSnapshot& cq,
    const std::map<std::string, ResourceFlavor>& flavors,
    const PreemptionOracle& oracle, const LastAssignment* last_assignment,
    FlavorAssignerOptions options)
    : workload_(workload),
      cq_(cq),
      flavors_(flavors),
      oracle_(oracle),
      last_assignment_(last_assignment),
      options_(options) {}

Assignment FlavorAssigner::Assign(absl::Span<const int32_t> counts) const {
  const ClusterQueue& spec = cq_.spec;
  Assignment assignment;
  assignment.last_state.cluster_queue_generation =
      options_.cluster_queue_generation;
  assignment.last_state.scheduling_cycle = options_.scheduling_cycle;

  // 1. Requests of every pod set for its pods left after reclaim (the
  //    reclaimable ones need no quota), scaled to `counts`, with `pods`
  //    when the ClusterQueue covers it.
  const std::map<std::string, int32_t> counts_after_reclaim =
      PodSetsCountsAfterReclaim(workload_);
  std::vector<PodSetRequests> requests;
  for (size_t i = 0; i < workload_.pod_sets.size(); ++i) {
    const PodSet& ps = workload_.pod_sets[i];
    const int32_t count =
        options_.reclaimable_pods ? counts_after_reclaim.at(ps.name) : ps.count;
    PodSetRequests r = TotalRequests(ps, count, options_.resources);
    if (!counts.empty()) r = r.ScaledTo(counts[i]);
    if (GroupOf(spec, "pods") >= 0) r.requests["pods"] = r.count;
    requests.push_back(std::move(r));
  }

  // 2. Each pod set in order (Kueue groups pod sets only for TAS; here
  //    every group has one pod set). Later pod sets see the usage assigned
  //    to earlier ones.
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::map<std::string, int64_t>& group_requests = requests[i].requests;
    std::map<std::string, FlavorAssignmentAttempt> considered;
    std::map<std::string, FlavorAssignment> group_flavors;
    std::vector<std::string> group_reasons;
    std::string group_error;
    for (const auto& [resource, quantity] :
         InKueueResourceOrder(group_requests)) {
      // A zero request of a resource the ClusterQueue does not cover needs
      // no flavor; with IgnoreUndeclared, neither does any other request.
      if (GroupOf(spec, resource) < 0 &&
          (quantity == 0 || IgnoresUndeclared(options_.resources))) {
        continue;
      }
      // Assigned together with an earlier resource of its group.
      if (group_flavors.count(resource)) continue;
      FlavorSearch found =
          FindFlavorForPodSet(i, group_requests, resource, assignment.usage);
      MergeFlavorAttemptsForResource(considered, found.attempts, resource,
                                     spec);
      if (!found.error.empty() || found.flavors.empty()) {
        // The whole group fails, with only this resource's status.
        group_flavors.clear();
        group_reasons = std::move(found.reasons);
        group_error = std::move(found.error);
        break;
      }
      group_flavors.insert(found.flavors.begin(), found.flavors.end());
      if (found.has_status) {
        group_reasons.insert(group_reasons.end(),
                             std::make_move_iterator(found.reasons.begin()),
                             std::make_move_iterator(found.reasons.end()));
      }
    }

    PodSetAssignmentResult ps;
    ps.name = requests[i].name;
    ps.count = requests[i].count;
    ps.requests = ToResourceList(group_requests);
    // Kueue's resolvePodSetFlavors: the group's flavors of the resources
    // this pod set requests.
    for (const auto& [resource, fa] : group_flavors) {
      if (group_requests.count(resource)) ps.flavors[resource] = fa;
    }
    ps.reasons = std::move(group_reasons);
    ps.error = std::move(group_error);
    for (auto& [flavor, at] : considered) ps.attempts.push_back(std::move(at));
    const bool failed =
        ps.IsError() || (!group_requests.empty() && ps.flavors.empty());
    AppendPodSet(assignment, group_requests, std::move(ps));
    if (failed) {
      ResolveNoFitReason(assignment, spec);
      return assignment;
    }
  }
  ResolveNoFitReason(assignment, spec);
  return assignment;
}

FlavorAssigner::FlavorSearch FlavorAssigner::FindFlavorForPodSet(
    size_t pod_set_index, const std::map<std::string, int64_t>& requests,
    const std::string& resource,
    const cache::FlavorResourceQuantities& assigned_usage) const {
  FlavorSearch result;
  const ClusterQueue& spec = cq_.spec;
  const int group_index = GroupOf(spec, resource);
  if (group_index < 0) {
    result.has_status = true;
    result.reasons.push_back(
        absl::StrCat("resource ", resource, " unavailable in ClusterQueue"));
    return result;
  }
  const ResourceGroup& group = spec.resource_groups[group_index];
  // The requested resources of this group, in name order.
  std::map<std::string, int64_t> group_requests;
  for (const auto& [name, value] : requests) {
    if (std::find(group.covered_resources.begin(),
                  group.covered_resources.end(),
                  name) != group.covered_resources.end()) {
      group_requests[name] = value;
    }
  }
  const PodSet& pod_set = workload_.pod_sets[pod_set_index];
  const FlavorFungibility& fungibility = spec.flavor_fungibility;

  std::map<std::string, FlavorAssignment> best;
  GranularMode best_mode;  // the worst mode: no fit, unbounded borrowing
  std::vector<std::string> status_reasons;
  int attempted = -1;
  int idx = last_assignment_ == nullptr
                ? 0
                : last_assignment_->NextFlavorToTry(pod_set_index, resource);
  const int flavor_count = static_cast<int>(group.flavors.size());
  for (; idx < flavor_count; ++idx) {
    attempted = idx;
    const std::string& flavor = group.flavors[idx].name;

    std::string error;
    std::vector<std::string> mismatch =
        CheckFlavorForPodSet(flavor, pod_set, &error);
    if (!mismatch.empty() || !error.empty()) {
      status_reasons.insert(status_reasons.end(), mismatch.begin(),
                            mismatch.end());
      result.attempts.push_back({.flavor = flavor,
                                 .mode = AssignmentMode::kNoFit,
                                 .reasons = mismatch,
                                 .no_fit_reason = kReasonNoMatchingFlavor});
      if (!error.empty()) {
        result.has_status = true;
        result.reasons = std::move(status_reasons);
        result.error = std::move(error);
        result.flavors.clear();
        return result;
      }
      continue;
    }

    // Rate the flavor by its worst resource. Every resource is checked (and
    // reported) even after one does not fit, as Kueue's ForEach does.
    std::map<std::string, FlavorAssignment> assignments;
    GranularMode representative{PreemptionMode::kFit, 0};
    int max_borrow = 0;
    std::vector<std::string> quota_reasons;
    std::string flavor_no_fit_reason;
    for (const auto& [name, value] : group_requests) {
      cache::FlavorResource fr{flavor, name};
      auto quota = cq_.node.quotas.find(fr);
      int64_t nominal =
          quota == cq_.node.quotas.end() ? 0 : quota->second.nominal;
      auto assumed = assigned_usage.find(fr);
      QuotaFit fit = FitsResourceQuota(
          fr, assumed == assigned_usage.end() ? 0 : assumed->second, value,
          nominal);
      if (fit.has_status) {
        status_reasons.insert(status_reasons.end(), fit.reasons.begin(),
                              fit.reasons.end());
        quota_reasons.insert(quota_reasons.end(),
                             std::make_move_iterator(fit.reasons.begin()),
                             std::make_move_iterator(fit.reasons.end()));
        flavor_no_fit_reason =
            MostSevereReason(flavor_no_fit_reason, fit.no_fit_reason);
      }
      max_borrow = std::max(max_borrow, fit.borrow);
      GranularMode mode{fit.mode, fit.borrow};
      // Kueue keeps the less preferred of the two as the flavor's mode.
      if (IsPreferred(representative, mode, fungibility)) {
        representative = mode;
      }
      if (representative.preemption_mode == PreemptionMode::kNoFit) continue;
      assignments[name] = FlavorAssignment{.name = flavor,
                                           .mode = ToAssignmentMode(fit.mode),
                                           .borrow = fit.borrow};
    }
    std::sort(quota_reasons.begin(), quota_reasons.end());
    result.attempts.push_back(
        {.flavor = flavor,
         .mode = ToAssignmentMode(representative.preemption_mode),
         .borrow = max_borrow,
         .preemption_possibility =
             ToPreemptionPossibility(representative.preemption_mode),
         .reasons = std::move(quota_reasons),
         .no_fit_reason = flavor_no_fit_reason});

    if (!ShouldTryNextFlavor(representative, fungibility)) {
      best = std::move(assignments);
      best_mode = representative;
      break;
    }
    if (IsPreferred(representative, best_mode, fungibility)) {
      best = std::move(assignments);
      best_mode = representative;
    }
  }

  // The bookmark: the last flavor tried, or -1 when that was the last one.
  for (auto& [name, fa] : best) {
    fa.tried_flavor_idx = attempted == flavor_count - 1 ? -1 : attempted;
  }
  result.flavors = std::move(best);
  if (best_mode.preemption_mode == PreemptionMode::kFit) return result;
  result.has_status = true;
  result.reasons = std::move(status_reasons);
  return result;
}

std::vector<std::string> FlavorAssigner::CheckFlavorForPodSet(
    const std::string& flavor_name, const PodSet& pod_set,
    std::string* error) const {
  auto it = flavors_.find(flavor_name);
  if (it == flavors_.end()) {
    return {absl::StrCat("flavor ", flavor_name, " not found")};
  }
  const ResourceFlavor& flavor = it->second;
  std::vector<Toleration> tolerations = pod_set.tolerations.ToVector();
  tolerations.insert(tolerations.end(), flavor.tolerations.begin(),
                     flavor.tolerations.end());
  if (const Taint* taint =
          FindUntoleratedTaint(flavor.node_taints, tolerations);
      taint != nullptr) {
    return {absl::StrCat("untolerated taint ", GoTaintString(*taint),
                         " in flavor ", flavor_name)};
  }
  if (!FlavorMatchesNodeAffinity(pod_set, flavor.node_labels, error)) {
    if (!error->empty()) return {};
    return {
        absl::StrCat("flavor ", flavor_name, " doesn't match node affinity")};
  }
  return {};
}

FlavorAssigner::QuotaFit FlavorAssigner::FitsResourceQuota(
    const cache::FlavorResource& fr, int64_t assumed, int64_t request,
    int64_t nominal) const {
  QuotaFit result;
  const int64_t available = cq_.Available(fr);
  const int64_t max_capacity = cq_.PotentialAvailable(fr);
  const int64_t value = SaturatingAdd(assumed, request);

  if (value > max_capacity) {
    result.mode = PreemptionMode::kNoFit;
    result.borrow = 0;
    result.has_status = true;
    result.reasons.push_back(absl::StrCat(
        "insufficient quota for ", fr.resource, " in flavor ", fr.flavor,
        ", previously considered podsets requests (",
        AmountString(fr.resource, assumed), ") + current podset request (",
        FormatAmount(fr.resource, request), ") > maximum capacity (",
        AmountString(fr.resource, max_capacity), ")"));
    result.no_fit_reason = kReasonExceedsMaxQuota;
    return result;
  }

  auto [borrow, may_reclaim_in_hierarchy] =
      cache::FindHeightOfLowestSubtreeThatFits(cq_, fr, value);
  if (value <= available) {
    result.mode = PreemptionMode::kFit;
    result.borrow = borrow;
    return result;
  }

  result.has_status = true;
  result.reasons.push_back(absl::StrCat(
      "insufficient unused quota for ", fr.resource, " in flavor ", fr.flavor,
      ", ", AmountString(fr.resource, SaturatingSub(value, available)),
      " more needed"));
  result.no_fit_reason = kReasonWaitingForQuota;
  if (nominal >= value || may_reclaim_in_hierarchy ||
      CanPreemptWhileBorrowing()) {
    PreemptionSimulation sim =
        oracle_.SimulatePreemption(cq_, workload_, fr, value);
    result.mode = FromPreemptionPossibility(sim.possibility);
    result.borrow = sim.borrowing_level;
    // Waiting for preemption is not a no-fit.
    result.no_fit_reason.clear();
    return result;
  }
  result.mode = PreemptionMode::kNoFit;
  result.borrow = borrow;
  return result;
}

bool FlavorAssigner::CanPreemptWhileBorrowing() const {
  const ClusterQueuePreemption& p = cq_.spec.preemption;
  const bool borrow_within_cohort =
      !p.borrow_within_cohort_policy.empty() &&
      p.borrow_within_cohort_policy != kPolicyNever;
  // Only an explicit Never forbids it, as in Kueue (objects read through
  // the codec always carry Kueue's default, Never).
  const bool fair_sharing_reclaim =
      options_.enable_fair_sharing && p.reclaim_within_cohort != kPolicyNever;
  return borrow_within_cohort || fair_sharing_reclaim;
}

}  // namespace kq::scheduler
