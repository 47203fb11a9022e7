// Kueue's ClusterQueue and Cohort webhooks (pkg/webhooks/
// clusterqueue_webhook.go, cohort_webhook.go) and the CRDs' rules for them.

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#include "base/status_macros.h"
#include "server/core/apimachinery.h"
#include "server/core/validation.h"
#include "server/core/validation_internal.h"

namespace kq {
namespace {

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

}  // namespace

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
  if (p.reclaim_within_cohort != kPolicyNever &&
      p.reclaim_within_cohort != kPolicyLowerPriority &&
      p.reclaim_within_cohort != kPolicyAny) {
    return Invalid("spec.preemption.reclaimWithinCohort",
                   absl::StrCat("unsupported value \"", p.reclaim_within_cohort,
                                "\": must be Never, LowerPriority or Any"));
  }
  if (p.within_cluster_queue != kPolicyNever &&
      p.within_cluster_queue != kPolicyLowerPriority &&
      p.within_cluster_queue != kPolicyLowerOrNewerEqualPriority) {
    return Invalid("spec.preemption.withinClusterQueue",
                   absl::StrCat("unsupported value \"", p.within_cluster_queue,
                                "\": must be Never, LowerPriority or "
                                "LowerOrNewerEqualPriority"));
  }
  if (p.borrow_within_cohort_policy != kPolicyNever &&
      p.borrow_within_cohort_policy != kPolicyLowerPriority) {
    return Invalid(
        "spec.preemption.borrowWithinCohort.policy",
        absl::StrCat("unsupported value \"", p.borrow_within_cohort_policy,
                     "\": must be Never or LowerPriority"));
  }
  if (p.borrow_within_cohort_policy != kPolicyNever &&
      p.reclaim_within_cohort == kPolicyNever) {
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

}  // namespace kq
