// ParseManifests: Kueue-shaped JSON documents -> kq.v1 protos.

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"
#include "manifest/manifest.h"
#include "manifest/pod_requests.h"
#include "manifest/proto_json.h"
#include "manifest/reader.h"
#include "manifest/yaml.h"

namespace kq::manifest {
namespace {

using internal::AsString;
using internal::FieldError;
using internal::IndexPath;
using internal::JsonTypeName;
using internal::KeyPath;
using internal::ObjectReader;
using nlohmann::json;
template <typename T>
using Repeated = google::protobuf::RepeatedPtrField<T>;

constexpr absl::string_view kKueueGroup = "kueue.x-k8s.io";
constexpr absl::string_view kKueueConfigGroup = "config.kueue.x-k8s.io";
constexpr absl::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
constexpr absl::string_view kPriorityClassLabel =
    "kueue.x-k8s.io/priority-class";
constexpr absl::string_view kMaxExecTimeLabel =
    "kueue.x-k8s.io/max-exec-time-seconds";
constexpr absl::string_view kMinParallelismAnnotation =
    "kueue.x-k8s.io/job-min-parallelism";
constexpr absl::string_view kWorkloadPriorityClassSource =
    "kueue.x-k8s.io/workloadpriorityclass";

// The served versions of kueue.x-k8s.io that kq reads. Field names differ
// between them (KUEUE.md 1.0).
enum class Version {
  // Only Cohort was ever served here; its parent field is `parent`.
  kV1alpha1,
  // Deprecated but served: `cohort`, `admissionChecks`, Borrow/Preempt.
  kV1beta1,
  // The storage version.
  kV1beta2,
};

// ---------------------------------------------------------------------------
// Shared shapes.

// ObjectMeta. Server-managed fields kubectl prints (managedFields,
// finalizers, ...) are accepted silently so that `kubectl get -o yaml`
// output applies without noise.
absl::Status ReadMetadata(ObjectReader& root, v1::ObjectMeta* meta) {
  const json* field = root.Find("metadata");
  if (field == nullptr) return FieldError("metadata", "required");
  KQ_ASSIGN_OR_RETURN(ObjectReader m,
                      ObjectReader::Open(*field, "metadata", root.warnings()));
  KQ_RETURN_IF_ERROR(m.ReadString("name", meta->mutable_name()));
  KQ_RETURN_IF_ERROR(m.ReadString("namespace", meta->mutable_namespace_()));
  KQ_RETURN_IF_ERROR(
      m.ReadString("generateName", meta->mutable_generate_name()));
  KQ_RETURN_IF_ERROR(m.ReadString("uid", meta->mutable_uid()));
  KQ_RETURN_IF_ERROR(m.ReadStringMap("labels", meta->mutable_labels()));
  KQ_RETURN_IF_ERROR(
      m.ReadStringMap("annotations", meta->mutable_annotations()));
  KQ_ASSIGN_OR_RETURN(std::optional<google::protobuf::Timestamp> created,
                      m.Timestamp("creationTimestamp"));
  if (created.has_value()) *meta->mutable_creation_timestamp() = *created;
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> resource_version,
                      m.String("resourceVersion"));
  int64_t revision = 0;
  // Kubernetes resource versions are opaque; kq's are numbers. Another
  // system's version means nothing here, so it is dropped.
  if (resource_version.has_value() &&
      absl::SimpleAtoi(*resource_version, &revision)) {
    meta->set_revision(revision);
  }
  for (absl::string_view ignored :
       {"generation", "finalizers", "ownerReferences", "managedFields",
        "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"}) {
    m.Ignore(ignored);
  }
  m.WarnUnknown();
  return absl::OkStatus();
}

absl::Status ReadConditions(ObjectReader& parent, absl::string_view key,
                            Repeated<v1::Condition>* out) {
  return parent.ReadObjectList(key, [&](ObjectReader& c) -> absl::Status {
    v1::Condition* condition = out->Add();
    KQ_RETURN_IF_ERROR(c.ReadString("type", condition->mutable_type()));
    KQ_RETURN_IF_ERROR(c.ReadString("status", condition->mutable_status()));
    KQ_RETURN_IF_ERROR(c.ReadString("reason", condition->mutable_reason()));
    KQ_RETURN_IF_ERROR(c.ReadString("message", condition->mutable_message()));
    KQ_ASSIGN_OR_RETURN(std::optional<google::protobuf::Timestamp> time,
                        c.Timestamp("lastTransitionTime"));
    if (time.has_value()) *condition->mutable_last_transition_time() = *time;
    c.Ignore("observedGeneration");
    return absl::OkStatus();
  });
}

absl::Status ReadToleration(ObjectReader& t, v1::Toleration* toleration) {
  KQ_RETURN_IF_ERROR(t.ReadString("key", toleration->mutable_key()));
  KQ_RETURN_IF_ERROR(t.ReadString("operator", toleration->mutable_operator_()));
  KQ_RETURN_IF_ERROR(t.ReadString("value", toleration->mutable_value()));
  KQ_RETURN_IF_ERROR(t.ReadString("effect", toleration->mutable_effect()));
  KQ_ASSIGN_OR_RETURN(
      std::optional<int64_t> seconds,
      t.Integer("tolerationSeconds", std::numeric_limits<int64_t>::min(),
                std::numeric_limits<int64_t>::max()));
  if (seconds.has_value()) toleration->set_toleration_seconds(*seconds);
  return absl::OkStatus();
}

absl::Status ReadTolerations(ObjectReader& parent, absl::string_view key,
                             Repeated<v1::Toleration>* out) {
  return parent.ReadObjectList(
      key, [&](ObjectReader& t) { return ReadToleration(t, out->Add()); });
}

absl::Status ReadSelectorRequirements(
    ObjectReader& parent, absl::string_view key,
    Repeated<v1::LabelSelectorRequirement>* out) {
  return parent.ReadObjectList(key, [&](ObjectReader& e) -> absl::Status {
    v1::LabelSelectorRequirement* requirement = out->Add();
    KQ_RETURN_IF_ERROR(e.ReadString("key", requirement->mutable_key()));
    KQ_RETURN_IF_ERROR(
        e.ReadString("operator", requirement->mutable_operator_()));
    return e.ReadStringList("values", requirement->mutable_values());
  });
}

absl::Status ReadLabelSelector(ObjectReader& s, v1::LabelSelector* selector) {
  KQ_RETURN_IF_ERROR(
      s.ReadStringMap("matchLabels", selector->mutable_match_labels()));
  return ReadSelectorRequirements(s, "matchExpressions",
                                  selector->mutable_match_expressions());
}

absl::Status ReadFairSharing(ObjectReader& parent,
                             std::function<v1::FairSharing*()> mutable_fs) {
  return parent.ReadObject("fairSharing", [&](ObjectReader& f) -> absl::Status {
    v1::FairSharing* fair_sharing = mutable_fs();
    KQ_ASSIGN_OR_RETURN(std::optional<std::string> weight,
                        f.Quantity("weight"));
    if (weight.has_value()) fair_sharing->set_weight(*weight);
    return absl::OkStatus();
  });
}

absl::Status ReadResourceGroups(ObjectReader& spec,
                                Repeated<v1::ResourceGroup>* out) {
  return spec.ReadObjectList(
      "resourceGroups", [&](ObjectReader& g) -> absl::Status {
        v1::ResourceGroup* group = out->Add();
        KQ_RETURN_IF_ERROR(g.ReadStringList(
            "coveredResources", group->mutable_covered_resources()));
        return g.ReadObjectList(
            "flavors", [&](ObjectReader& f) -> absl::Status {
              v1::FlavorQuotas* flavor = group->add_flavors();
              KQ_RETURN_IF_ERROR(
                  f.ReadRequiredString("name", flavor->mutable_name()));
              return f.ReadObjectList(
                  "resources", [&](ObjectReader& r) -> absl::Status {
                    v1::ResourceQuota* quota = flavor->add_resources();
                    KQ_RETURN_IF_ERROR(
                        r.ReadRequiredString("name", quota->mutable_name()));
                    KQ_ASSIGN_OR_RETURN(std::optional<std::string> nominal,
                                        r.Quantity("nominalQuota"));
                    if (!nominal.has_value()) {
                      return FieldError(r.PathOf("nominalQuota"), "required");
                    }
                    quota->set_nominal_quota(*nominal);
                    KQ_ASSIGN_OR_RETURN(std::optional<std::string> borrow,
                                        r.Quantity("borrowingLimit"));
                    if (borrow.has_value()) quota->set_borrowing_limit(*borrow);
                    KQ_ASSIGN_OR_RETURN(std::optional<std::string> lend,
                                        r.Quantity("lendingLimit"));
                    if (lend.has_value()) quota->set_lending_limit(*lend);
                    return absl::OkStatus();
                  });
            });
      });
}

// flavorsReservation / flavorsUsage entries of ClusterQueue and LocalQueue
// status.
absl::Status ReadFlavorUsages(ObjectReader& status, absl::string_view key,
                              Repeated<v1::FlavorUsage>* out) {
  return status.ReadObjectList(key, [&](ObjectReader& f) -> absl::Status {
    v1::FlavorUsage* usage = out->Add();
    KQ_RETURN_IF_ERROR(f.ReadString("name", usage->mutable_name()));
    return f.ReadObjectList("resources", [&](ObjectReader& r) -> absl::Status {
      v1::ResourceUsage* resource = usage->add_resources();
      KQ_RETURN_IF_ERROR(r.ReadString("name", resource->mutable_name()));
      KQ_RETURN_IF_ERROR(r.ReadQuantity("total", resource->mutable_total()));
      return r.ReadQuantity("borrowed", resource->mutable_borrowed());
    });
  });
}

// The counters and usage shared by ClusterQueue and LocalQueue status.
template <typename Status>
absl::Status ReadQueueStatus(ObjectReader& s, Status* status) {
  KQ_RETURN_IF_ERROR(
      ReadConditions(s, "conditions", status->mutable_conditions()));
  KQ_RETURN_IF_ERROR(ReadFlavorUsages(s, "flavorsReservation",
                                      status->mutable_flavors_reservation()));
  KQ_RETURN_IF_ERROR(
      ReadFlavorUsages(s, "flavorsUsage", status->mutable_flavors_usage()));
  // LocalQueue v1beta1 spells it `flavorUsage`.
  KQ_RETURN_IF_ERROR(
      ReadFlavorUsages(s, "flavorUsage", status->mutable_flavors_usage()));
  int32_t count = 0;
  KQ_RETURN_IF_ERROR(s.ReadInt32("pendingWorkloads", &count));
  status->set_pending_workloads(count);
  count = 0;
  KQ_RETURN_IF_ERROR(s.ReadInt32("reservingWorkloads", &count));
  status->set_reserving_workloads(count);
  count = 0;
  KQ_RETURN_IF_ERROR(s.ReadInt32("admittedWorkloads", &count));
  status->set_admitted_workloads(count);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Pod templates.

// The path of the first number in `value` (at `path`) that JSON cannot
// write (YAML's .nan and .inf), or nullopt.
std::optional<std::string> FirstNonFiniteNumber(const json& value,
                                                const std::string& path) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    return path;
  }
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      if (auto found = FirstNonFiniteNumber(child, path + "." + key)) {
        return found;
      }
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (auto found =
              FirstNonFiniteNumber(value[i], absl::StrCat(path, "[", i, "]"))) {
        return found;
      }
    }
  }
  return std::nullopt;
}

// A pod template as the JSON text kqd is sent: kqd reads text for a
// fraction of what a Struct costs both sides (every Struct value is a
// message of its own).
absl::StatusOr<std::string> PodTemplateText(const json& template_json,
                                            const std::string& path) {
  if (auto found = FirstNonFiniteNumber(template_json, path)) {
    return FieldError(*found, "must be a finite number");
  }
  try {
    return template_json.dump();
  } catch (const json::exception&) {
    return FieldError(path, "contains text that is not UTF-8");
  }
}

// Fills the admission-relevant fields of a pod set from a PodTemplateSpec
// at `path`: the template itself, the per-pod requests, the node selector,
// tolerations and required node affinity. The template is a Kubernetes
// object kq does not own: no unknown-field warnings inside it.
absl::Status ReadPodTemplate(const json& template_json, const std::string& path,
                             v1::PodSet* pod_set) {
  KQ_ASSIGN_OR_RETURN(ObjectReader tmpl,
                      ObjectReader::Open(template_json, path, nullptr, false));
  if (!template_json.empty()) {
    KQ_ASSIGN_OR_RETURN(*pod_set->mutable_template_json(),
                        PodTemplateText(template_json, path));
  }
  const json* spec_json = tmpl.Find("spec");
  if (spec_json == nullptr) return absl::OkStatus();
  const std::string spec_path = tmpl.PathOf("spec");
  KQ_ASSIGN_OR_RETURN(
      ObjectReader spec,
      ObjectReader::Open(*spec_json, spec_path, nullptr, false));
  KQ_ASSIGN_OR_RETURN(auto requests,
                      internal::PodRequestsAt(*spec_json, spec_path));
  pod_set->mutable_requests()->insert(requests.begin(), requests.end());
  KQ_RETURN_IF_ERROR(
      spec.ReadStringMap("nodeSelector", pod_set->mutable_node_selector()));
  KQ_RETURN_IF_ERROR(
      ReadTolerations(spec, "tolerations", pod_set->mutable_tolerations()));
  return spec.ReadObject("affinity", [&](ObjectReader& affinity) {
    return affinity.ReadObject("nodeAffinity", [&](ObjectReader& node) {
      return node.ReadObject("requiredDuringSchedulingIgnoredDuringExecution",
                             [&](ObjectReader& required) {
                               return required.ReadObjectList(
                                   "nodeSelectorTerms",
                                   [&](ObjectReader& term) {
                                     return ReadSelectorRequirements(
                                         term, "matchExpressions",
                                         pod_set->add_required_node_affinity()
                                             ->mutable_match_expressions());
                                   });
                             });
    });
  });
}

// ---------------------------------------------------------------------------
// Kinds.

absl::Status ReadNamespace(ObjectReader& root, v1::Namespace* ns) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, ns->mutable_metadata()));
  // kq keeps only names and labels; finalizers and phase are Kubernetes'.
  root.Ignore("spec");
  root.Ignore("status");
  return absl::OkStatus();
}

absl::Status ReadResourceFlavor(ObjectReader& root, v1::ResourceFlavor* rf) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, rf->mutable_metadata()));
  return root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
    v1::ResourceFlavorSpec* spec = rf->mutable_spec();
    KQ_RETURN_IF_ERROR(
        s.ReadStringMap("nodeLabels", spec->mutable_node_labels()));
    KQ_RETURN_IF_ERROR(
        s.ReadObjectList("nodeTaints", [&](ObjectReader& t) -> absl::Status {
          v1::Taint* taint = spec->add_node_taints();
          KQ_RETURN_IF_ERROR(t.ReadString("key", taint->mutable_key()));
          KQ_RETURN_IF_ERROR(t.ReadString("value", taint->mutable_value()));
          KQ_RETURN_IF_ERROR(t.ReadString("effect", taint->mutable_effect()));
          t.Ignore("timeAdded");
          return absl::OkStatus();
        }));
    KQ_RETURN_IF_ERROR(
        ReadTolerations(s, "tolerations", spec->mutable_tolerations()));
    return s.ReadString("topologyName", spec->mutable_topology_name());
  });
}

// Kueue v1beta1 accepted two deprecated flavor fungibility values, both
// equivalent to MayStopSearch.
absl::Status ReadFungibilityPolicy(ObjectReader& f, absl::string_view key,
                                   absl::string_view deprecated,
                                   Version version, std::string* out) {
  KQ_RETURN_IF_ERROR(f.ReadString(key, out));
  if (version == Version::kV1beta1 && *out == deprecated) {
    f.warnings()->push_back(absl::StrCat(f.PathOf(key), ": \"", deprecated,
                                         "\" is deprecated; using "
                                         "\"MayStopSearch\""));
    *out = "MayStopSearch";
  }
  return absl::OkStatus();
}

absl::Status ReadClusterQueueSpec(ObjectReader& s, Version version,
                                  v1::ClusterQueueSpec* spec) {
  KQ_RETURN_IF_ERROR(ReadResourceGroups(s, spec->mutable_resource_groups()));
  KQ_RETURN_IF_ERROR(
      s.ReadString(version == Version::kV1beta1 ? "cohort" : "cohortName",
                   spec->mutable_cohort_name()));
  KQ_RETURN_IF_ERROR(
      s.ReadString("queueingStrategy", spec->mutable_queueing_strategy()));
  // Present-but-empty selects every namespace, absent selects none: the
  // proto field's presence carries Kueue's distinction.
  KQ_RETURN_IF_ERROR(s.ReadObject("namespaceSelector", [&](ObjectReader& n) {
    return ReadLabelSelector(n, spec->mutable_namespace_selector());
  }));
  KQ_RETURN_IF_ERROR(
      s.ReadObject("flavorFungibility", [&](ObjectReader& f) -> absl::Status {
        v1::FlavorFungibility* fungibility = spec->mutable_flavor_fungibility();
        KQ_RETURN_IF_ERROR(
            ReadFungibilityPolicy(f, "whenCanBorrow", "Borrow", version,
                                  fungibility->mutable_when_can_borrow()));
        KQ_RETURN_IF_ERROR(
            ReadFungibilityPolicy(f, "whenCanPreempt", "Preempt", version,
                                  fungibility->mutable_when_can_preempt()));
        return f.ReadString("preference", fungibility->mutable_preference());
      }));
  KQ_RETURN_IF_ERROR(
      s.ReadObject("preemption", [&](ObjectReader& p) -> absl::Status {
        v1::ClusterQueuePreemption* preemption = spec->mutable_preemption();
        KQ_RETURN_IF_ERROR(
            p.ReadString("reclaimWithinCohort",
                         preemption->mutable_reclaim_within_cohort()));
        KQ_RETURN_IF_ERROR(p.ReadString(
            "withinClusterQueue", preemption->mutable_within_cluster_queue()));
        return p.ReadObject(
            "borrowWithinCohort", [&](ObjectReader& b) -> absl::Status {
              v1::BorrowWithinCohort* borrow =
                  preemption->mutable_borrow_within_cohort();
              KQ_RETURN_IF_ERROR(
                  b.ReadString("policy", borrow->mutable_policy()));
              KQ_ASSIGN_OR_RETURN(std::optional<int32_t> threshold,
                                  b.Int32("maxPriorityThreshold"));
              if (threshold.has_value()) {
                borrow->set_max_priority_threshold(*threshold);
              }
              return absl::OkStatus();
            });
      }));

  // Admission checks: v1beta1 also has a plain list of names, which Kueue
  // forbids together with the strategy; both become strategy rules.
  if (version == Version::kV1beta1) {
    const json* names = s.Find("admissionChecks");
    const json* strategy = s.Find("admissionChecksStrategy");
    if (names != nullptr && strategy != nullptr) {
      return FieldError(s.PathOf("admissionChecks"),
                        "must not be set together with "
                        "spec.admissionChecksStrategy");
    }
    google::protobuf::RepeatedPtrField<std::string> plain;
    KQ_RETURN_IF_ERROR(s.ReadStringList("admissionChecks", &plain));
    for (std::string& name : plain) {
      spec->add_admission_checks()->set_name(std::move(name));
    }
  }
  KQ_RETURN_IF_ERROR(
      s.ReadObject("admissionChecksStrategy", [&](ObjectReader& a) {
        return a.ReadObjectList(
            "admissionChecks", [&](ObjectReader& rule) -> absl::Status {
              v1::AdmissionCheckStrategyRule* out =
                  spec->add_admission_checks();
              KQ_RETURN_IF_ERROR(
                  rule.ReadRequiredString("name", out->mutable_name()));
              return rule.ReadStringList("onFlavors",
                                         out->mutable_on_flavors());
            });
      }));
  KQ_RETURN_IF_ERROR(s.ReadString("stopPolicy", spec->mutable_stop_policy()));
  KQ_RETURN_IF_ERROR(
      ReadFairSharing(s, [&] { return spec->mutable_fair_sharing(); }));
  if (s.Find("admissionScope") != nullptr) {
    s.warnings()->push_back(
        absl::StrCat(s.PathOf("admissionScope"),
                     ": admissionScope is not supported yet "
                     "and is ignored"));
  }
  return absl::OkStatus();
}

absl::Status ReadClusterQueue(ObjectReader& root, Version version,
                              v1::ClusterQueue* cq) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, cq->mutable_metadata()));
  KQ_RETURN_IF_ERROR(root.ReadObject("spec", [&](ObjectReader& s) {
    return ReadClusterQueueSpec(s, version, cq->mutable_spec());
  }));
  // Status is computed by the server; read what kq models, drop the rest.
  return root.ReadLenientObject("status", [&](ObjectReader& s) {
    return ReadQueueStatus(s, cq->mutable_status());
  });
}

absl::Status ReadCohort(ObjectReader& root, Version version, v1::Cohort* co) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, co->mutable_metadata()));
  root.Ignore("status");
  return root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
    v1::CohortSpec* spec = co->mutable_spec();
    KQ_RETURN_IF_ERROR(
        s.ReadString(version == Version::kV1alpha1 ? "parent" : "parentName",
                     spec->mutable_parent_name()));
    KQ_RETURN_IF_ERROR(ReadResourceGroups(s, spec->mutable_resource_groups()));
    return ReadFairSharing(s, [&] { return spec->mutable_fair_sharing(); });
  });
}

absl::Status ReadLocalQueue(ObjectReader& root, v1::LocalQueue* lq) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, lq->mutable_metadata()));
  KQ_RETURN_IF_ERROR(
      root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
        v1::LocalQueueSpec* spec = lq->mutable_spec();
        KQ_RETURN_IF_ERROR(
            s.ReadString("clusterQueue", spec->mutable_cluster_queue()));
        KQ_RETURN_IF_ERROR(
            s.ReadString("stopPolicy", spec->mutable_stop_policy()));
        return ReadFairSharing(s, [&] { return spec->mutable_fair_sharing(); });
      }));
  return root.ReadLenientObject("status", [&](ObjectReader& s) {
    return ReadQueueStatus(s, lq->mutable_status());
  });
}

absl::Status ReadWorkloadPriorityClass(ObjectReader& root,
                                       v1::WorkloadPriorityClass* wpc) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, wpc->mutable_metadata()));
  int32_t value = 0;
  KQ_RETURN_IF_ERROR(root.ReadInt32("value", &value));
  wpc->set_value(value);
  return root.ReadString("description", wpc->mutable_description());
}

absl::Status ReadAdmissionCheck(ObjectReader& root, Version version,
                                v1::AdmissionCheck* ac) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, ac->mutable_metadata()));
  KQ_RETURN_IF_ERROR(
      root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
        v1::AdmissionCheckSpec* spec = ac->mutable_spec();
        KQ_RETURN_IF_ERROR(
            s.ReadString("controllerName", spec->mutable_controller_name()));
        KQ_RETURN_IF_ERROR(
            s.ReadObject("parameters", [&](ObjectReader& p) -> absl::Status {
              v1::AdmissionCheckParametersReference* parameters =
                  spec->mutable_parameters();
              KQ_RETURN_IF_ERROR(
                  p.ReadString("apiGroup", parameters->mutable_api_group()));
              KQ_RETURN_IF_ERROR(
                  p.ReadString("kind", parameters->mutable_kind()));
              return p.ReadString("name", parameters->mutable_name());
            }));
        if (version == Version::kV1beta1 &&
            s.Find("retryDelayMinutes") != nullptr) {
          s.warnings()->push_back(
              absl::StrCat(s.PathOf("retryDelayMinutes"),
                           ": deprecated in Kueue and ignored by kq"));
        }
        return absl::OkStatus();
      }));
  return root.ReadLenientObject("status", [&](ObjectReader& s) {
    return ReadConditions(s, "conditions",
                          ac->mutable_status()->mutable_conditions());
  });
}

// v1beta1 and v1beta2 spell it alike. Defaults (retryStrategy) are the
// server's to fill in, so that a manifest reads back as written.
absl::Status ReadProvisioningRequestConfig(ObjectReader& root,
                                           v1::ProvisioningRequestConfig* prc) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, prc->mutable_metadata()));
  return root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
    v1::ProvisioningRequestConfigSpec* spec = prc->mutable_spec();
    KQ_RETURN_IF_ERROR(s.ReadString("provisioningClassName",
                                    spec->mutable_provisioning_class_name()));
    KQ_RETURN_IF_ERROR(
        s.ReadStringMap("parameters", spec->mutable_parameters()));
    KQ_RETURN_IF_ERROR(s.ReadStringList("managedResources",
                                        spec->mutable_managed_resources()));
    KQ_RETURN_IF_ERROR(
        s.ReadObject("retryStrategy", [&](ObjectReader& r) -> absl::Status {
          v1::ProvisioningRequestRetryStrategy* retry =
              spec->mutable_retry_strategy();
          KQ_ASSIGN_OR_RETURN(std::optional<int32_t> limit,
                              r.Int32("backoffLimitCount"));
          if (limit.has_value()) retry->set_backoff_limit_count(*limit);
          KQ_ASSIGN_OR_RETURN(std::optional<int32_t> base,
                              r.Int32("backoffBaseSeconds"));
          if (base.has_value()) retry->set_backoff_base_seconds(*base);
          KQ_ASSIGN_OR_RETURN(std::optional<int32_t> max,
                              r.Int32("backoffMaxSeconds"));
          if (max.has_value()) retry->set_backoff_max_seconds(*max);
          return absl::OkStatus();
        }));
    KQ_RETURN_IF_ERROR(s.ReadObject("podSetUpdates", [&](ObjectReader& u) {
      return u.ReadObjectList(
          "nodeSelector", [&](ObjectReader& n) -> absl::Status {
            v1::ProvisioningRequestPodSetUpdatesNodeSelector* selector =
                spec->add_pod_set_updates_node_selector();
            KQ_RETURN_IF_ERROR(n.ReadString("key", selector->mutable_key()));
            return n.ReadString(
                "valueFromProvisioningClassDetail",
                selector->mutable_value_from_provisioning_class_detail());
          });
    }));
    return s.ReadString("podSetMergePolicy",
                        spec->mutable_pod_set_merge_policy());
  });
}

// v1beta1 has no quotaManagement. Defaults are the server's to fill in.
absl::Status ReadMultiKueueConfig(ObjectReader& root, Version version,
                                  v1::MultiKueueConfig* config) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, config->mutable_metadata()));
  return root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
    v1::MultiKueueConfigSpec* spec = config->mutable_spec();
    KQ_RETURN_IF_ERROR(s.ReadStringList("clusters", spec->mutable_clusters()));
    if (version == Version::kV1beta1) return absl::OkStatus();
    return s.ReadString("quotaManagement", spec->mutable_quota_management());
  });
}

// v1beta2 nests the sources under spec.clusterSource; v1beta1 has
// spec.kubeConfig, and a spec.clusterProfileRef that it keeps only for
// conversions and that "has no effect" there, so kq ignores it.
absl::Status ReadMultiKueueCluster(ObjectReader& root, Version version,
                                   v1::MultiKueueCluster* cluster) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, cluster->mutable_metadata()));
  KQ_RETURN_IF_ERROR(
      root.ReadObject("spec", [&](ObjectReader& s) -> absl::Status {
        v1::ClusterSource* source =
            cluster->mutable_spec()->mutable_cluster_source();
        auto read_kube_config = [&](ObjectReader& k) -> absl::Status {
          v1::KubeConfig* kube_config = source->mutable_kube_config();
          KQ_RETURN_IF_ERROR(
              k.ReadString("location", kube_config->mutable_location()));
          return k.ReadString("locationType",
                              kube_config->mutable_location_type());
        };
        if (version == Version::kV1beta1) {
          if (s.Find("clusterProfileRef") != nullptr) {
            s.Ignore("clusterProfileRef");
            s.warnings()->push_back(absl::StrCat(
                s.PathOf("clusterProfileRef"),
                ": has no effect in kueue.x-k8s.io/v1beta1; ignored"));
          }
          return s.ReadObject("kubeConfig", read_kube_config);
        }
        return s.ReadObject(
            "clusterSource", [&](ObjectReader& c) -> absl::Status {
              KQ_RETURN_IF_ERROR(c.ReadObject("kubeConfig", read_kube_config));
              return c.ReadObject(
                  "clusterProfileRef", [&](ObjectReader& p) -> absl::Status {
                    return p.ReadString(
                        "name",
                        source->mutable_cluster_profile_ref()->mutable_name());
                  });
            });
      }));
  // The status is the server's; read so that `kq get -o yaml` applies back.
  return root.ReadLenientObject("status", [&](ObjectReader& s) {
    return ReadConditions(s, "conditions",
                          cluster->mutable_status()->mutable_conditions());
  });
}

// One status.admissionChecks[].podSetUpdates entry (Kueue's PodSetUpdate).
absl::Status ReadPodSetUpdate(ObjectReader& u, v1::PodSetUpdate* update) {
  KQ_RETURN_IF_ERROR(u.ReadString("name", update->mutable_name()));
  KQ_RETURN_IF_ERROR(u.ReadStringMap("labels", update->mutable_labels()));
  KQ_RETURN_IF_ERROR(
      u.ReadStringMap("annotations", update->mutable_annotations()));
  KQ_RETURN_IF_ERROR(
      u.ReadStringMap("nodeSelector", update->mutable_node_selector()));
  return ReadTolerations(u, "tolerations", update->mutable_tolerations());
}

absl::Status ReadWorkloadSpec(ObjectReader& s, Version version,
                              v1::WorkloadSpec* spec) {
  KQ_RETURN_IF_ERROR(s.ReadString("queueName", spec->mutable_queue_name()));
  KQ_RETURN_IF_ERROR(
      s.ReadObjectList("podSets", [&](ObjectReader& p) -> absl::Status {
        v1::PodSet* pod_set = spec->add_pod_sets();
        pod_set->set_name("main");  // Kueue's default pod set name.
        KQ_RETURN_IF_ERROR(p.ReadString("name", pod_set->mutable_name()));
        int32_t count = 1;  // Kueue's default count.
        KQ_RETURN_IF_ERROR(p.ReadInt32("count", &count));
        pod_set->set_count(count);
        KQ_ASSIGN_OR_RETURN(std::optional<int32_t> min_count,
                            p.Int32("minCount"));
        if (min_count.has_value()) pod_set->set_min_count(*min_count);
        const json* tmpl = p.Find("template");
        if (tmpl == nullptr) return absl::OkStatus();
        return ReadPodTemplate(*tmpl, p.PathOf("template"), pod_set);
      }));
  if (version == Version::kV1beta1) {
    KQ_RETURN_IF_ERROR(
        s.ReadString("priorityClassName", spec->mutable_priority_class_name()));
    KQ_RETURN_IF_ERROR(s.ReadString("priorityClassSource",
                                    spec->mutable_priority_class_source()));
  } else {
    // v1beta2 names the class by group and kind; kq's source string is
    // v1beta1's "<group>/<lower-case kind>".
    KQ_RETURN_IF_ERROR(
        s.ReadObject("priorityClassRef", [&](ObjectReader& r) -> absl::Status {
          std::string group;
          std::string kind;
          KQ_RETURN_IF_ERROR(r.ReadString("group", &group));
          KQ_RETURN_IF_ERROR(r.ReadString("kind", &kind));
          KQ_RETURN_IF_ERROR(r.ReadRequiredString(
              "name", spec->mutable_priority_class_name()));
          // Kueue's CRD: both required, in one of two pairs.
          if (!(group == "kueue.x-k8s.io" && kind == "WorkloadPriorityClass") &&
              !(group == "scheduling.k8s.io" && kind == "PriorityClass")) {
            return FieldError(
                r.PathOf(group.empty() ? "group" : "kind"),
                absl::StrCat("group \"", group, "\" with kind \"", kind,
                             "\": supported are kueue.x-k8s.io with "
                             "WorkloadPriorityClass and scheduling.k8s.io "
                             "with PriorityClass"));
          }
          spec->set_priority_class_source(
              absl::AsciiStrToLower(absl::StrCat(group, "/", kind)));
          return absl::OkStatus();
        }));
  }
  int32_t priority = 0;
  KQ_RETURN_IF_ERROR(s.ReadInt32("priority", &priority));
  spec->set_priority(priority);
  KQ_ASSIGN_OR_RETURN(std::optional<bool> active, s.Bool("active"));
  if (active.has_value()) spec->set_active(*active);
  KQ_ASSIGN_OR_RETURN(std::optional<int32_t> max_seconds,
                      s.Int32("maximumExecutionTimeSeconds"));
  if (max_seconds.has_value()) {
    spec->set_maximum_execution_time_seconds(*max_seconds);
  }
  return absl::OkStatus();
}

absl::Status ReadWorkloadStatus(ObjectReader& s, v1::WorkloadStatus* status) {
  KQ_RETURN_IF_ERROR(
      s.ReadObject("admission", [&](ObjectReader& a) -> absl::Status {
        v1::Admission* admission = status->mutable_admission();
        KQ_RETURN_IF_ERROR(
            a.ReadString("clusterQueue", admission->mutable_cluster_queue()));
        return a.ReadObjectList(
            "podSetAssignments", [&](ObjectReader& p) -> absl::Status {
              v1::PodSetAssignment* assignment =
                  admission->add_pod_set_assignments();
              KQ_RETURN_IF_ERROR(
                  p.ReadString("name", assignment->mutable_name()));
              KQ_RETURN_IF_ERROR(
                  p.ReadStringMap("flavors", assignment->mutable_flavors()));
              KQ_RETURN_IF_ERROR(p.ReadQuantityMap(
                  "resourceUsage", assignment->mutable_resource_usage()));
              int32_t count = 0;
              KQ_RETURN_IF_ERROR(p.ReadInt32("count", &count));
              assignment->set_count(count);
              return absl::OkStatus();
            });
      }));
  KQ_RETURN_IF_ERROR(
      ReadConditions(s, "conditions", status->mutable_conditions()));
  KQ_RETURN_IF_ERROR(
      s.ReadObjectList("admissionChecks", [&](ObjectReader& c) -> absl::Status {
        v1::AdmissionCheckState* check = status->add_admission_checks();
        KQ_RETURN_IF_ERROR(c.ReadString("name", check->mutable_name()));
        KQ_RETURN_IF_ERROR(c.ReadString("state", check->mutable_state()));
        KQ_RETURN_IF_ERROR(c.ReadString("message", check->mutable_message()));
        KQ_ASSIGN_OR_RETURN(std::optional<google::protobuf::Timestamp> time,
                            c.Timestamp("lastTransitionTime"));
        if (time.has_value()) *check->mutable_last_transition_time() = *time;
        return c.ReadObjectList("podSetUpdates", [&](ObjectReader& u) {
          return ReadPodSetUpdate(u, check->add_pod_set_updates());
        });
      }));
  KQ_RETURN_IF_ERROR(
      s.ReadObjectList("reclaimablePods", [&](ObjectReader& r) -> absl::Status {
        v1::ReclaimablePod* pod = status->add_reclaimable_pods();
        KQ_RETURN_IF_ERROR(r.ReadString("name", pod->mutable_name()));
        int32_t count = 0;
        KQ_RETURN_IF_ERROR(r.ReadInt32("count", &count));
        pod->set_count(count);
        return absl::OkStatus();
      }));
  return s.ReadObject("requeueState", [&](ObjectReader& r) -> absl::Status {
    v1::RequeueState* requeue = status->mutable_requeue_state();
    KQ_ASSIGN_OR_RETURN(std::optional<int32_t> count, r.Int32("count"));
    if (count.has_value()) requeue->set_count(*count);
    KQ_ASSIGN_OR_RETURN(std::optional<google::protobuf::Timestamp> at,
                        r.Timestamp("requeueAt"));
    if (at.has_value()) *requeue->mutable_requeue_at() = *at;
    return absl::OkStatus();
  });
}

absl::Status ReadWorkload(ObjectReader& root, Version version,
                          v1::Workload* wl) {
  KQ_RETURN_IF_ERROR(ReadMetadata(root, wl->mutable_metadata()));
  KQ_RETURN_IF_ERROR(root.ReadObject("spec", [&](ObjectReader& s) {
    return ReadWorkloadSpec(s, version, wl->mutable_spec());
  }));
  return root.ReadLenientObject("status", [&](ObjectReader& s) {
    return ReadWorkloadStatus(s, wl->mutable_status());
  });
}

// An int32 written in a label or annotation value.
absl::StatusOr<int32_t> ParseMetadataInt(
    const google::protobuf::Map<std::string, std::string>& values,
    absl::string_view map_path, absl::string_view key) {
  const std::string& text = values.at(std::string(key));
  int32_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return FieldError(KeyPath(map_path, key),
                      absl::StrCat("must be an integer, got \"", text, "\""));
  }
  return value;
}

// A batch/v1 Job becomes the Workload Kueue's job integration would create
// for it: one pod set "main" sized by parallelism.
absl::Status ReadJob(ObjectReader& root, v1::Workload* wl,
                     std::vector<std::string>* warnings) {
  v1::ObjectMeta job;
  KQ_RETURN_IF_ERROR(ReadMetadata(root, &job));
  const std::string display_name =
      job.name().empty() ? absl::StrCat(job.generate_name(), "*") : job.name();
  const auto queue = job.labels().find(std::string(kQueueNameLabel));
  if (queue == job.labels().end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("Job ", display_name, " has no ", kQueueNameLabel,
                     " label; kq manages only labelled Jobs"));
  }

  v1::ObjectMeta* meta = wl->mutable_metadata();
  if (!job.name().empty()) {
    meta->set_name(absl::StrCat("job-", job.name()));
  } else if (!job.generate_name().empty()) {
    meta->set_generate_name(absl::StrCat("job-", job.generate_name()));
  }
  meta->set_namespace_(job.namespace_());
  *meta->mutable_labels() = job.labels();
  *meta->mutable_annotations() = job.annotations();
  if (job.has_creation_timestamp()) {
    *meta->mutable_creation_timestamp() = job.creation_timestamp();
  }

  v1::WorkloadSpec* spec = wl->mutable_spec();
  spec->set_queue_name(queue->second);
  if (job.labels().count(std::string(kPriorityClassLabel)) > 0) {
    spec->set_priority_class_name(
        job.labels().at(std::string(kPriorityClassLabel)));
    spec->set_priority_class_source(std::string(kWorkloadPriorityClassSource));
  }
  if (job.labels().count(std::string(kMaxExecTimeLabel)) > 0) {
    KQ_ASSIGN_OR_RETURN(
        int32_t seconds,
        ParseMetadataInt(job.labels(), "metadata.labels", kMaxExecTimeLabel));
    spec->set_maximum_execution_time_seconds(seconds);
  }

  v1::PodSet* pod_set = spec->add_pod_sets();
  pod_set->set_name("main");
  if (job.annotations().count(std::string(kMinParallelismAnnotation)) > 0) {
    KQ_ASSIGN_OR_RETURN(
        int32_t min_count,
        ParseMetadataInt(job.annotations(), "metadata.annotations",
                         kMinParallelismAnnotation));
    pod_set->set_min_count(min_count);
  }

  // The rest of a Job (status, backoffLimit, ...) is Kubernetes' business.
  root.Ignore("status");
  const json* spec_json = root.Find("spec");
  if (spec_json == nullptr) return FieldError("spec", "required");
  KQ_ASSIGN_OR_RETURN(ObjectReader job_spec,
                      ObjectReader::Open(*spec_json, "spec", warnings, false));
  KQ_ASSIGN_OR_RETURN(std::optional<int32_t> parallelism,
                      job_spec.Int32("parallelism"));
  KQ_ASSIGN_OR_RETURN(std::optional<int32_t> completions,
                      job_spec.Int32("completions"));
  // Kueue's podsCount: parallelism (defaulted to 1), capped by completions.
  int32_t count = parallelism.value_or(1);
  if (completions.has_value() && *completions < count) count = *completions;
  pod_set->set_count(count);
  KQ_ASSIGN_OR_RETURN(std::optional<bool> suspend, job_spec.Bool("suspend"));
  if (!suspend.value_or(false)) {
    warnings->push_back(absl::StrCat(
        "Job ", display_name,
        " is not suspended: under Kueue it would start before admission; kq "
        "admits it as a workload"));
  }
  const json* tmpl = job_spec.Find("template");
  if (tmpl == nullptr) return FieldError("spec.template", "required");
  return ReadPodTemplate(*tmpl, "spec.template", pod_set);
}

// ---------------------------------------------------------------------------
// Kueue's Configuration.

// Fields of Kueue's Configuration about running inside Kubernetes (the
// manager, webhooks, integrations, ...): accepted and ignored silently.
constexpr absl::string_view kKubernetesConfigurationFields[] = {
    "namespace",
    "manageJobsWithoutQueueName",
    "managedJobsNamespaceSelector",
    "internalCertManagement",
    "clientConnection",
    "integrations",
    "queueVisibility",
    "visibilityServer",
    "objectRetentionPolicies",
    "webhook",
    "leaderElection",
    "metrics",
    "health",
    "pprofBindAddress",
    "controller",
    "tls"};

// Fields that change admission in Kueue but not in kq: accepted with a
// warning saying so.
constexpr std::pair<absl::string_view, absl::string_view>
    kIgnoredAdmissionFields[] = {
        {"waitForPodsReady",
         "kq has no pods to wait for; runners report readiness through "
         "the launcher API instead"},
        {"admissionFairSharing", "admission fair sharing is not supported"},
        {"featureGates", "kq runs with Kueue's default feature gates"},
};

// A metav1.Duration field ("90s", "1m30s"; Go's time.ParseDuration, which
// absl::ParseDuration reads alike), when present.
absl::Status ReadDuration(
    ObjectReader& r, absl::string_view key,
    const std::function<google::protobuf::Duration*()>& mutable_duration) {
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> text, r.String(key));
  if (!text.has_value()) return absl::OkStatus();
  absl::Duration d;
  if (!absl::ParseDuration(*text, &d) || d == absl::InfiniteDuration() ||
      d == -absl::InfiniteDuration()) {
    return FieldError(r.PathOf(key),
                      absl::StrCat("must be a duration such as \"90s\" or "
                                   "\"1m30s\", got \"",
                                   *text, "\""));
  }
  google::protobuf::Duration* out = mutable_duration();
  const int64_t seconds = absl::IDivDuration(d, absl::Seconds(1), &d);
  out->set_seconds(seconds);
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
  return absl::OkStatus();
}

// Kueue's Configuration multiKueue (v1beta1 and v1beta2 spell it alike).
// Defaults are the server's (codec) to fill in, so that presence survives.
absl::Status ReadMultiKueueSettings(ObjectReader& m,
                                    v1::MultiKueueSettings* out) {
  KQ_RETURN_IF_ERROR(ReadDuration(m, "gcInterval",
                                  [&] { return out->mutable_gc_interval(); }));
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> origin, m.String("origin"));
  if (origin.has_value()) out->set_origin(*origin);
  KQ_RETURN_IF_ERROR(ReadDuration(m, "workerLostTimeout", [&] {
    return out->mutable_worker_lost_timeout();
  }));
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> dispatcher,
                      m.String("dispatcherName"));
  if (dispatcher.has_value()) out->set_dispatcher_name(*dispatcher);
  KQ_RETURN_IF_ERROR(m.ReadObject(
      "incrementalDispatcherConfig", [&](ObjectReader& i) -> absl::Status {
        v1::IncrementalDispatcherConfig* incremental =
            out->mutable_incremental_dispatcher_config();
        KQ_ASSIGN_OR_RETURN(std::optional<int32_t> step, i.Int32("stepSize"));
        if (step.has_value()) incremental->set_step_size(*step);
        // A kq extension (Kueue's round is a fixed 5 minutes).
        return ReadDuration(i, "roundTimeout", [&] {
          return incremental->mutable_round_timeout();
        });
      }));
  // A kq extension: None or Lease.
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> fencing, m.String("fencing"));
  if (fencing.has_value()) out->set_fencing(*fencing);
  for (absl::string_view field : {"externalFrameworks", "clusterProfile"}) {
    if (m.Find(field) == nullptr) continue;
    m.Ignore(field);
    m.warnings()->push_back(absl::StrCat(
        m.PathOf(field), ": ignored by kq (",
        field == "clusterProfile"
            ? "kq connects to workers through kq contexts files, not "
              "ClusterProfiles"
            : "kq dispatches Workloads, not the objects of job frameworks",
        ")"));
  }
  return absl::OkStatus();
}

absl::Status ReadConfiguration(ObjectReader& root, Version version,
                               v1::Configuration* config,
                               std::vector<std::string>* warnings) {
  for (absl::string_view field : kKubernetesConfigurationFields) {
    root.Ignore(field);
  }
  for (const auto& [field, why] : kIgnoredAdmissionFields) {
    const json* value = root.Find(field);
    if (value == nullptr) continue;
    // v1beta1's waitForPodsReady is off unless it says enable: true
    // (Kueue's conversion drops it otherwise), so kq ignores nothing.
    if (version == Version::kV1beta1 && field == "waitForPodsReady" &&
        !(value->is_object() && value->value("enable", json()) == true)) {
      continue;
    }
    warnings->push_back(absl::StrCat(field, ": ignored by kq (", why, ")"));
  }
  KQ_RETURN_IF_ERROR(
      root.ReadObject("fairSharing", [&](ObjectReader& f) -> absl::Status {
        bool enabled = true;
        if (version == Version::kV1beta1) {
          KQ_ASSIGN_OR_RETURN(std::optional<bool> enable, f.Bool("enable"));
          enabled = enable.value_or(false);
        }
        google::protobuf::RepeatedPtrField<std::string> strategies;
        KQ_RETURN_IF_ERROR(
            f.ReadStringList("preemptionStrategies", &strategies));
        // v1beta1 defaults an empty list to both strategies (left empty
        // here, which the proto reads as that default); v1beta2 has no
        // default and Kueue's validation requires the list.
        if (version == Version::kV1beta2 && strategies.empty()) {
          return FieldError(
              f.PathOf("preemptionStrategies"),
              "required (v1beta2 has no default; v1beta1's is "
              "[LessThanOrEqualToFinalShare, LessThanInitialShare])");
        }
        if (enabled) {
          *config->mutable_fair_sharing()->mutable_preemption_strategies() =
              std::move(strategies);
        }
        return absl::OkStatus();
      }));
  KQ_RETURN_IF_ERROR(root.ReadObject("multiKueue", [&](ObjectReader& m) {
    return ReadMultiKueueSettings(m, config->mutable_multi_kueue());
  }));
  return root.ReadObject("resources", [&](ObjectReader& r) -> absl::Status {
    v1::ResourcesConfig* resources = config->mutable_resources();
    if (version == Version::kV1beta2) {
      KQ_RETURN_IF_ERROR(r.ReadString(
          "quotaCheckStrategy", resources->mutable_quota_check_strategy()));
    }
    KQ_RETURN_IF_ERROR(
        r.ReadStringList("excludeResourcePrefixes",
                         resources->mutable_exclude_resource_prefixes()));
    if (r.Find("deviceClassMappings") != nullptr) {
      warnings->push_back(
          "resources.deviceClassMappings: ignored by kq (dynamic resource "
          "allocation is not supported)");
    }
    return r.ReadObjectList(
        "transformations", [&](ObjectReader& t) -> absl::Status {
          v1::ResourceTransformation* out = resources->add_transformations();
          KQ_RETURN_IF_ERROR(
              t.ReadRequiredString("input", out->mutable_input()));
          KQ_RETURN_IF_ERROR(t.ReadString("strategy", out->mutable_strategy()));
          KQ_RETURN_IF_ERROR(
              t.ReadString("multiplyBy", out->mutable_multiply_by()));
          return t.ReadQuantityMap("outputs", out->mutable_outputs());
        });
  });
}

// ---------------------------------------------------------------------------
// Dispatch.

constexpr absl::string_view kSupportedKueueKinds[] = {
    "ResourceFlavor",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "WorkloadPriorityClass",
    "AdmissionCheck",
    "ProvisioningRequestConfig",
    "MultiKueueConfig",
    "MultiKueueCluster",
    "Workload"};

// Kueue's other kinds (apis/kueue/v1beta2 and v1alpha1): kq refuses them by
// name, without refusing the rest of a file.
constexpr absl::string_view kUnsupportedKueueKinds[] = {"Topology"};

// Converts one document object into `doc`.
absl::Status ConvertObject(const json& object, Document* doc) {
  KQ_ASSIGN_OR_RETURN(ObjectReader root,
                      ObjectReader::Open(object, "", &doc->warnings));
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> api_version,
                      root.String("apiVersion"));
  if (!api_version.has_value() || api_version->empty()) {
    return FieldError("apiVersion", "required");
  }
  KQ_ASSIGN_OR_RETURN(std::optional<std::string> kind, root.String("kind"));
  if (!kind.has_value() || kind->empty()) return FieldError("kind", "required");

  const size_t slash = api_version->rfind('/');
  const std::string group =
      slash == std::string::npos ? "" : api_version->substr(0, slash);
  const std::string version_name = slash == std::string::npos
                                       ? *api_version
                                       : api_version->substr(slash + 1);

  absl::Status status;
  if (*api_version == "v1" && *kind == "Namespace") {
    status =
        ReadNamespace(root, doc->config_object.emplace().mutable_namespace_());
  } else if (*api_version == "batch/v1" && *kind == "Job") {
    status = ReadJob(root, &doc->workload.emplace(), &doc->warnings);
  } else if (group == kKueueConfigGroup && *kind == "Configuration") {
    Version version;
    if (version_name == "v1beta1") {
      version = Version::kV1beta1;
    } else if (version_name == "v1beta2") {
      version = Version::kV1beta2;
    } else {
      return FieldError(
          "apiVersion",
          absl::StrCat("Configuration is not served in ", *api_version,
                       "; use ", kKueueConfigGroup, "/v1beta1 or ",
                       kKueueConfigGroup, "/v1beta2"));
    }
    status = ReadConfiguration(root, version, &doc->configuration.emplace(),
                               &doc->warnings);
  } else if (group == kKueueGroup) {
    bool supported = false;
    for (absl::string_view k : kSupportedKueueKinds) supported |= (k == *kind);
    if (!supported) {
      // Kueue's real kinds that kq does not handle yet are refused by name
      // while the file's other documents apply; anything else in Kueue's
      // group is a typo, and the whole file is refused.
      bool known = false;
      for (absl::string_view k : kUnsupportedKueueKinds) known |= (k == *kind);
      if (!known) {
        return FieldError(
            "kind", absl::StrCat("unknown kind ", *kind, " in ", kKueueGroup,
                                 "; kq reads ",
                                 absl::StrJoin(kSupportedKueueKinds, ", ")));
      }
      return absl::UnimplementedError(absl::StrCat(
          "kind ", *kind, " (", *api_version, ") is not supported by kq yet"));
    }
    Version version;
    if (version_name == "v1beta1") {
      version = Version::kV1beta1;
    } else if (version_name == "v1beta2") {
      version = Version::kV1beta2;
    } else if (version_name == "v1alpha1" && *kind == "Cohort") {
      version = Version::kV1alpha1;
    } else {
      return FieldError(
          "apiVersion",
          absl::StrCat(*kind, " is not served in ", *api_version, "; use ",
                       kKueueGroup, "/v1beta1 or ", kKueueGroup, "/v1beta2"));
    }
    if (*kind == "Workload") {
      status = ReadWorkload(root, version, &doc->workload.emplace());
    } else {
      v1::ConfigObject& config = doc->config_object.emplace();
      if (*kind == "ResourceFlavor") {
        status = ReadResourceFlavor(root, config.mutable_resource_flavor());
      } else if (*kind == "ClusterQueue") {
        status =
            ReadClusterQueue(root, version, config.mutable_cluster_queue());
      } else if (*kind == "Cohort") {
        status = ReadCohort(root, version, config.mutable_cohort());
      } else if (*kind == "LocalQueue") {
        status = ReadLocalQueue(root, config.mutable_local_queue());
      } else if (*kind == "WorkloadPriorityClass") {
        status = ReadWorkloadPriorityClass(
            root, config.mutable_workload_priority_class());
      } else if (*kind == "ProvisioningRequestConfig") {
        status = ReadProvisioningRequestConfig(
            root, config.mutable_provisioning_request_config());
      } else if (*kind == "MultiKueueConfig") {
        status = ReadMultiKueueConfig(root, version,
                                      config.mutable_multi_kueue_config());
      } else if (*kind == "MultiKueueCluster") {
        status = ReadMultiKueueCluster(root, version,
                                       config.mutable_multi_kueue_cluster());
      } else {
        status =
            ReadAdmissionCheck(root, version, config.mutable_admission_check());
      }
    }
  } else {
    // Well-formed but not kq's: refused by name, while the file's other
    // documents still apply (as kubectl skips nothing it understands).
    return absl::UnimplementedError(absl::StrCat(
        "kind ", *kind, " (", *api_version,
        ") is not supported by kq: kq reads kueue.x-k8s.io objects, v1 "
        "Namespace and batch/v1 Job"));
  }
  KQ_RETURN_IF_ERROR(status);
  root.WarnUnknown();
  return absl::OkStatus();
}

// Reads a string field without failing, for naming a document whose
// conversion may fail.
std::string PeekString(const json& object, absl::string_view key) {
  if (!object.is_object()) return "";
  const auto it = object.find(std::string(key));
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

Document ConvertDocument(const json& object, int index) {
  Document doc;
  doc.index = index;
  doc.api_version = PeekString(object, "apiVersion");
  doc.kind = PeekString(object, "kind");
  if (object.is_object() && object.contains("metadata")) {
    doc.name = PeekString(object["metadata"], "name");
    doc.namespace_name = PeekString(object["metadata"], "namespace");
  }
  if (!object.is_object()) {
    doc.status = absl::InvalidArgumentError(
        absl::StrCat("document must be an object, got ", JsonTypeName(object)));
    return doc;
  }
  doc.status = ConvertObject(object, &doc);
  if (!doc.status.ok()) {
    doc.config_object.reset();
    doc.workload.reset();
    doc.configuration.reset();
  }
  return doc;
}

}  // namespace

absl::StatusOr<std::vector<Document>> ParseManifests(absl::string_view text) {
  KQ_ASSIGN_OR_RETURN(auto raw_documents, internal::LoadDocuments(text));
  std::vector<Document> documents;
  int index = 0;
  for (absl::StatusOr<json>& raw : raw_documents) {
    ++index;
    if (!raw.ok()) {
      Document doc;
      doc.index = index;
      doc.status = raw.status();
      documents.push_back(std::move(doc));
      continue;
    }
    // A v1 List (what `kq get -o yaml` prints for several objects) stands
    // for its items; they share the List's index.
    if (PeekString(*raw, "apiVersion") == "v1" &&
        PeekString(*raw, "kind") == "List") {
      const auto items = raw->find("items");
      if (items != raw->end() && !items->is_null() && !items->is_array()) {
        Document doc;
        doc.index = index;
        doc.api_version = "v1";
        doc.kind = "List";
        doc.status =
            FieldError("items", "must be a list, got " + JsonTypeName(*items));
        documents.push_back(std::move(doc));
        continue;
      }
      if (items != raw->end() && items->is_array()) {
        for (const json& item : *items) {
          documents.push_back(ConvertDocument(item, index));
        }
      }
      continue;
    }
    documents.push_back(ConvertDocument(*raw, index));
  }
  return documents;
}

}  // namespace kq::manifest
