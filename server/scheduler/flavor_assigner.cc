#include "server/scheduler/flavor_assigner.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kq::scheduler {
namespace {

constexpr char kNoMatchingFlavor[] = "NoMatchingFlavor";
constexpr char kExceedsMaxQuota[] = "ExceedsMaxQuota";
constexpr char kWaitingForQuota[] = "WaitingForQuota";

// Kueue's reasonSeverity: NoMatchingFlavor > ExceedsMaxQuota >
// WaitingForQuota > none.
int Severity(const std::string& reason) {
  if (reason == kNoMatchingFlavor) return 3;
  if (reason == kExceedsMaxQuota) return 2;
  if (reason == kWaitingForQuota) return 1;
  return 0;
}

const std::string& MostSevere(const std::string& a, const std::string& b) {
  return Severity(a) >= Severity(b) ? a : b;
}

bool ToleratesTaint(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  return t.key == taint.key && t.value == taint.value;
}

std::string TaintString(const Taint& taint) {
  if (taint.value.empty()) return absl::StrCat(taint.key, ":", taint.effect);
  return absl::StrCat(taint.key, "=", taint.value, ":", taint.effect);
}

// A node-selector requirement against a node's labels (In, NotIn, Exists,
// DoesNotExist, Gt, Lt), as kube-scheduler evaluates it.
bool NodeRequirementMatches(const LabelSelectorRequirement& req,
                            const Labels& labels) {
  auto it = labels.find(req.key);
  bool has = it != labels.end();
  if (req.op == "In" || req.op == "NotIn") {
    bool in = has && std::find(req.values.begin(), req.values.end(),
                               it->second) != req.values.end();
    return req.op == "In" ? in : !in;
  }
  if (req.op == "Exists") return has;
  if (req.op == "DoesNotExist") return !has;
  if (req.op == "Gt" || req.op == "Lt") {
    int64_t label_value, bound;
    if (!has || req.values.size() != 1 ||
        !absl::SimpleAtoi(it->second, &label_value) ||
        !absl::SimpleAtoi(req.values[0], &bound)) {
      return false;
    }
    return req.op == "Gt" ? label_value > bound : label_value < bound;
  }
  return false;
}

// Kueue's flavorSelector: only the flavor's own label keys count; a term
// left empty by that filter matches every flavor.
bool MatchesNodeAffinity(const PodSet& ps, const ResourceFlavor& flavor) {
  const Labels& node = flavor.node_labels;
  for (const auto& [key, value] : ps.node_selector) {
    if (!node.count(key)) continue;
    if (node.at(key) != value) return false;
  }
  std::vector<std::vector<const LabelSelectorRequirement*>> terms;
  for (const NodeSelectorTerm& term : ps.required_node_affinity) {
    std::vector<const LabelSelectorRequirement*> kept;
    for (const LabelSelectorRequirement& req : term.match_expressions) {
      if (node.count(req.key)) kept.push_back(&req);
    }
    if (kept.empty()) return true;
    terms.push_back(std::move(kept));
  }
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    bool all = true;
    for (const LabelSelectorRequirement* req : term) {
      all = all && NodeRequirementMatches(*req, node);
    }
    if (all) return true;
  }
  return false;
}

// One flavor tried for one resource group of one pod set.
struct Attempt {
  std::string flavor;
  bool fits = false;
  std::string no_fit_reason;
};

// Which resource group covers `resource`, or -1.
int GroupOf(const ClusterQueue& cq, const std::string& resource) {
  for (size_t g = 0; g < cq.resource_groups.size(); ++g) {
    const auto& covered = cq.resource_groups[g].covered_resources;
    if (std::find(covered.begin(), covered.end(), resource) != covered.end()) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

}  // namespace

bool ToleratesTaints(const std::vector<Taint>& taints,
                     const std::vector<Toleration>& tolerations,
                     const Taint** untolerated) {
  for (const Taint& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = false;
    for (const Toleration& t : tolerations) {
      tolerated = tolerated || ToleratesTaint(t, taint);
    }
    if (!tolerated) {
      *untolerated = &taint;
      return false;
    }
  }
  return true;
}

std::string Assignment::Message() const {
  std::vector<std::string> parts;
  for (const PodSetAssignmentResult& ps : pod_sets) {
    if (ps.fits) continue;
    std::vector<std::string> reasons = ps.reasons;
    std::sort(reasons.begin(), reasons.end());
    parts.push_back(absl::StrCat("couldn't assign flavors to pod set ", ps.name,
                                 ": ", absl::StrJoin(reasons, ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

Admission Assignment::ToAdmission(const std::string& cluster_queue) const {
  Admission admission;
  admission.cluster_queue = cluster_queue;
  for (const PodSetAssignmentResult& ps : pod_sets) {
    PodSetAssignment psa;
    psa.name = ps.name;
    psa.flavors = ps.flavors;
    psa.count = ps.count;
    // Only resources that received a flavor are listed (Kueue).
    for (const auto& [resource, quantity] : ps.requests) {
      if (ps.flavors.count(resource)) psa.resource_usage[resource] = quantity;
    }
    admission.pod_set_assignments.push_back(std::move(psa));
  }
  return admission;
}

Assignment AssignFlavors(const Workload& workload,
                         const cache::ClusterQueueSnapshot& cq,
                         const std::map<std::string, ResourceFlavor>& flavors) {
  Assignment assignment;
  assignment.mode = AssignmentMode::kFit;
  const ClusterQueue& spec = cq.spec;
  const bool covers_pods = GroupOf(spec, "pods") >= 0;
  // Usage assumed by earlier pod sets of this workload.
  cache::FlavorResourceQuantities assumed;
  std::string overall_reason;

  for (const PodSet& ps : workload.pod_sets) {
    PodSetAssignmentResult result;
    result.name = ps.name;
    result.count = ps.count;
    for (const auto& [resource, per_pod] : ps.requests) {
      result.requests[resource] = Quantity::FromMilli(
          SaturatingMul(per_pod.milli(), static_cast<int64_t>(ps.count)));
    }
    if (covers_pods) {
      result.requests["pods"] = Quantity::FromUnits(ps.count);
    }

    // 1. Group the requested resources by resource group. Zero requests
    //    for resources the queue does not cover are ignored.
    std::map<int, std::vector<std::string>> by_group;
    bool unavailable = false;
    for (const auto& [resource, total] : result.requests) {
      int group = GroupOf(spec, resource);
      if (group < 0) {
        if (total.IsZero()) continue;
        result.reasons.push_back(absl::StrCat("resource ", resource,
                                              " unavailable in ClusterQueue"));
        unavailable = true;
        continue;
      }
      by_group[group].push_back(resource);
    }
    if (unavailable) {
      overall_reason = MostSevere(overall_reason, kNoMatchingFlavor);
      assignment.mode = AssignmentMode::kNoFit;
      assignment.pod_sets.push_back(std::move(result));
      continue;
    }

    // 2. Per group, the first flavor in order that passes the filters and
    //    fits the quota.
    bool pod_set_fits = true;
    std::string pod_set_reason;
    for (const auto& [group_index, resources] : by_group) {
      const ResourceGroup& group = spec.resource_groups[group_index];
      std::vector<Attempt> attempts;
      bool group_fits = false;
      for (const FlavorQuotas& fq : group.flavors) {
        Attempt attempt{fq.name};
        auto flavor = flavors.find(fq.name);
        if (flavor == flavors.end()) {
          result.reasons.push_back(
              absl::StrCat("flavor ", fq.name, " not found"));
          attempt.no_fit_reason = kNoMatchingFlavor;
          attempts.push_back(attempt);
          continue;
        }
        std::vector<Toleration> tolerations = ps.tolerations;
        tolerations.insert(tolerations.end(),
                           flavor->second.tolerations.begin(),
                           flavor->second.tolerations.end());
        const Taint* untolerated = nullptr;
        if (!ToleratesTaints(flavor->second.node_taints, tolerations,
                             &untolerated)) {
          result.reasons.push_back(absl::StrCat("untolerated taint ",
                                                TaintString(*untolerated),
                                                " in flavor ", fq.name));
          attempt.no_fit_reason = kNoMatchingFlavor;
          attempts.push_back(attempt);
          continue;
        }
        if (!MatchesNodeAffinity(ps, flavor->second)) {
          result.reasons.push_back(
              absl::StrCat("flavor ", fq.name, " doesn't match node affinity"));
          attempt.no_fit_reason = kNoMatchingFlavor;
          attempts.push_back(attempt);
          continue;
        }
        // Quota check per resource (Kueue's fitsResourceQuota).
        bool all_fit = true;
        std::string flavor_reason;
        for (const std::string& resource : resources) {
          cache::FlavorResource fr{fq.name, resource};
          int64_t request = ResourceAmount(resource, result.requests[resource]);
          int64_t assumed_usage =
              assumed.count(fr) ? assumed.at(fr) : int64_t{0};
          int64_t value = SaturatingAdd(assumed_usage, request);
          int64_t max_capacity = cq.PotentialAvailable(fr);
          if (value > max_capacity) {
            result.reasons.push_back(absl::StrCat(
                "insufficient quota for ", resource, " in flavor ", fq.name,
                ", previously considered podsets requests (",
                FormatAmount(resource, assumed_usage),
                ") + current podset request (", FormatAmount(resource, request),
                ") > maximum capacity (", FormatAmount(resource, max_capacity),
                ")"));
            all_fit = false;
            flavor_reason = MostSevere(flavor_reason, kExceedsMaxQuota);
            continue;
          }
          int64_t available = cq.Available(fr);
          if (value > available) {
            result.reasons.push_back(absl::StrCat(
                "insufficient unused quota for ", resource, " in flavor ",
                fq.name, ", ",
                FormatAmount(resource, SaturatingSub(value, available)),
                " more needed"));
            all_fit = false;
            flavor_reason = MostSevere(flavor_reason, kWaitingForQuota);
          }
        }
        if (all_fit) {
          for (const std::string& resource : resources) {
            result.flavors[resource] = fq.name;
          }
          group_fits = true;
          break;
        }
        attempt.no_fit_reason = flavor_reason;
        attempts.push_back(attempt);
      }
      if (!group_fits) {
        pod_set_fits = false;
        // Alternatives within a group: the least severe blocker counts.
        std::string group_reason;
        for (const Attempt& a : attempts) {
          if (group_reason.empty() ||
              Severity(a.no_fit_reason) < Severity(group_reason)) {
            group_reason = a.no_fit_reason;
          }
        }
        if (attempts.empty()) group_reason = kNoMatchingFlavor;
        pod_set_reason = MostSevere(pod_set_reason, group_reason);
      }
    }
    result.fits = pod_set_fits;
    if (pod_set_fits) {
      result.reasons.clear();
      for (const auto& [resource, flavor] : result.flavors) {
        cache::FlavorResource fr{flavor, resource};
        int64_t amount = ResourceAmount(resource, result.requests[resource]);
        if (amount == 0) continue;
        assumed[fr] = SaturatingAdd(assumed[fr], amount);
      }
    } else {
      assignment.mode = AssignmentMode::kNoFit;
      overall_reason = MostSevere(overall_reason, pod_set_reason);
    }
    assignment.pod_sets.push_back(std::move(result));
  }
  if (assignment.mode == AssignmentMode::kFit) {
    assignment.usage = std::move(assumed);
  } else {
    assignment.no_fit_reason = overall_reason;
  }
  return assignment;
}

}  // namespace kq::scheduler
