// Kueue's ProvisioningRequestConfig CRD rules.

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
#include "server/core/validation_internal.h"

namespace kq {

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

}  // namespace kq
