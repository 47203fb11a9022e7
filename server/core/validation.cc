#include "server/core/validation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"

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

// ---------------------------------------------------------------------------
// Kubernetes' apimachinery validation (util/validation), as the API server
// words it.

constexpr char kQualifiedNameFmt[] = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr char kQualifiedNameErrMsg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character";
constexpr char kLabelValueFmt[] = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr char kLabelValueErrMsg[] =
    "a valid label must be an empty string or consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr char kDns1123SubdomainFmt[] =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr char kDns1123SubdomainErrMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character";

// Kubernetes' RegexError: the message, examples and the pattern.
std::string RegexError(absl::string_view message, absl::string_view format,
                       const std::vector<absl::string_view>& examples) {
  std::string out = absl::StrCat(message, " (e.g. ");
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) absl::StrAppend(&out, ",  or ");
    absl::StrAppend(&out, "'", examples[i], "'");
  }
  absl::StrAppend(&out, ", regex used for validation is '", format, "')");
  return out;
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], anchored.
bool MatchesQualifiedNamePart(absl::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*, anchored:
// a DNS-1123 subdomain without its length limit.
bool MatchesDns1123Subdomain(absl::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    absl::string_view part =
        s.substr(start, dot == absl::string_view::npos ? absl::string_view::npos
                                                       : dot - start);
    if (!IsLabel(part)) return false;
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

// Kubernetes' IsQualifiedName.
std::vector<std::string> QualifiedNameErrors(absl::string_view value) {
  std::vector<std::string> errors;
  std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  absl::string_view name;
  if (parts.size() == 1) {
    name = parts[0];
  } else if (parts.size() == 2) {
    absl::string_view prefix = parts[0];
    name = parts[1];
    if (prefix.empty()) {
      errors.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253) {
        errors.push_back("prefix part must be no more than 253 bytes");
      }
      if (!MatchesDns1123Subdomain(prefix)) {
        errors.push_back(absl::StrCat(
            "prefix part ", RegexError(kDns1123SubdomainErrMsg,
                                       kDns1123SubdomainFmt, {"example.com"})));
      }
    }
  } else {
    errors.push_back(
        absl::StrCat("a qualified name ",
                     RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                {"MyName", "my.name", "123-abc"}),
                     " with an optional DNS subdomain prefix and '/' (e.g. "
                     "'example.com/MyName')"));
    return errors;
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errors.push_back("name part must be no more than 63 bytes");
  }
  if (!MatchesQualifiedNamePart(name)) {
    errors.push_back(absl::StrCat(
        "name part ", RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                 {"MyName", "my.name", "123-abc"})));
  }
  return errors;
}

// Kubernetes' IsValidLabelValue.
std::vector<std::string> LabelValueErrors(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > 63) errors.push_back("must be no more than 63 bytes");
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    errors.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt,
                                {"MyValue", "my_value", "12345"}));
  }
  return errors;
}

// field.Invalid's text.
absl::Status InvalidValue(absl::string_view path, absl::string_view value,
                          absl::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": Invalid value: \"", value, "\": ", reason));
}

absl::Status TooLong(absl::string_view path, size_t max) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": Too long: may not be more than ", max, " bytes"));
}

absl::Status TooMany(absl::string_view path, size_t got, size_t max) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": Too many: ", got, ": must have at most ", max, " items"));
}

absl::Status RequiredValue(absl::string_view path) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": Required value"));
}

// Kueue's ProvisioningRequestConfig CRD (apis/kueue/v1beta2/
// provisioningrequestconfig_types.go markers); Kueue has no webhook for it.
absl::Status ValidateProvisioningRequestConfig(
    const ProvisioningRequestConfig& prc) {
  KQ_RETURN_IF_ERROR(ValidateMeta(prc.meta, false));
  constexpr char kClass[] = "spec.provisioningClassName";
  const std::string& class_name = prc.provisioning_class_name;
  if (class_name.empty()) return RequiredValue(kClass);
  if (class_name.size() > 253) return TooLong(kClass, 253);
  if (!MatchesDns1123Subdomain(class_name)) {
    return InvalidValue(kClass, class_name,
                        absl::StrCat(kClass, " in body should match '^",
                                     kDns1123SubdomainFmt, "$'"));
  }
  if (prc.parameters.size() > 100) {
    return TooMany("spec.parameters", prc.parameters.size(), 100);
  }
  for (const auto& [key, value] : prc.parameters) {
    if (value.size() > 255) {
      return TooLong(absl::StrCat("spec.parameters[", key, "]"), 255);
    }
  }
  if (prc.managed_resources.size() > 100) {
    return TooMany("spec.managedResources", prc.managed_resources.size(), 100);
  }
  // listType=set.
  std::set<std::string> resources;
  for (size_t i = 0; i < prc.managed_resources.size(); ++i) {
    if (!resources.insert(prc.managed_resources[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("spec.managedResources[", i, "]: Duplicate value: \"",
                       prc.managed_resources[i], "\""));
    }
  }
  constexpr char kNodeSelector[] = "spec.podSetUpdates.nodeSelector";
  const auto& selectors = prc.pod_set_updates_node_selector;
  if (selectors.size() > 8) {
    return TooMany(kNodeSelector, selectors.size(), 8);
  }
  // listType=map keyed by `key` (v1beta2, the storage version).
  std::set<std::string> keys;
  for (size_t i = 0; i < selectors.size(); ++i) {
    const ProvisioningRequestPodSetUpdatesNodeSelector& s = selectors[i];
    const std::string path = absl::StrCat(kNodeSelector, "[", i, "]");
    if (s.key.empty()) return RequiredValue(path + ".key");
    if (s.key.size() > 317) return TooLong(path + ".key", 317);
    // ^(subdomain/)?name$ with no length limit on either part.
    const size_t slash = s.key.find('/');
    const bool key_ok =
        slash == std::string::npos
            ? MatchesQualifiedNamePart(s.key)
            : MatchesDns1123Subdomain(
                  absl::string_view(s.key).substr(0, slash)) &&
                  MatchesQualifiedNamePart(
                      absl::string_view(s.key).substr(slash + 1));
    if (!key_ok) {
      return InvalidValue(
          path + ".key", s.key,
          absl::StrCat(path,
                       ".key in body should match '^([a-z0-9]([-a-z0-9]*[a-z0-"
                       "9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-"
                       "9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$'"));
    }
    if (s.value_from_provisioning_class_detail.empty()) {
      return RequiredValue(path + ".valueFromProvisioningClassDetail");
    }
    if (s.value_from_provisioning_class_detail.size() > 32768) {
      return TooLong(path + ".valueFromProvisioningClassDetail", 32768);
    }
    if (!keys.insert(s.key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": Duplicate value: {\"key\":\"", s.key, "\"}"));
    }
  }
  const std::string& policy = prc.pod_set_merge_policy;
  if (!policy.empty() && policy != "IdenticalPodTemplates" &&
      policy != "IdenticalWorkloadSchedulingRequirements") {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.podSetMergePolicy: Unsupported value: \"", policy,
                     "\": supported values: \"IdenticalPodTemplates\", "
                     "\"IdenticalWorkloadSchedulingRequirements\""));
  }
  return absl::OkStatus();
}

// The CRD's x-kubernetes-validations of PodSetUpdate.tolerations, in the
// order Kueue declares them.
absl::Status ValidateUpdateTolerations(
    absl::string_view path, const std::vector<Toleration>& tolerations) {
  auto all = [&](auto rule) {
    return std::all_of(tolerations.begin(), tolerations.end(), rule);
  };
  auto invalid = [&](absl::string_view message) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": Invalid value: \"array\": ", message));
  };
  if (!all([](const Toleration& t) {
        return !t.key.empty() || t.op == "Exists";
      })) {
    return invalid(
        "operator must be Exists when 'key' is empty, which means 'match all "
        "values and all keys'");
  }
  if (!all([](const Toleration& t) {
        return !t.toleration_seconds.has_value() || t.effect == "NoExecute";
      })) {
    return invalid(
        "effect must be 'NoExecute' when 'tolerationSeconds' is set");
  }
  if (!all([](const Toleration& t) {
        return t.op.empty() || t.op == "Equal" || t.op == "Exists";
      })) {
    return invalid("supported toleration values: 'Equal'(default), 'Exists'");
  }
  if (!all([](const Toleration& t) {
        return t.op != "Exists" || t.value.empty();
      })) {
    return invalid("a value must be empty when 'operator' is 'Exists'");
  }
  if (!all([](const Toleration& t) {
        return t.effect.empty() || t.effect == "NoSchedule" ||
               t.effect == "PreferNoSchedule" || t.effect == "NoExecute";
      })) {
    return invalid(
        "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', "
        "'NoExecute'");
  }
  return absl::OkStatus();
}

// The string-valued entries of metadata.<field> of a pod template written
// as JSON; empty when absent or unparsable (the codec writes it from a
// Struct or checked the client's text, so it parses).
Labels TemplateMetadataMap(const std::string& template_json,
                           const char* field) {
  Labels out;
  if (template_json.empty()) return out;
  nlohmann::json parsed =
      nlohmann::json::parse(template_json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return out;
  auto metadata = parsed.find("metadata");
  if (metadata == parsed.end() || !metadata->is_object()) return out;
  auto values = metadata->find(field);
  if (values == metadata->end() || !values->is_object()) return out;
  for (const auto& [key, value] : values->items()) {
    if (value.is_string()) out[key] = value.get<std::string>();
  }
  return out;
}

// One map a pod set update merges into, and who put it there.
struct MergeSource {
  std::string who;
  const Labels* values;
};

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

}  // namespace

absl::Status ValidateSubdomainName(absl::string_view path,
                                   absl::string_view name) {
  if (name.empty()) return Invalid(path, "name is required");
  if (name.size() > 253) {
    return Invalid(path, "must be no more than 253 characters");
  }
  if (!MatchesDns1123Subdomain(name)) {
    return Invalid(path, absl::StrCat("\"", name, "\" is not a valid name: ",
                                      kDns1123SubdomainErrMsg));
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
        } else if constexpr (std::is_same_v<T, ProvisioningRequestConfig>) {
          return ValidateProvisioningRequestConfig(o);
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

absl::Status ValidateLabels(absl::string_view path, const Labels& labels) {
  for (const auto& [key, value] : labels) {
    const std::vector<std::string> key_errors = QualifiedNameErrors(key);
    if (!key_errors.empty()) return InvalidValue(path, key, key_errors[0]);
    const std::vector<std::string> value_errors = LabelValueErrors(value);
    if (!value_errors.empty()) {
      return InvalidValue(path, value, value_errors[0]);
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAnnotations(absl::string_view path,
                                 const Labels& annotations) {
  constexpr size_t kTotalAnnotationSizeLimit = 256 * 1024;
  size_t total = 0;
  for (const auto& [key, value] : annotations) {
    const std::vector<std::string> errors =
        QualifiedNameErrors(absl::AsciiStrToLower(key));
    if (!errors.empty()) return InvalidValue(path, key, errors[0]);
    total += key.size() + value.size();
  }
  if (total > kTotalAnnotationSizeLimit) {
    return TooLong(path, kTotalAnnotationSizeLimit);
  }
  return absl::OkStatus();
}

absl::Status ValidatePodSetUpdates(const Workload& wl, size_t check_index,
                                   const std::vector<PodSetUpdate>& updates) {
  const std::string base =
      absl::StrCat("status.admissionChecks[", check_index, "].podSetUpdates");
  // The CRD's schema first, as the API server checks it before webhooks.
  if (updates.size() > 18) return TooMany(base, updates.size(), 18);
  for (size_t i = 0; i < updates.size(); ++i) {
    const std::string path = absl::StrCat(base, "[", i, "].tolerations");
    if (updates[i].tolerations.size() > 8) {
      return TooMany(path, updates[i].tolerations.size(), 8);
    }
    KQ_RETURN_IF_ERROR(ValidateUpdateTolerations(path, updates[i].tolerations));
  }
  // Kueue's validatePodSetUpdates.
  std::set<std::string> known;
  for (const PodSet& ps : wl.pod_sets) known.insert(ps.name);
  std::vector<std::string> supported;
  for (const std::string& name : known) {
    supported.push_back(absl::StrCat("\"", name, "\""));
  }
  for (size_t i = 0; i < updates.size(); ++i) {
    const PodSetUpdate& update = updates[i];
    const std::string path = absl::StrCat(base, "[", i, "]");
    if (!known.count(update.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".name: Unsupported value: \"", update.name,
          "\": supported values: ", absl::StrJoin(supported, ", ")));
    }
    for (size_t t = 0; t < update.tolerations.size(); ++t) {
      const std::string& key = update.tolerations[t].key;
      if (key.empty()) continue;
      const std::vector<std::string> errors = QualifiedNameErrors(key);
      if (!errors.empty()) {
        return InvalidValue(absl::StrCat(path, ".tolerations[", t, "].key"),
                            key, errors[0]);
      }
    }
    KQ_RETURN_IF_ERROR(
        ValidateAnnotations(path + ".annotations", update.annotations));
    KQ_RETURN_IF_ERROR(
        ValidateLabels(path + ".nodeSelector", update.node_selector));
    KQ_RETURN_IF_ERROR(ValidateLabels(path + ".labels", update.labels));
  }
  return absl::OkStatus();
}

absl::Status CheckPodSetUpdateConflicts(
    const Workload& wl, size_t check_index,
    const std::vector<PodSetUpdate>& updates,
    const std::map<std::string, ResourceFlavor>& flavors) {
  // The update of pod set `name` in a check's list that Kueue merges: the
  // first (getPodSetsInfoFromStatus stops there).
  auto first_update = [](const std::vector<PodSetUpdate>& list,
                         const std::string& name) -> const PodSetUpdate* {
    for (const PodSetUpdate& u : list) {
      if (u.name == name) return &u;
    }
    return nullptr;
  };
  for (size_t i = 0; i < updates.size(); ++i) {
    const PodSetUpdate& update = updates[i];
    if (first_update(updates, update.name) != &update) continue;
    const PodSet* pod_set = nullptr;
    for (const PodSet& ps : wl.pod_sets) {
      if (ps.name == update.name) pod_set = &ps;
    }
    if (pod_set == nullptr) continue;  // ValidatePodSetUpdates refuses it
    // Kueue's merge order: the assignment's flavors, its pod set label,
    // every check's update, then the template.
    std::vector<MergeSource> node_selectors, labels, annotations;
    std::vector<Labels> flavor_labels;
    std::vector<std::string> flavor_names;
    if (HoldsQuota(wl)) {
      for (const PodSetAssignment& psa : wl.admission->pod_set_assignments) {
        if (psa.name != update.name) continue;
        std::set<std::string> seen;
        for (const auto& [resource, flavor] : psa.flavors) {
          if (!seen.insert(flavor).second) continue;
          auto it = flavors.find(flavor);
          if (it == flavors.end()) continue;
          flavor_labels.push_back(it->second.node_labels);
          flavor_names.push_back(flavor);
        }
      }
    }
    for (size_t f = 0; f < flavor_labels.size(); ++f) {
      node_selectors.push_back(
          {absl::StrCat("the nodeLabels of ResourceFlavor \"", flavor_names[f],
                        "\""),
           &flavor_labels[f]});
    }
    const Labels pod_set_label = {{"kueue.x-k8s.io/podset", update.name}};
    labels.push_back({"Kueue's pod set label", &pod_set_label});
    for (size_t c = 0; c < wl.admission_checks.size(); ++c) {
      if (c == check_index) continue;
      const AdmissionCheckState& other = wl.admission_checks[c];
      const PodSetUpdate* theirs =
          first_update(other.pod_set_updates, update.name);
      if (theirs == nullptr) continue;
      const std::string who = absl::StrCat(
          "the podSetUpdates of admission check \"", other.name, "\"");
      node_selectors.push_back({who, &theirs->node_selector});
      labels.push_back({who, &theirs->labels});
      annotations.push_back({who, &theirs->annotations});
    }
    const Labels template_labels =
        TemplateMetadataMap(pod_set->template_json, "labels");
    const Labels template_annotations =
        TemplateMetadataMap(pod_set->template_json, "annotations");
    const std::string tmpl = "the pod set's template";
    node_selectors.push_back({tmpl, &pod_set->node_selector});
    labels.push_back({tmpl, &template_labels});
    annotations.push_back({tmpl, &template_annotations});

    const std::string path = absl::StrCat(
        "status.admissionChecks[", check_index, "].podSetUpdates[", i, "]");
    for (const auto& [field, values, sources] :
         {std::tuple<const char*, const Labels*, std::vector<MergeSource>*>{
              "annotations", &update.annotations, &annotations},
          {"labels", &update.labels, &labels},
          {"nodeSelector", &update.node_selector, &node_selectors}}) {
      for (const auto& [key, value] : *values) {
        for (const MergeSource& source : *sources) {
          auto existing = source.values->find(key);
          if (existing == source.values->end() || existing->second == value) {
            continue;
          }
          return absl::InvalidArgumentError(absl::StrCat(
              path, ".", field, "[", key, "]: Invalid value: \"", value,
              "\": conflicts with \"", existing->second, "\" in ", source.who));
        }
      }
    }
  }
  return absl::OkStatus();
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
      return Invalid(p + ".name", absl::StrCat("pod set \"", ps.name.str(),
                                               "\" is listed twice"));
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
    KQ_RETURN_IF_ERROR(
        ValidateTolerations(p + ".tolerations", ps.tolerations.ToVector()));
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
        absl::StrCat("Workload in namespace \"", wl.meta.namespace_name.str(),
                     "\": metadata.name: name or generateName is required"));
  }
  absl::Status valid = ValidateWorkload(wl);
  if (!valid.ok()) return About(Describe(KeyOf(wl)), valid);
  return absl::OkStatus();
}

}  // namespace kq
