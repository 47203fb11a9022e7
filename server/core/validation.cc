#include "server/core/validation.h"

#include <cctype>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "server/common/status_macros.h"

namespace kq {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
}

bool IsLowerAlnum(char c) {
  return std::islower(static_cast<unsigned char>(c)) ||
         std::isdigit(static_cast<unsigned char>(c));
}

// RFC 1123 label body check without the length limit.
bool IsLabel(absl::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// A Kubernetes resource name: an optional DNS-subdomain prefix and a
// qualified name ("cpu", "nvidia.com/gpu").
absl::Status ValidateResourceName(absl::string_view path,
                                  absl::string_view name) {
  if (name.empty()) return Invalid(path, "resource name is required");
  absl::string_view local = name;
  size_t slash = name.find('/');
  if (slash != absl::string_view::npos) {
    KQ_RETURN_IF_ERROR(ValidateSubdomainName(path, name.substr(0, slash)));
    local = name.substr(slash + 1);
  }
  if (local.empty() || local.size() > 63) {
    return Invalid(path, absl::StrCat("invalid resource name \"", name, "\""));
  }
  for (char c : local) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' &&
        c != '.') {
      return Invalid(path,
                     absl::StrCat("invalid resource name \"", name, "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMeta(const ObjectMeta& meta, bool namespaced) {
  KQ_RETURN_IF_ERROR(ValidateSubdomainName("metadata.name", meta.name));
  if (namespaced) {
    KQ_RETURN_IF_ERROR(
        ValidateLabelName("metadata.namespace", meta.namespace_name));
  } else if (!meta.namespace_name.empty()) {
    return Invalid("metadata.namespace",
                   "must be empty for a cluster-scoped object");
  }
  return absl::OkStatus();
}

absl::Status ValidateNonNegative(absl::string_view path, Quantity q) {
  if (q.IsNegative()) {
    return Invalid(path, absl::StrCat("must be greater than or equal to 0, "
                                      "got ",
                                      q.ToString()));
  }
  return absl::OkStatus();
}

absl::Status ValidateSelector(absl::string_view path,
                              const LabelSelector& selector) {
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    const LabelSelectorRequirement& req = selector.match_expressions[i];
    std::string p = absl::StrCat(path, ".matchExpressions[", i, "]");
    if (req.key.empty()) return Invalid(p + ".key", "is required");
    if (req.op == "In" || req.op == "NotIn") {
      if (req.values.empty()) {
        return Invalid(p + ".values",
                       "must be non-empty for operator " + req.op);
      }
    } else if (req.op == "Exists" || req.op == "DoesNotExist") {
      if (!req.values.empty()) {
        return Invalid(p + ".values", "must be empty for operator " + req.op);
      }
    } else {
      return Invalid(p + ".operator",
                     absl::StrCat("unsupported operator \"", req.op,
                                  "\": must be In, NotIn, Exists or "
                                  "DoesNotExist"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTolerations(absl::string_view path,
                                 const std::vector<Toleration>& tolerations) {
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Toleration& t = tolerations[i];
    std::string p = absl::StrCat(path, "[", i, "]");
    if (!t.op.empty() && t.op != "Equal" && t.op != "Exists") {
      return Invalid(p + ".operator",
                     absl::StrCat("unsupported operator \"", t.op,
                                  "\": must be Equal or "
                                  "Exists"));
    }
    if (t.op == "Exists" && !t.value.empty()) {
      return Invalid(p + ".value", "must be empty when operator is Exists");
    }
    if (!t.effect.empty() && t.effect != "NoSchedule" &&
        t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
      return Invalid(p + ".effect",
                     absl::StrCat("unsupported effect \"", t.effect, "\""));
    }
  }
  return absl::OkStatus();
}

// The resource-group rules of Kueue's ClusterQueue/Cohort webhook that kq
// enforces. Resource order within a flavor and omitted covered resources
// are accepted with a warning (ConfigWarnings), matched by name.
absl::Status ValidateResourceGroups(const std::vector<ResourceGroup>& groups,
                                    bool is_cluster_queue) {
  if (groups.size() > 16) {
    return Invalid("spec.resourceGroups", "must have at most 16 items");
  }
  std::map<std::string, size_t> flavor_group;
  std::map<std::string, size_t> resource_group;
  for (size_t g = 0; g < groups.size(); ++g) {
    const ResourceGroup& group = groups[g];
    std::string gp = absl::StrCat("spec.resourceGroups[", g, "]");
    if (group.covered_resources.empty()) {
      return Invalid(gp + ".coveredResources", "must have at least 1 item");
    }
    if (group.covered_resources.size() > 64) {
      return Invalid(gp + ".coveredResources", "must have at most 64 items");
    }
    for (size_t r = 0; r < group.covered_resources.size(); ++r) {
      const std::string& res = group.covered_resources[r];
      std::string rp = absl::StrCat(gp, ".coveredResources[", r, "]");
      KQ_RETURN_IF_ERROR(ValidateResourceName(rp, res));
      auto [it, inserted] = resource_group.emplace(res, g);
      if (!inserted) {
        return Invalid(
            rp, it->second == g
                    ? absl::StrCat("resource \"", res, "\" is listed twice")
                    : absl::StrCat("resource \"", res,
                                   "\" is already covered by resourceGroups[",
                                   it->second, "]"));
      }
    }
    if (group.flavors.empty()) {
      return Invalid(gp + ".flavors", "must have at least 1 item");
    }
    if (group.flavors.size() > 64) {
      return Invalid(gp + ".flavors", "must have at most 64 items");
    }
    for (size_t f = 0; f < group.flavors.size(); ++f) {
      const FlavorQuotas& flavor = group.flavors[f];
      std::string fp = absl::StrCat(gp, ".flavors[", f, "]");
      KQ_RETURN_IF_ERROR(ValidateSubdomainName(fp + ".name", flavor.name));
      auto [it, inserted] = flavor_group.emplace(flavor.name, g);
      if (!inserted) {
        return Invalid(
            fp + ".name",
            it->second == g
                ? absl::StrCat("flavor \"", flavor.name, "\" is listed twice")
                : absl::StrCat("flavor \"", flavor.name,
                               "\" is already in resourceGroups[", it->second,
                               "]"));
      }
      std::set<std::string> seen;
      for (size_t r = 0; r < flavor.resources.size(); ++r) {
        const ResourceQuota& quota = flavor.resources[r];
        std::string rp = absl::StrCat(fp, ".resources[", r, "]");
        KQ_RETURN_IF_ERROR(ValidateResourceName(rp + ".name", quota.name));
        if (!seen.insert(quota.name).second) {
          return Invalid(rp + ".name", absl::StrCat("resource \"", quota.name,
                                                    "\" is listed twice"));
        }
        bool covered = false;
        for (const std::string& c : group.covered_resources) {
          covered = covered || c == quota.name;
        }
        if (!covered) {
          return Invalid(rp + ".name", absl::StrCat("resource \"", quota.name,
                                                    "\" is not in this group's "
                                                    "coveredResources"));
        }
        KQ_RETURN_IF_ERROR(
            ValidateNonNegative(rp + ".nominalQuota", quota.nominal_quota));
        if (quota.borrowing_limit) {
          KQ_RETURN_IF_ERROR(ValidateNonNegative(rp + ".borrowingLimit",
                                                 *quota.borrowing_limit));
        }
        if (quota.lending_limit) {
          KQ_RETURN_IF_ERROR(
              ValidateNonNegative(rp + ".lendingLimit", *quota.lending_limit));
          if (is_cluster_queue && *quota.lending_limit > quota.nominal_quota) {
            return Invalid(rp + ".lendingLimit",
                           "must be less than or equal to nominalQuota");
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateWeight(const std::optional<Quantity>& weight) {
  if (!weight) return absl::OkStatus();
  KQ_RETURN_IF_ERROR(ValidateNonNegative("spec.fairSharing.weight", *weight));
  return absl::OkStatus();
}

absl::Status ValidateClusterQueue(const ClusterQueue& cq) {
  KQ_RETURN_IF_ERROR(ValidateMeta(cq.meta, false));
  KQ_RETURN_IF_ERROR(ValidateResourceGroups(cq.resource_groups, true));
  if (!cq.cohort_name.empty()) {
    KQ_RETURN_IF_ERROR(
        ValidateSubdomainName("spec.cohortName", cq.cohort_name));
  }
  if (cq.namespace_selector) {
    KQ_RETURN_IF_ERROR(
        ValidateSelector("spec.namespaceSelector", *cq.namespace_selector));
  }
  const ClusterQueuePreemption& p = cq.preemption;
  if (p.reclaim_within_cohort != "Never" &&
      p.reclaim_within_cohort != "LowerPriority" &&
      p.reclaim_within_cohort != "Any") {
    return Invalid("spec.preemption.reclaimWithinCohort",
                   absl::StrCat("unsupported value \"", p.reclaim_within_cohort,
                                "\": must be Never, LowerPriority or Any"));
  }
  if (p.within_cluster_queue != "Never" &&
      p.within_cluster_queue != "LowerPriority" &&
      p.within_cluster_queue != "LowerOrNewerEqualPriority") {
    return Invalid("spec.preemption.withinClusterQueue",
                   absl::StrCat("unsupported value \"", p.within_cluster_queue,
                                "\": must be Never, LowerPriority or "
                                "LowerOrNewerEqualPriority"));
  }
  if (p.borrow_within_cohort_policy != "Never" &&
      p.borrow_within_cohort_policy != "LowerPriority") {
    return Invalid(
        "spec.preemption.borrowWithinCohort.policy",
        absl::StrCat("unsupported value \"", p.borrow_within_cohort_policy,
                     "\": must be Never or LowerPriority"));
  }
  if (p.borrow_within_cohort_policy != "Never" &&
      p.reclaim_within_cohort == "Never") {
    return Invalid("spec.preemption",
                   "reclaimWithinCohort=Never and borrowWithinCohort.Policy!="
                   "Never");
  }
  const FlavorFungibility& ff = cq.flavor_fungibility;
  if (!ff.preference.empty()) {
    if (ff.preference != "BorrowingOverPreemption" &&
        ff.preference != "PreemptionOverBorrowing") {
      return Invalid("spec.flavorFungibility.preference",
                     absl::StrCat("unsupported value \"", ff.preference,
                                  "\": must be BorrowingOverPreemption or "
                                  "PreemptionOverBorrowing"));
    }
    if (ff.when_can_borrow != FungibilityPolicy::kTryNextFlavor ||
        ff.when_can_preempt != FungibilityPolicy::kTryNextFlavor) {
      return Invalid("spec.flavorFungibility.preference",
                     "may be set only when whenCanBorrow and whenCanPreempt "
                     "are both TryNextFlavor");
    }
  }
  std::set<std::string> checks;
  for (size_t i = 0; i < cq.admission_checks.size(); ++i) {
    const AdmissionCheckStrategyRule& rule = cq.admission_checks[i];
    std::string path =
        absl::StrCat("spec.admissionChecksStrategy.admissionChecks[", i, "]");
    KQ_RETURN_IF_ERROR(ValidateSubdomainName(path + ".name", rule.name));
    if (!checks.insert(rule.name).second) {
      return Invalid(
          path + ".name",
          absl::StrCat("admission check \"", rule.name, "\" is listed twice"));
    }
  }
  return ValidateWeight(cq.fair_sharing_weight);
}

absl::Status ValidateCohort(const Cohort& cohort) {
  KQ_RETURN_IF_ERROR(ValidateMeta(cohort.meta, false));
  if (!cohort.parent_name.empty()) {
    KQ_RETURN_IF_ERROR(
        ValidateSubdomainName("spec.parentName", cohort.parent_name));
    if (cohort.parent_name == cohort.meta.name) {
      return Invalid("spec.parentName", "a cohort cannot be its own parent");
    }
  }
  KQ_RETURN_IF_ERROR(ValidateResourceGroups(cohort.resource_groups, false));
  if (cohort.parent_name.empty()) {
    for (size_t g = 0; g < cohort.resource_groups.size(); ++g) {
      const auto& flavors = cohort.resource_groups[g].flavors;
      for (size_t f = 0; f < flavors.size(); ++f) {
        for (size_t r = 0; r < flavors[f].resources.size(); ++r) {
          const ResourceQuota& q = flavors[f].resources[r];
          std::string path =
              absl::StrCat("spec.resourceGroups[", g, "].flavors[", f,
                           "].resources[", r, "]");
          if (q.borrowing_limit) {
            return Invalid(path + ".borrowingLimit",
                           "must be nil when cohort has no parent");
          }
          if (q.lending_limit) {
            return Invalid(path + ".lendingLimit",
                           "must be nil when cohort has no parent");
          }
        }
      }
    }
  }
  return ValidateWeight(cohort.fair_sharing_weight);
}

}  // namespace

absl::Status ValidateSubdomainName(absl::string_view path,
                                   absl::string_view name) {
  if (name.empty()) return Invalid(path, "name is required");
  if (name.size() > 253) {
    return Invalid(path, "must be no more than 253 characters");
  }
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    absl::string_view part = name.substr(start, dot == absl::string_view::npos
                                                    ? absl::string_view::npos
                                                    : dot - start);
    if (!IsLabel(part)) {
      return Invalid(
          path,
          absl::StrCat("\"", name,
                       "\" is not a valid name: a lowercase RFC 1123 "
                       "subdomain must consist of lower case alphanumeric "
                       "characters, '-' or '.', and must start and end with "
                       "an alphanumeric character"));
    }
    if (dot == absl::string_view::npos) break;
    start = dot + 1;
  }
  return absl::OkStatus();
}

absl::Status ValidateLabelName(absl::string_view path, absl::string_view name) {
  if (name.empty()) return Invalid(path, "name is required");
  if (name.size() > 63) {
    return Invalid(path, "must be no more than 63 characters");
  }
  if (!IsLabel(name)) {
    return Invalid(path,
                   absl::StrCat("\"", name,
                                "\" is not a valid name: a lowercase RFC "
                                "1123 label must consist of lower case "
                                "alphanumeric characters or '-', and must "
                                "start and end with an alphanumeric "
                                "character"));
  }
  return absl::OkStatus();
}

absl::Status ValidateConfigObject(const ConfigObject& object) {
  return std::visit(
      [](const auto& o) -> absl::Status {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Namespace>) {
          KQ_RETURN_IF_ERROR(ValidateLabelName("metadata.name", o.meta.name));
          return absl::OkStatus();
        } else if constexpr (std::is_same_v<T, ResourceFlavor>) {
          KQ_RETURN_IF_ERROR(ValidateMeta(o.meta, false));
          if (o.node_labels.size() > 8) {
            return Invalid("spec.nodeLabels", "must have at most 8 items");
          }
          if (o.node_taints.size() > 8) {
            return Invalid("spec.nodeTaints", "must have at most 8 items");
          }
          for (size_t i = 0; i < o.node_taints.size(); ++i) {
            const Taint& t = o.node_taints[i];
            std::string p = absl::StrCat("spec.nodeTaints[", i, "]");
            if (t.key.empty()) return Invalid(p + ".key", "is required");
            if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" &&
                t.effect != "NoExecute") {
              return Invalid(p + ".effect",
                             absl::StrCat("unsupported value \"", t.effect,
                                          "\": must be NoSchedule, "
                                          "PreferNoSchedule or NoExecute"));
            }
          }
          return ValidateTolerations("spec.tolerations", o.tolerations);
        } else if constexpr (std::is_same_v<T, ClusterQueue>) {
          return ValidateClusterQueue(o);
        } else if constexpr (std::is_same_v<T, Cohort>) {
          return ValidateCohort(o);
        } else if constexpr (std::is_same_v<T, LocalQueue>) {
          KQ_RETURN_IF_ERROR(ValidateMeta(o.meta, true));
          KQ_RETURN_IF_ERROR(
              ValidateSubdomainName("spec.clusterQueue", o.cluster_queue));
          return ValidateWeight(o.fair_sharing_weight);
        } else if constexpr (std::is_same_v<T, WorkloadPriorityClass>) {
          return ValidateMeta(o.meta, false);
        } else {
          static_assert(std::is_same_v<T, AdmissionCheck>);
          KQ_RETURN_IF_ERROR(ValidateMeta(o.meta, false));
          if (o.controller_name.empty()) {
            return Invalid("spec.controllerName", "is required");
          }
          if (o.controller_name.size() > 253) {
            return Invalid("spec.controllerName",
                           "must be no more than 253 characters");
          }
          return absl::OkStatus();
        }
      },
      object);
}

absl::Status ValidateWorkload(const Workload& wl) {
  KQ_RETURN_IF_ERROR(ValidateMeta(wl.meta, true));
  if (wl.queue_name.empty()) {
    return Invalid("spec.queueName", "is required");
  }
  KQ_RETURN_IF_ERROR(ValidateSubdomainName("spec.queueName", wl.queue_name));
  if (wl.pod_sets.empty()) {
    return Invalid("spec.podSets", "must have at least 1 item");
  }
  if (wl.pod_sets.size() > 18) {
    return Invalid("spec.podSets", "must have at most 18 items");
  }
  std::set<std::string> names;
  int with_min_count = 0;
  for (size_t i = 0; i < wl.pod_sets.size(); ++i) {
    const PodSet& ps = wl.pod_sets[i];
    std::string p = absl::StrCat("spec.podSets[", i, "]");
    KQ_RETURN_IF_ERROR(ValidateLabelName(p + ".name", ps.name));
    if (!names.insert(ps.name).second) {
      return Invalid(p + ".name",
                     absl::StrCat("pod set \"", ps.name, "\" is listed twice"));
    }
    if (ps.count < 0) {
      return Invalid(p + ".count", "must be greater than or equal to 0");
    }
    if (ps.min_count) {
      ++with_min_count;
      if (*ps.min_count < 1 || *ps.min_count > ps.count) {
        return Invalid(p + ".minCount",
                       "must be between 1 and count (inclusive)");
      }
    }
    for (const auto& [resource, quantity] : ps.requests) {
      std::string rp = absl::StrCat(p, ".requests[", resource, "]");
      KQ_RETURN_IF_ERROR(ValidateResourceName(rp, resource));
      KQ_RETURN_IF_ERROR(ValidateNonNegative(rp, quantity));
    }
    KQ_RETURN_IF_ERROR(ValidateTolerations(p + ".tolerations", ps.tolerations));
  }
  if (with_min_count > 1) {
    return Invalid("spec.podSets", "at most one pod set may set minCount");
  }
  if (wl.maximum_execution_time_seconds &&
      *wl.maximum_execution_time_seconds < 1) {
    return Invalid("spec.maximumExecutionTimeSeconds",
                   "must be greater than or equal to 1");
  }
  return absl::OkStatus();
}

std::vector<std::string> ConfigWarnings(const ConfigObject& object) {
  std::vector<std::string> warnings;
  const ClusterQueue* cq = std::get_if<ClusterQueue>(&object);
  if (cq == nullptr) return warnings;
  const std::string who = absl::StrCat("ClusterQueue \"", cq->meta.name, "\"");
  bool has_limits = false;
  for (size_t g = 0; g < cq->resource_groups.size(); ++g) {
    const ResourceGroup& group = cq->resource_groups[g];
    for (size_t f = 0; f < group.flavors.size(); ++f) {
      const FlavorQuotas& flavor = group.flavors[f];
      std::string path =
          absl::StrCat("spec.resourceGroups[", g, "].flavors[", f, "]");
      std::vector<std::string> listed;
      for (const ResourceQuota& q : flavor.resources) {
        listed.push_back(q.name);
        has_limits = has_limits || q.borrowing_limit || q.lending_limit;
      }
      std::vector<std::string> in_order;
      std::vector<std::string> missing;
      for (const std::string& c : group.covered_resources) {
        bool found = false;
        for (const std::string& l : listed) found = found || l == c;
        if (found) {
          in_order.push_back(c);
        } else {
          missing.push_back(c);
        }
      }
      if (missing.empty() && listed != in_order) {
        warnings.push_back(absl::StrCat(
            who, ": ", path, ".resources: flavor \"", flavor.name,
            "\" lists resources in another order than coveredResources (",
            absl::StrJoin(group.covered_resources, ", "),
            "); Kueue would refuse this, kq matches resources by name"));
      }
      if (!missing.empty()) {
        warnings.push_back(absl::StrCat(
            who, ": ", path, ".resources: flavor \"", flavor.name,
            "\" omits covered resource(s) ", absl::StrJoin(missing, ", "),
            "; Kueue would refuse this, kq gives them nominal quota 0"));
      }
    }
  }
  if (has_limits && cq->cohort_name.empty()) {
    warnings.push_back(absl::StrCat(
        who,
        ": borrowingLimit/lendingLimit are set but spec.cohort is empty; "
        "Kueue would refuse this, kq ignores the limits until the queue "
        "joins a cohort"));
  }
  if (!cq->namespace_selector) {
    warnings.push_back(absl::StrCat(
        who,
        ": spec.namespaceSelector is not set, so it admits workloads from "
        "no namespace (Kueue's rule); set namespaceSelector: {} to admit "
        "from every namespace"));
  }
  return warnings;
}

absl::Status ValidateSubmittedWorkload(const Workload& wl) {
  if (wl.meta.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Workload in namespace \"", wl.meta.namespace_name,
                     "\": metadata.name: name or generateName is required"));
  }
  absl::Status valid = ValidateWorkload(wl);
  if (!valid.ok()) return About(Describe(KeyOf(wl)), valid);
  return absl::OkStatus();
}

}  // namespace kq
