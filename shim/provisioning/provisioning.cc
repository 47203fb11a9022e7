#include "shim/provisioning/provisioning.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "spdlog/spdlog.h"

#include "manifest/proto_json.h"
#include "manifest/quantity.h"
#include "proto/util/workload.h"
#include "shim/common/object_helpers.h"
#include "shim/jobs/job_workload.h"

namespace kq::shim::provisioning {
using proto_util::IsActive;
using proto_util::IsAdmitted;
using proto_util::IsFinished;
namespace {

// controller.go: 253 (a name's limit) minus "-" and the hash.
constexpr size_t kObjNameHashLength = 5;
constexpr size_t kObjNameMaxPrefixLength = 252 - kObjNameHashLength;
constexpr char kPodTemplatesPrefix[] = "ppt";

std::string StringField(const json& object, absl::string_view key) {
  const json* field = Field(object, key);
  return field != nullptr && field->is_string() ? field->get<std::string>()
                                                : "";
}

// Kueue's getProvisioningRequestNamePrefix.
std::string NamePrefix(absl::string_view workload, absl::string_view check) {
  return LimitObjectName(absl::StrCat(workload, "-", check, "-"));
}

// The digits after the prefix, when the name is exactly prefix + digits.
std::optional<absl::string_view> AttemptDigits(absl::string_view request_name,
                                               absl::string_view workload,
                                               absl::string_view check) {
  const std::string prefix = NamePrefix(workload, check);
  if (!absl::StartsWith(request_name, prefix)) return std::nullopt;
  absl::string_view digits = request_name.substr(prefix.size());
  if (digits.empty()) return std::nullopt;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return digits;
}

bool IsEmptyJson(const json& v) {
  return v.is_null() || ((v.is_object() || v.is_array()) && v.empty());
}

bool QuantitiesEqual(const json& a, const json& b) {
  if (a.is_string() && b.is_string()) {
    absl::StatusOr<manifest::internal::MilliQuantity> qa =
        manifest::internal::ParseQuantity(a.get<std::string>());
    absl::StatusOr<manifest::internal::MilliQuantity> qb =
        manifest::internal::ParseQuantity(b.get<std::string>());
    if (qa.ok() && qb.ok()) return qa->milli == qb->milli;
  }
  if (a.is_number() && b.is_number()) {
    return a.get<double>() == b.get<double>();
  }
  return a == b;
}

// apimachinery's equality.Semantic.DeepEqual on JSON: nil and empty maps
// and lists are equal, and quantities (values under "resources" and
// "overhead") compare by value ("1" == "1000m").
bool SemanticEqual(const json& a, const json& b, bool quantities = false) {
  if (IsEmptyJson(a) && IsEmptyJson(b)) return true;
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      const json* other = Field(b, key);
      const bool q = quantities || key == "resources" || key == "overhead";
      if (other == nullptr) {
        if (!IsEmptyJson(value)) return false;
      } else if (!SemanticEqual(value, *other, q)) {
        return false;
      }
    }
    for (const auto& [key, value] : b.items()) {
      if (Field(a, key) == nullptr && !IsEmptyJson(value)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SemanticEqual(a[i], b[i], quantities)) return false;
    }
    return true;
  }
  if (quantities) return QuantitiesEqual(a, b);
  if (a.is_number() && b.is_number()) {
    return a.get<double>() == b.get<double>();
  }
  return a == b;
}

const json& FieldOrNull(const json& object, absl::string_view key) {
  static const json* const kNull = new json();
  const json* field = Field(object, key);
  return field != nullptr ? *field : *kNull;
}

// Kueue's areContainersEqual: the containers' requests, pairwise.
bool AreContainersEqual(const json& a, const json& b) {
  const size_t na = a.is_array() ? a.size() : 0;
  const size_t nb = b.is_array() ? b.size() : 0;
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i) {
    const json& ra = FieldOrNull(FieldOrNull(a[i], "resources"), "requests");
    const json& rb = FieldOrNull(FieldOrNull(b[i], "resources"), "requests");
    if (!SemanticEqual(ra, rb, /*quantities=*/true)) return false;
  }
  return true;
}

// Kueue's arePodSetsSimilar.
bool ArePodSetsSimilar(const json& a, const json& b) {
  const json& sa = FieldOrNull(a, "spec");
  const json& sb = FieldOrNull(b, "spec");
  if (!AreContainersEqual(FieldOrNull(sa, "containers"),
                          FieldOrNull(sb, "containers")) ||
      !AreContainersEqual(FieldOrNull(sa, "initContainers"),
                          FieldOrNull(sb, "initContainers"))) {
    return false;
  }
  if (!SemanticEqual(FieldOrNull(sa, "resources"), FieldOrNull(sb, "resources"),
                     /*quantities=*/true)) {
    return false;
  }
  for (const char* key :
       {"nodeSelector", "tolerations", "affinity", "resourceClaims"}) {
    if (!SemanticEqual(FieldOrNull(sa, key), FieldOrNull(sb, key))) {
      return false;
    }
  }
  return true;
}

bool ContainerUses(const json& container,
                   const std::set<std::string>& resources) {
  const json* res = Field(container, "resources");
  if (res == nullptr) return false;
  for (const char* list : {"requests", "limits"}) {
    const json* values = Field(*res, list);
    if (values == nullptr || !values->is_object()) continue;
    for (const auto& [name, quantity] : values->items()) {
      if (resources.count(name) > 0) return true;
    }
  }
  return false;
}

// Kueue's UseLimitsAsMissingRequestsInPod on one resources object.
void LimitsAsMissingRequests(json& resources) {
  if (!resources.is_object()) return;
  const json* limits = Field(resources, "limits");
  if (limits == nullptr || !limits->is_object() || limits->empty()) return;
  json requests = resources.value("requests", json::object());
  if (!requests.is_object()) requests = json::object();
  for (const auto& [name, quantity] : limits->items()) {
    if (!requests.contains(name)) requests[name] = quantity;
  }
  resources["requests"] = std::move(requests);
}

void UseLimitsAsMissingRequestsInPod(json& pod_spec) {
  if (!pod_spec.is_object()) return;
  for (const char* list : {"initContainers", "containers"}) {
    auto it = pod_spec.find(list);
    if (it == pod_spec.end() || !it->is_array()) continue;
    for (json& container : *it) {
      auto res = container.find("resources");
      if (res != container.end()) LimitsAsMissingRequests(*res);
    }
  }
  auto pod_resources = pod_spec.find("resources");
  if (pod_resources != pod_spec.end()) LimitsAsMissingRequests(*pod_resources);
}

json OwnerAnnotations(const v1::Workload& wl) {
  return {{kWorkloadNamespaceAnnotation, wl.metadata().namespace_()},
          {kWorkloadNameAnnotation, wl.metadata().name()},
          {kWorkloadUidAnnotation, wl.metadata().uid()}};
}

bool SamePodSetUpdates(
    const google::protobuf::RepeatedPtrField<v1::PodSetUpdate>& a,
    const google::protobuf::RepeatedPtrField<v1::PodSetUpdate>& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

// ---- Names ------------------------------------------------------------------

std::string LimitObjectName(absl::string_view full_name) {
  if (full_name.size() <= kObjNameMaxPrefixLength) {
    return std::string(full_name);
  }
  return absl::StrCat(full_name.substr(0, kObjNameMaxPrefixLength), "-",
                      Sha1Hex(full_name).substr(0, kObjNameHashLength));
}

std::string ProvisioningRequestName(absl::string_view workload,
                                    absl::string_view check, int32_t attempt) {
  return LimitObjectName(absl::StrCat(workload, "-", check, "-", attempt));
}

std::string PodTemplateName(absl::string_view request,
                            absl::string_view pod_set) {
  return LimitObjectName(
      absl::StrCat(kPodTemplatesPrefix, "-", request, "-", pod_set));
}

bool MatchesWorkloadAndCheck(absl::string_view request_name,
                             absl::string_view workload,
                             absl::string_view check) {
  return AttemptDigits(request_name, workload, check).has_value();
}

int32_t GetAttempt(absl::string_view request_name, absl::string_view workload,
                   absl::string_view check) {
  std::optional<absl::string_view> digits =
      AttemptDigits(request_name, workload, check);
  int32_t attempt = 0;
  if (!digits.has_value()) {
    spdlog::error(
        "no attempt suffix in provisioning request requestName={} "
        "workload={} check={}",
        std::string(request_name), std::string(workload), std::string(check));
    return 1;
  }
  if (!absl::SimpleAtoi(*digits, &attempt)) {
    spdlog::error(
        "parsing the attempt number from provisioning request requestName={}",
        std::string(request_name));
    return 1;
  }
  return attempt;
}

// ---- Objects' fields
// ----------------------------------------------------------

std::string NameOf(const json& object) {
  return StringField(FieldOrNull(object, "metadata"), "name");
}

std::string NamespaceOf(const json& object) {
  return StringField(FieldOrNull(object, "metadata"), "namespace");
}

std::string UidOf(const json& object) {
  return StringField(FieldOrNull(object, "metadata"), "uid");
}

std::string AnnotationOf(const json& object, absl::string_view key) {
  return StringField(
      FieldOrNull(FieldOrNull(object, "metadata"), "annotations"), key);
}

std::optional<WorkloadRef> OwnerOf(const json& object) {
  WorkloadRef ref;
  ref.name = AnnotationOf(object, kWorkloadNameAnnotation);
  if (ref.name.empty()) return std::nullopt;
  ref.namespace_name = AnnotationOf(object, kWorkloadNamespaceAnnotation);
  if (ref.namespace_name.empty()) ref.namespace_name = NamespaceOf(object);
  ref.uid = AnnotationOf(object, kWorkloadUidAnnotation);
  return ref;
}

const json* FindCondition(const json& request, absl::string_view type) {
  const json& conditions =
      FieldOrNull(FieldOrNull(request, "status"), "conditions");
  if (!conditions.is_array()) return nullptr;
  for (const json& c : conditions) {
    if (StringField(c, "type") == type) return &c;
  }
  return nullptr;
}

bool IsConditionTrue(const json& request, absl::string_view type) {
  const json* c = FindCondition(request, type);
  return c != nullptr && StringField(*c, "status") == "True";
}

std::string ConditionMessage(const json& request, absl::string_view type) {
  const json* c = FindCondition(request, type);
  return c == nullptr ? "" : StringField(*c, "message");
}

// ---- Workloads
// ------------------------------------------------------------------

// ---- Configuration
// ----------------------------------------------------------------

absl::StatusOr<std::string> ConfigNameOf(const v1::AdmissionCheck& check) {
  if (!check.spec().has_parameters()) {
    return absl::InvalidArgumentError("missing parameters reference");
  }
  const v1::AdmissionCheckParametersReference& ref = check.spec().parameters();
  if (ref.name().empty()) {
    return absl::InvalidArgumentError("empty name: bad parameters reference");
  }
  if (ref.api_group() != kConfigApiGroup) {
    return absl::InvalidArgumentError(
        absl::StrCat("wrong group \"", ref.api_group(), "\", expecting \"",
                     kConfigApiGroup, "\": bad parameters reference"));
  }
  if (ref.kind() != kConfigKind) {
    return absl::InvalidArgumentError(
        absl::StrCat("wrong kind \"", ref.kind(), "\", expecting \"",
                     kConfigKind, "\": bad parameters reference"));
  }
  return ref.name();
}

RetryStrategy RetryStrategyOf(const v1::ProvisioningRequestConfig& config) {
  RetryStrategy out;
  const v1::ProvisioningRequestRetryStrategy& retry =
      config.spec().retry_strategy();
  if (retry.has_backoff_limit_count()) {
    out.backoff_limit_count = retry.backoff_limit_count();
  }
  if (retry.has_backoff_base_seconds()) {
    out.backoff_base_seconds = retry.backoff_base_seconds();
  }
  if (retry.has_backoff_max_seconds()) {
    out.backoff_max_seconds = retry.backoff_max_seconds();
  }
  return out;
}

int32_t RequeueAfterSeconds(int32_t retry_count, int32_t base_seconds,
                            int32_t max_seconds) {
  // wait.Backoff's steps: the base itself first (even above the cap), then
  // doubled and capped.
  const int64_t base = std::max<int32_t>(base_seconds, 0);
  if (retry_count <= 0) return static_cast<int32_t>(base);
  const int64_t cap =
      max_seconds > 0 ? max_seconds : std::numeric_limits<int32_t>::max();
  int64_t wait = base;
  for (int32_t i = 0; i < retry_count && wait < cap; ++i) wait *= 2;
  return static_cast<int32_t>(std::min(wait, cap));
}

// ---- Pod sets
// ------------------------------------------------------------------------

json PodSetTemplate(const v1::PodSet& pod_set) {
  if (std::optional<json> carried =
          manifest::internal::PodSetTemplateJson(pod_set)) {
    return *std::move(carried);
  }
  json container = {{"name", "main"}};
  if (!pod_set.requests().empty()) {
    json requests = json::object();
    for (const auto& [name, quantity] : pod_set.requests()) {
      requests[name] = quantity;
    }
    container["resources"] = {{"requests", std::move(requests)}};
  }
  json spec = {{"containers", json::array({std::move(container)})}};
  if (!pod_set.node_selector().empty()) {
    json selector = json::object();
    for (const auto& [k, v] : pod_set.node_selector()) selector[k] = v;
    spec["nodeSelector"] = std::move(selector);
  }
  if (!pod_set.tolerations().empty()) {
    json tolerations = json::array();
    for (const v1::Toleration& t : pod_set.tolerations()) {
      tolerations.push_back(TolerationToJson(t));
    }
    spec["tolerations"] = std::move(tolerations);
  }
  if (!pod_set.required_node_affinity().empty()) {
    json terms = json::array();
    for (const v1::NodeSelectorTerm& term : pod_set.required_node_affinity()) {
      json expressions = json::array();
      for (const v1::LabelSelectorRequirement& r : term.match_expressions()) {
        json e = {{"key", r.key()}, {"operator", r.operator_()}};
        if (!r.values().empty()) {
          e["values"] = json(
              std::vector<std::string>(r.values().begin(), r.values().end()));
        }
        expressions.push_back(std::move(e));
      }
      terms.push_back({{"matchExpressions", std::move(expressions)}});
    }
    spec["affinity"] = {{"nodeAffinity",
                         {{"requiredDuringSchedulingIgnoredDuringExecution",
                           {{"nodeSelectorTerms", std::move(terms)}}}}}};
  }
  return {{"spec", std::move(spec)}};
}

bool PodUses(const json& pod_spec, const std::set<std::string>& resources) {
  for (const char* list : {"initContainers", "containers"}) {
    const json* containers = Field(pod_spec, list);
    if (containers == nullptr || !containers->is_array()) continue;
    for (const json& container : *containers) {
      if (ContainerUses(container, resources)) return true;
    }
  }
  return false;
}

namespace {

bool PodSetUses(const v1::PodSet& pod_set,
                const std::set<std::string>& resources) {
  return PodUses(FieldOrNull(PodSetTemplate(pod_set), "spec"), resources);
}

const v1::PodSetAssignment* FindAssignment(const v1::Workload& wl,
                                           absl::string_view name) {
  for (const v1::PodSetAssignment& psa :
       wl.status().admission().pod_set_assignments()) {
    if (psa.name() == name) return &psa;
  }
  return nullptr;
}

const v1::PodSet* FindPodSet(const v1::Workload& wl, absl::string_view name) {
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    if (ps.name() == name) return &ps;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<bool> ReqIsNeeded(const v1::Workload& wl,
                                 const v1::ProvisioningRequestConfig& config) {
  const std::set<std::string> managed(config.spec().managed_resources().begin(),
                                      config.spec().managed_resources().end());
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    if (ps.count() <= 0 || (!managed.empty() && !PodSetUses(ps, managed))) {
      continue;
    }
    const v1::PodSetAssignment* psa = FindAssignment(wl, ps.name());
    if (psa == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("inconsistent podSet assignments: missing assignment "
                       "for PodSet \"",
                       ps.name(), "\""));
    }
    if (psa->count() > 0) return true;
  }
  return false;
}

std::vector<std::string> RequiredPodSets(
    const v1::Workload& wl, const std::vector<std::string>& managed) {
  const std::set<std::string> resources(managed.begin(), managed.end());
  std::vector<std::string> users;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    if (ps.count() > 0 && (resources.empty() || PodSetUses(ps, resources))) {
      users.push_back(ps.name());
    }
  }
  return users;
}

bool CanMergePodSets(const v1::PodSet& a, const v1::PodSet& b,
                     absl::string_view policy) {
  if (policy == kIdenticalPodTemplates) {
    return SemanticEqual(PodSetTemplate(a), PodSetTemplate(b));
  }
  if (policy == kIdenticalWorkloadSchedulingRequirements) {
    return ArePodSetsSimilar(PodSetTemplate(a), PodSetTemplate(b));
  }
  return false;
}

absl::StatusOr<std::vector<MergedPodSet>> MergePodSets(
    const v1::Workload& wl, const v1::ProvisioningRequestConfigSpec& spec) {
  const std::vector<std::string> expected = RequiredPodSets(
      wl, std::vector<std::string>(spec.managed_resources().begin(),
                                   spec.managed_resources().end()));
  std::vector<MergedPodSet> merged;
  for (const std::string& name : expected) {
    const v1::PodSet* ps = FindPodSet(wl, name);
    const v1::PodSetAssignment* psa = FindAssignment(wl, name);
    if (ps == nullptr || psa == nullptr) {
      return absl::FailedPreconditionError("inconsistent podSet assignments");
    }
    const int32_t count = psa->count();
    if (count <= 0) {
      spdlog::debug("skipping non-positive PodSet workload={}/{} podSet={}",
                    wl.metadata().namespace_(), wl.metadata().name(), name);
      continue;
    }
    bool done = false;
    if (!spec.pod_set_merge_policy().empty()) {
      for (MergedPodSet& m : merged) {
        if (CanMergePodSets(*m.pod_set, *ps, spec.pod_set_merge_policy())) {
          m.count += count;
          done = true;
          break;
        }
      }
    }
    if (!done) merged.push_back(MergedPodSet{name, ps, psa, count});
  }
  return merged;
}

// ---- The objects the shim creates
// ---------------------------------------------------

absl::StatusOr<json> BuildPodTemplate(const v1::Workload& wl,
                                      absl::string_view name,
                                      absl::string_view request,
                                      const MergedPodSet& pod_set,
                                      const v1::PodSetPlacement* placement) {
  json tmpl = PodSetTemplate(*pod_set.pod_set);
  absl::StatusOr<jobs::PodSetInfo> info = jobs::FromAssignment(
      *pod_set.assignment, pod_set.pod_set->count(), placement);
  if (!info.ok()) return info.status();
  absl::Status merged = jobs::MergeIntoTemplate(tmpl, *info);
  if (!merged.ok()) return merged;
  if (tmpl.contains("spec")) UseLimitsAsMissingRequestsInPod(tmpl["spec"]);
  json annotations = OwnerAnnotations(wl);
  annotations[kRequestAnnotation] = std::string(request);
  return json{{"apiVersion", "v1"},
              {"kind", "PodTemplate"},
              {"metadata",
               {{"name", std::string(name)},
                {"namespace", wl.metadata().namespace_()},
                {"labels", {{kManagedLabel, kManagedLabelValue}}},
                {"annotations", std::move(annotations)}}},
              {"template", std::move(tmpl)}};
}

json BuildProvisioningRequest(const v1::Workload& wl, absl::string_view name,
                              const v1::ProvisioningRequestConfig& config,
                              const std::vector<RequestPodSet>& pod_sets) {
  json parameters = json::object();
  for (const auto& [k, v] : config.spec().parameters()) parameters[k] = v;
  for (const auto& [k, v] : wl.metadata().annotations()) {
    if (absl::StartsWith(k, kProvReqAnnotationPrefix)) {
      parameters[k.substr(sizeof(kProvReqAnnotationPrefix) - 1)] = v;
    }
  }
  json spec = json::object();
  if (!config.spec().provisioning_class_name().empty()) {
    spec["provisioningClassName"] = config.spec().provisioning_class_name();
  }
  if (!parameters.empty()) spec["parameters"] = std::move(parameters);
  json sets = json::array();
  for (const RequestPodSet& ps : pod_sets) {
    sets.push_back(
        {{"podTemplateRef", {{"name", ps.pod_template}}}, {"count", ps.count}});
  }
  spec["podSets"] = std::move(sets);
  return json{{"apiVersion", "autoscaling.x-k8s.io/v1"},
              {"kind", "ProvisioningRequest"},
              {"metadata",
               {{"name", std::string(name)},
                {"namespace", wl.metadata().namespace_()},
                {"labels", {{kManagedLabel, kManagedLabelValue}}},
                {"annotations", OwnerAnnotations(wl)}}},
              {"spec", std::move(spec)}};
}

bool ProvReqSyncedWithConfig(const json& request,
                             const v1::ProvisioningRequestConfig& config) {
  const json& spec = FieldOrNull(request, "spec");
  if (StringField(spec, "provisioningClassName") !=
      config.spec().provisioning_class_name()) {
    return false;
  }
  const json& parameters = FieldOrNull(spec, "parameters");
  for (const auto& [k, v] : config.spec().parameters()) {
    if (StringField(parameters, k) != v || Field(parameters, k) == nullptr) {
      return false;
    }
  }
  return true;
}

bool IsRetryRecord(const json& request) {
  return AnnotationOf(request, kRetryReportedAnnotation) == "true";
}

const json* ActiveOrLastRequest(const std::vector<json>& requests,
                                absl::string_view workload,
                                absl::string_view check,
                                const v1::ProvisioningRequestConfig& config) {
  const json* last = nullptr;
  for (const json& r : requests) {
    if (IsRetryRecord(r) ||
        !MatchesWorkloadAndCheck(NameOf(r), workload, check) ||
        !ProvReqSyncedWithConfig(r, config)) {
      continue;
    }
    if (last == nullptr || GetAttempt(NameOf(*last), workload, check) <
                               GetAttempt(NameOf(r), workload, check)) {
      last = &r;
    }
  }
  return last;
}

std::vector<v1::PodSetUpdate> PodSetUpdates(
    const v1::Workload& wl, const json& request,
    const v1::ProvisioningRequestConfig& config) {
  const std::string request_name = NameOf(request);
  std::map<std::string, std::string> ref_map;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    ref_map[PodTemplateName(request_name, ps.name())] = ps.name();
  }
  const json& spec = FieldOrNull(request, "spec");
  const std::string class_name = StringField(spec, "provisioningClassName");
  const json& details =
      FieldOrNull(FieldOrNull(request, "status"), "provisioningClassDetails");
  std::vector<v1::PodSetUpdate> updates;
  const json& pod_sets = FieldOrNull(spec, "podSets");
  if (!pod_sets.is_array()) return updates;
  for (const json& ps : pod_sets) {
    v1::PodSetUpdate update;
    const std::string ref =
        StringField(FieldOrNull(ps, "podTemplateRef"), "name");
    auto it = ref_map.find(ref);
    if (it != ref_map.end()) update.set_name(it->second);
    (*update.mutable_annotations())[kConsumeProvisioningRequestAnnotation] =
        request_name;
    (*update.mutable_annotations())[kProvisioningClassAnnotation] = class_name;
    for (const v1::ProvisioningRequestPodSetUpdatesNodeSelector& selector :
         config.spec().pod_set_updates_node_selector()) {
      const json* value =
          Field(details, selector.value_from_provisioning_class_detail());
      if (value == nullptr || !value->is_string()) {
        spdlog::info(
            "skipping detail not found in the ProvisioningClassDetails "
            "detail={} request={}",
            selector.value_from_provisioning_class_detail(), request_name);
        continue;
      }
      (*update.mutable_node_selector())[selector.key()] =
          value->get<std::string>();
    }
    updates.push_back(std::move(update));
  }
  return updates;
}

// ---- Check state
// --------------------------------------------------------------------

bool UpdateCheckMessage(v1::AdmissionCheckState& state,
                        absl::string_view message) {
  if (state.message() == message) return false;
  state.set_message(std::string(message));
  return true;
}

bool UpdateCheckState(v1::AdmissionCheckState& state, absl::string_view value) {
  if (state.state() == value) return false;
  state.set_state(std::string(value));
  return true;
}

CheckUpdate SyncCheckState(const v1::Workload& wl,
                           const v1::AdmissionCheckState& current,
                           const v1::ProvisioningRequestConfig* config,
                           bool request_needed, const json* request,
                           int32_t retry_count) {
  CheckUpdate out;
  out.state = current;
  v1::AdmissionCheckState& check = out.state;
  bool& updated = out.updated;
  if (config == nullptr) {
    updated = UpdateCheckState(check, "Pending") || updated;
    updated = UpdateCheckMessage(check, kCheckInactiveMessage) || updated;
    return out;
  }
  if (!request_needed) {
    if (UpdateCheckState(check, "Ready")) {
      updated = true;
      check.set_message(kNoRequestNeeded);
      check.clear_pod_set_updates();
    }
    return out;
  }
  if (request == nullptr) return out;
  const RetryStrategy retry = RetryStrategyOf(*config);
  const std::string& wl_name = wl.metadata().name();
  const int32_t attempt = GetAttempt(NameOf(*request), wl_name, current.name());
  // Kueue's Failed and BookingExpired branches differ only in their words.
  auto retry_or_reject = [&](absl::string_view condition,
                             absl::string_view retrying) {
    const std::string message = ConditionMessage(*request, condition);
    if (attempt <= retry.backoff_limit_count) {
      updated =
          UpdateCheckMessage(check, absl::StrCat(retrying, message)) || updated;
      // Not again for an old request.
      if (attempt > retry_count) {
        updated = true;
        UpdateCheckState(check, "Retry");
        out.requeue_after_seconds = RequeueAfterSeconds(
            retry_count, retry.backoff_base_seconds, retry.backoff_max_seconds);
      }
    } else {
      updated = true;
      check.set_state("Rejected");
      check.set_message(message);
    }
  };
  if (IsConditionTrue(*request, kConditionFailed)) {
    retry_or_reject(kConditionFailed, "Retrying after failure: ");
  } else if (IsConditionTrue(*request, kConditionCapacityRevoked)) {
    if (IsActive(wl) && !IsFinished(wl)) {
      // Rejected deactivates the workload: replacement pods would wait
      // forever for nodes the autoscaler already removed.
      updated = UpdateCheckState(check, "Rejected") || updated;
      updated =
          UpdateCheckMessage(
              check, ConditionMessage(*request, kConditionCapacityRevoked)) ||
          updated;
    }
  } else if (IsConditionTrue(*request, kConditionBookingExpired)) {
    if (!IsAdmitted(wl)) {
      retry_or_reject(kConditionBookingExpired,
                      "Retrying after booking expired: ");
    }
  } else if (IsConditionTrue(*request, kConditionProvisioned)) {
    if (UpdateCheckState(check, "Ready")) {
      updated = true;
      check.clear_pod_set_updates();
      for (v1::PodSetUpdate& update : PodSetUpdates(wl, *request, *config)) {
        *check.add_pod_set_updates() = std::move(update);
      }
      UpdateCheckMessage(check,
                         ConditionMessage(*request, kConditionProvisioned));
    }
  } else if (IsConditionTrue(*request, kConditionAccepted)) {
    if (FindCondition(*request, kConditionProvisioned) != nullptr) {
      // The autoscaler's ETA.
      updated = UpdateCheckMessage(
                    check, ConditionMessage(*request, kConditionProvisioned)) ||
                updated;
      updated = UpdateCheckState(check, "Pending") || updated;
    }
  } else {
    // Nothing to report until the autoscaler sets a condition; a message
    // left by an earlier state no longer holds.
    updated = UpdateCheckMessage(check, "") || updated;
    updated = UpdateCheckState(check, "Pending") || updated;
  }
  // A write that changes nothing is Kueue's no-op patch.
  if (updated && check.state() == current.state() &&
      check.message() == current.message() &&
      SamePodSetUpdates(check.pod_set_updates(), current.pod_set_updates()) &&
      !out.requeue_after_seconds.has_value()) {
    updated = false;
  }
  return out;
}

}  // namespace kq::shim::provisioning
