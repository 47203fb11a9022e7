#include "server/core/validation.h"

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

absl::Status Invalid(absl::string_view path, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
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
        } else if constexpr (std::is_same_v<T, MultiKueueConfig>) {
          return ValidateMultiKueueConfig(o);
        } else if constexpr (std::is_same_v<T, MultiKueueCluster>) {
          return ValidateMultiKueueCluster(o);
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

std::vector<std::string> ConfigWarnings(const ConfigObject& object) {
  std::vector<std::string> warnings;
  if (const auto* mkc = std::get_if<MultiKueueCluster>(&object);
      mkc != nullptr && !mkc->location.empty() &&
      mkc->location_type == kLocationTypeSecret) {
    warnings.push_back(absl::StrCat(
        "MultiKueueCluster \"", mkc->meta.name,
        "\": ", kMultiKueueSecretMessage,
        "; the cluster stays inactive (BadKubeConfig) until then"));
  }
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

}  // namespace kq
