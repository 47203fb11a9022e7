// Kueue's Workload webhook (pkg/webhooks/workload_webhook.go) and CRD
// rules, and the checks of what an admission check's controller reports
// (podSetUpdates).

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"
#include "server/core/apimachinery.h"
#include "server/core/validation.h"
#include "server/core/validation_internal.h"

namespace kq {
namespace {

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

}  // namespace

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
