#include "server/codec/codec.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/stubs/strutil.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"
#include "server/core/shape_key.h"

namespace kq::codec {
namespace {

// ---------------------------------------------------------------------------
// Scalars: quantities, enums, timestamps, string maps.

// Whether a resource is counted in bytes, so that its quantities print with
// binary suffixes ("256Gi") rather than decimal ones ("274877906944").
bool IsByteResource(absl::string_view resource) {
  return resource == "memory" || resource == "ephemeral-storage" ||
         resource == "storage" || absl::EndsWith(resource, "memory") ||
         absl::EndsWith(resource, "storage");
}

std::string QuantityText(absl::string_view resource, Quantity q) {
  return q.ToString(IsByteResource(resource));
}

// Parses a quantity, prefixing any error with the field path so the user
// sees which of their numbers is wrong.
absl::StatusOr<Quantity> ParseQuantity(absl::string_view path,
                                       absl::string_view text) {
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", q.status().message()));
  }
  return *q;
}

absl::Status UnsupportedValue(absl::string_view path, absl::string_view value,
                              absl::string_view allowed) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unsupported value \"", value, "\": must be ", allowed));
}

absl::StatusOr<QueueingStrategy> ParseQueueingStrategy(absl::string_view path,
                                                       absl::string_view text) {
  if (text.empty() || text == "BestEffortFIFO") {
    return QueueingStrategy::kBestEffortFIFO;
  }
  if (text == "StrictFIFO") return QueueingStrategy::kStrictFIFO;
  return UnsupportedValue(path, text, "BestEffortFIFO or StrictFIFO");
}

const char* QueueingStrategyName(QueueingStrategy strategy) {
  switch (strategy) {
    case QueueingStrategy::kBestEffortFIFO:
      return "BestEffortFIFO";
    case QueueingStrategy::kStrictFIFO:
      return "StrictFIFO";
  }
  return "BestEffortFIFO";
}

absl::StatusOr<StopPolicy> ParseStopPolicy(absl::string_view path,
                                           absl::string_view text) {
  if (text.empty() || text == "None") return StopPolicy::kNone;
  if (text == "Hold") return StopPolicy::kHold;
  if (text == "HoldAndDrain") return StopPolicy::kHoldAndDrain;
  return UnsupportedValue(path, text, "None, Hold or HoldAndDrain");
}

const char* StopPolicyName(StopPolicy policy) {
  switch (policy) {
    case StopPolicy::kNone:
      return "None";
    case StopPolicy::kHold:
      return "Hold";
    case StopPolicy::kHoldAndDrain:
      return "HoldAndDrain";
  }
  return "None";
}

// Parses a fungibility policy; an empty string means `default_policy`,
// which differs between whenCanBorrow and whenCanPreempt.
absl::StatusOr<FungibilityPolicy> ParseFungibilityPolicy(
    absl::string_view path, absl::string_view text,
    FungibilityPolicy default_policy) {
  if (text.empty()) return default_policy;
  if (text == "MayStopSearch") return FungibilityPolicy::kMayStopSearch;
  if (text == "TryNextFlavor") return FungibilityPolicy::kTryNextFlavor;
  return UnsupportedValue(path, text, "MayStopSearch or TryNextFlavor");
}

const char* FungibilityPolicyName(FungibilityPolicy policy) {
  switch (policy) {
    case FungibilityPolicy::kMayStopSearch:
      return "MayStopSearch";
    case FungibilityPolicy::kTryNextFlavor:
      return "TryNextFlavor";
  }
  return "MayStopSearch";
}

// Kueue's string-valued policies that core keeps as strings: an empty proto
// string means the Kueue default.
std::string OrDefault(const std::string& text, const char* default_value) {
  return text.empty() ? std::string(default_value) : text;
}

// Labels, or any other string map (a std::map for PodSetAssignment.flavors).
template <typename M = Labels>
M MapFromProto(const google::protobuf::Map<std::string, std::string>& m) {
  return M(m.begin(), m.end());
}

// `m`: Labels or a std::map of strings.
template <typename M>
void MapToProto(const M& m,
                google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [key, value] : m) (*out)[key] = value;
}

// ---------------------------------------------------------------------------
// Shared messages.

ObjectMeta MetaFromProto(const v1::ObjectMeta& proto) {
  ObjectMeta meta;
  meta.name = proto.name();
  meta.namespace_name = proto.namespace_();
  meta.uid = proto.uid();
  meta.revision = proto.revision();
  if (proto.has_creation_timestamp()) {
    meta.creation_timestamp = FromProto(proto.creation_timestamp());
  }
  meta.labels = MapFromProto(proto.labels());
  meta.annotations = MapFromProto(proto.annotations());
  meta.generate_name = proto.generate_name();
  return meta;
}

void MetaToProto(const ObjectMeta& meta, v1::ObjectMeta* proto) {
  proto->set_name(meta.name);
  proto->set_namespace_(meta.namespace_name);
  proto->set_uid(meta.uid.str());
  proto->set_revision(meta.revision);
  // Core's "unset" time is the Unix epoch; it stays absent in the proto so
  // that absent and unset read the same both ways. The same holds for every
  // other timestamp below.
  if (meta.creation_timestamp != absl::UnixEpoch()) {
    *proto->mutable_creation_timestamp() = ToProto(meta.creation_timestamp);
  }
  MapToProto(meta.labels, proto->mutable_labels());
  MapToProto(meta.annotations, proto->mutable_annotations());
  proto->set_generate_name(meta.generate_name.str());
}

Condition ConditionFromProto(const v1::Condition& proto) {
  Condition c;
  c.type = proto.type();
  c.status = proto.status();
  c.reason = proto.reason();
  c.message = proto.message();
  if (proto.has_last_transition_time()) {
    c.last_transition_time = FromProto(proto.last_transition_time());
  }
  return c;
}

void ConditionToProto(const Condition& c, v1::Condition* proto) {
  proto->set_type(c.type);
  proto->set_status(c.status);
  proto->set_reason(c.reason);
  proto->set_message(c.message);
  if (c.last_transition_time != absl::UnixEpoch()) {
    *proto->mutable_last_transition_time() = ToProto(c.last_transition_time);
  }
}

Taint TaintFromProto(const v1::Taint& proto) {
  return Taint{
      .key = proto.key(), .value = proto.value(), .effect = proto.effect()};
}

void TaintToProto(const Taint& taint, v1::Taint* proto) {
  proto->set_key(taint.key);
  proto->set_value(taint.value);
  proto->set_effect(taint.effect);
}

Toleration TolerationFromProto(const v1::Toleration& proto) {
  Toleration t;
  t.key = proto.key();
  t.op = proto.operator_();
  t.value = proto.value();
  t.effect = proto.effect();
  if (proto.has_toleration_seconds()) {
    t.toleration_seconds = proto.toleration_seconds();
  }
  return t;
}

void TolerationToProto(const Toleration& t, v1::Toleration* proto) {
  proto->set_key(t.key);
  proto->set_operator_(t.op);
  proto->set_value(t.value);
  proto->set_effect(t.effect);
  if (t.toleration_seconds.has_value()) {
    proto->set_toleration_seconds(*t.toleration_seconds);
  }
}

LabelSelectorRequirement RequirementFromProto(
    const v1::LabelSelectorRequirement& proto) {
  LabelSelectorRequirement r;
  r.key = proto.key();
  r.op = proto.operator_();
  r.values.assign(proto.values().begin(), proto.values().end());
  return r;
}

void RequirementToProto(const LabelSelectorRequirement& r,
                        v1::LabelSelectorRequirement* proto) {
  proto->set_key(r.key);
  proto->set_operator_(r.op);
  for (const std::string& v : r.values) proto->add_values(v);
}

LabelSelector SelectorFromProto(const v1::LabelSelector& proto) {
  LabelSelector s;
  s.match_labels = MapFromProto(proto.match_labels());
  for (const auto& r : proto.match_expressions()) {
    s.match_expressions.push_back(RequirementFromProto(r));
  }
  return s;
}

void SelectorToProto(const LabelSelector& s, v1::LabelSelector* proto) {
  MapToProto(s.match_labels, proto->mutable_match_labels());
  for (const LabelSelectorRequirement& r : s.match_expressions) {
    RequirementToProto(r, proto->add_match_expressions());
  }
}

absl::StatusOr<std::vector<ResourceGroup>> ResourceGroupsFromProto(
    const google::protobuf::RepeatedPtrField<v1::ResourceGroup>& groups) {
  std::vector<ResourceGroup> out;
  out.reserve(groups.size());
  for (int g = 0; g < groups.size(); ++g) {
    const v1::ResourceGroup& group_proto = groups[g];
    ResourceGroup group;
    group.covered_resources.assign(group_proto.covered_resources().begin(),
                                   group_proto.covered_resources().end());
    for (int f = 0; f < group_proto.flavors_size(); ++f) {
      const v1::FlavorQuotas& flavor_proto = group_proto.flavors(f);
      FlavorQuotas flavor;
      flavor.name = flavor_proto.name();
      for (int r = 0; r < flavor_proto.resources_size(); ++r) {
        const v1::ResourceQuota& quota_proto = flavor_proto.resources(r);
        const std::string path =
            absl::StrCat("spec.resourceGroups[", g, "].flavors[", f,
                         "].resources[", r, "].");
        ResourceQuota quota;
        quota.name = quota_proto.name();
        KQ_ASSIGN_OR_RETURN(quota.nominal_quota,
                            ParseQuantity(absl::StrCat(path, "nominalQuota"),
                                          quota_proto.nominal_quota()));
        if (quota_proto.has_borrowing_limit()) {
          KQ_ASSIGN_OR_RETURN(
              quota.borrowing_limit,
              ParseQuantity(absl::StrCat(path, "borrowingLimit"),
                            quota_proto.borrowing_limit()));
        }
        if (quota_proto.has_lending_limit()) {
          KQ_ASSIGN_OR_RETURN(quota.lending_limit,
                              ParseQuantity(absl::StrCat(path, "lendingLimit"),
                                            quota_proto.lending_limit()));
        }
        flavor.resources.push_back(std::move(quota));
      }
      group.flavors.push_back(std::move(flavor));
    }
    out.push_back(std::move(group));
  }
  return out;
}

void ResourceGroupsToProto(
    const std::vector<ResourceGroup>& groups,
    google::protobuf::RepeatedPtrField<v1::ResourceGroup>* out) {
  for (const ResourceGroup& group : groups) {
    v1::ResourceGroup* group_proto = out->Add();
    for (const std::string& r : group.covered_resources) {
      group_proto->add_covered_resources(r);
    }
    for (const FlavorQuotas& flavor : group.flavors) {
      v1::FlavorQuotas* flavor_proto = group_proto->add_flavors();
      flavor_proto->set_name(flavor.name);
      for (const ResourceQuota& quota : flavor.resources) {
        v1::ResourceQuota* quota_proto = flavor_proto->add_resources();
        quota_proto->set_name(quota.name);
        quota_proto->set_nominal_quota(
            QuantityText(quota.name, quota.nominal_quota));
        if (quota.borrowing_limit.has_value()) {
          quota_proto->set_borrowing_limit(
              QuantityText(quota.name, *quota.borrowing_limit));
        }
        if (quota.lending_limit.has_value()) {
          quota_proto->set_lending_limit(
              QuantityText(quota.name, *quota.lending_limit));
        }
      }
    }
  }
}

absl::StatusOr<std::optional<Quantity>> FairSharingFromProto(
    const v1::FairSharing& proto) {
  if (!proto.has_weight()) return std::nullopt;
  KQ_ASSIGN_OR_RETURN(Quantity weight,
                      ParseQuantity("spec.fairSharing.weight", proto.weight()));
  return weight;
}

void FairSharingToProto(const std::optional<Quantity>& weight,
                        v1::FairSharing* proto) {
  if (weight.has_value()) proto->set_weight(weight->ToString());
}

// ---------------------------------------------------------------------------
// Configuration objects.

ResourceFlavor ResourceFlavorFromProto(const v1::ResourceFlavor& proto) {
  ResourceFlavor rf;
  rf.meta = MetaFromProto(proto.metadata());
  rf.node_labels = MapFromProto(proto.spec().node_labels());
  for (const auto& t : proto.spec().node_taints()) {
    rf.node_taints.push_back(TaintFromProto(t));
  }
  for (const auto& t : proto.spec().tolerations()) {
    rf.tolerations.push_back(TolerationFromProto(t));
  }
  rf.topology_name = proto.spec().topology_name();
  return rf;
}

void ResourceFlavorToProto(const ResourceFlavor& rf,
                           v1::ResourceFlavor* proto) {
  MetaToProto(rf.meta, proto->mutable_metadata());
  v1::ResourceFlavorSpec* spec = proto->mutable_spec();
  MapToProto(rf.node_labels, spec->mutable_node_labels());
  for (const Taint& t : rf.node_taints) {
    TaintToProto(t, spec->add_node_taints());
  }
  for (const Toleration& t : rf.tolerations) {
    TolerationToProto(t, spec->add_tolerations());
  }
  spec->set_topology_name(rf.topology_name);
}

absl::StatusOr<ClusterQueue> ClusterQueueFromProto(
    const v1::ClusterQueue& proto) {
  const v1::ClusterQueueSpec& spec = proto.spec();
  ClusterQueue cq;
  cq.meta = MetaFromProto(proto.metadata());
  KQ_ASSIGN_OR_RETURN(cq.resource_groups,
                      ResourceGroupsFromProto(spec.resource_groups()));
  cq.cohort_name = spec.cohort_name();
  KQ_ASSIGN_OR_RETURN(
      cq.queueing_strategy,
      ParseQueueingStrategy("spec.queueingStrategy", spec.queueing_strategy()));
  if (spec.has_namespace_selector()) {
    cq.namespace_selector = SelectorFromProto(spec.namespace_selector());
  }
  const FlavorFungibility defaults;
  KQ_ASSIGN_OR_RETURN(
      cq.flavor_fungibility.when_can_borrow,
      ParseFungibilityPolicy("spec.flavorFungibility.whenCanBorrow",
                             spec.flavor_fungibility().when_can_borrow(),
                             defaults.when_can_borrow));
  KQ_ASSIGN_OR_RETURN(
      cq.flavor_fungibility.when_can_preempt,
      ParseFungibilityPolicy("spec.flavorFungibility.whenCanPreempt",
                             spec.flavor_fungibility().when_can_preempt(),
                             defaults.when_can_preempt));
  cq.flavor_fungibility.preference = spec.flavor_fungibility().preference();
  const v1::ClusterQueuePreemption& preemption = spec.preemption();
  cq.preemption.reclaim_within_cohort =
      OrDefault(preemption.reclaim_within_cohort(), kPolicyNever);
  cq.preemption.borrow_within_cohort_policy =
      OrDefault(preemption.borrow_within_cohort().policy(), kPolicyNever);
  if (preemption.borrow_within_cohort().has_max_priority_threshold()) {
    cq.preemption.borrow_within_cohort_max_priority_threshold =
        preemption.borrow_within_cohort().max_priority_threshold();
  }
  cq.preemption.within_cluster_queue =
      OrDefault(preemption.within_cluster_queue(), kPolicyNever);
  for (const auto& rule : spec.admission_checks()) {
    cq.admission_checks.push_back(AdmissionCheckStrategyRule{
        .name = rule.name(),
        .on_flavors = {rule.on_flavors().begin(), rule.on_flavors().end()}});
  }
  KQ_ASSIGN_OR_RETURN(cq.stop_policy,
                      ParseStopPolicy("spec.stopPolicy", spec.stop_policy()));
  KQ_ASSIGN_OR_RETURN(cq.fair_sharing_weight,
                      FairSharingFromProto(spec.fair_sharing()));
  return cq;
}

void ClusterQueueToProto(const ClusterQueue& cq, v1::ClusterQueue* proto) {
  MetaToProto(cq.meta, proto->mutable_metadata());
  v1::ClusterQueueSpec* spec = proto->mutable_spec();
  ResourceGroupsToProto(cq.resource_groups, spec->mutable_resource_groups());
  spec->set_cohort_name(cq.cohort_name);
  spec->set_queueing_strategy(QueueingStrategyName(cq.queueing_strategy));
  if (cq.namespace_selector.has_value()) {
    SelectorToProto(*cq.namespace_selector, spec->mutable_namespace_selector());
  }
  v1::FlavorFungibility* fungibility = spec->mutable_flavor_fungibility();
  fungibility->set_when_can_borrow(
      FungibilityPolicyName(cq.flavor_fungibility.when_can_borrow));
  fungibility->set_when_can_preempt(
      FungibilityPolicyName(cq.flavor_fungibility.when_can_preempt));
  fungibility->set_preference(cq.flavor_fungibility.preference);
  v1::ClusterQueuePreemption* preemption = spec->mutable_preemption();
  preemption->set_reclaim_within_cohort(cq.preemption.reclaim_within_cohort);
  preemption->mutable_borrow_within_cohort()->set_policy(
      cq.preemption.borrow_within_cohort_policy);
  if (cq.preemption.borrow_within_cohort_max_priority_threshold.has_value()) {
    preemption->mutable_borrow_within_cohort()->set_max_priority_threshold(
        *cq.preemption.borrow_within_cohort_max_priority_threshold);
  }
  preemption->set_within_cluster_queue(cq.preemption.within_cluster_queue);
  for (const AdmissionCheckStrategyRule& rule : cq.admission_checks) {
    v1::AdmissionCheckStrategyRule* rule_proto = spec->add_admission_checks();
    rule_proto->set_name(rule.name);
    for (const std::string& f : rule.on_flavors) rule_proto->add_on_flavors(f);
  }
  spec->set_stop_policy(StopPolicyName(cq.stop_policy));
  FairSharingToProto(cq.fair_sharing_weight, spec->mutable_fair_sharing());
}

absl::StatusOr<Cohort> CohortFromProto(const v1::Cohort& proto) {
  Cohort cohort;
  cohort.meta = MetaFromProto(proto.metadata());
  cohort.parent_name = proto.spec().parent_name();
  KQ_ASSIGN_OR_RETURN(cohort.resource_groups,
                      ResourceGroupsFromProto(proto.spec().resource_groups()));
  KQ_ASSIGN_OR_RETURN(cohort.fair_sharing_weight,
                      FairSharingFromProto(proto.spec().fair_sharing()));
  return cohort;
}

void CohortToProto(const Cohort& cohort, v1::Cohort* proto) {
  MetaToProto(cohort.meta, proto->mutable_metadata());
  v1::CohortSpec* spec = proto->mutable_spec();
  spec->set_parent_name(cohort.parent_name);
  ResourceGroupsToProto(cohort.resource_groups,
                        spec->mutable_resource_groups());
  FairSharingToProto(cohort.fair_sharing_weight, spec->mutable_fair_sharing());
}

absl::StatusOr<LocalQueue> LocalQueueFromProto(const v1::LocalQueue& proto) {
  LocalQueue lq;
  lq.meta = MetaFromProto(proto.metadata());
  lq.cluster_queue = proto.spec().cluster_queue();
  KQ_ASSIGN_OR_RETURN(
      lq.stop_policy,
      ParseStopPolicy("spec.stopPolicy", proto.spec().stop_policy()));
  KQ_ASSIGN_OR_RETURN(lq.fair_sharing_weight,
                      FairSharingFromProto(proto.spec().fair_sharing()));
  return lq;
}

void LocalQueueToProto(const LocalQueue& lq, v1::LocalQueue* proto) {
  MetaToProto(lq.meta, proto->mutable_metadata());
  v1::LocalQueueSpec* spec = proto->mutable_spec();
  spec->set_cluster_queue(lq.cluster_queue);
  spec->set_stop_policy(StopPolicyName(lq.stop_policy));
  FairSharingToProto(lq.fair_sharing_weight, spec->mutable_fair_sharing());
}

WorkloadPriorityClass PriorityClassFromProto(
    const v1::WorkloadPriorityClass& proto) {
  WorkloadPriorityClass wpc;
  wpc.meta = MetaFromProto(proto.metadata());
  wpc.value = proto.value();
  wpc.description = proto.description();
  return wpc;
}

void PriorityClassToProto(const WorkloadPriorityClass& wpc,
                          v1::WorkloadPriorityClass* proto) {
  MetaToProto(wpc.meta, proto->mutable_metadata());
  proto->set_value(wpc.value);
  proto->set_description(wpc.description);
}

AdmissionCheck AdmissionCheckFromProto(const v1::AdmissionCheck& proto) {
  AdmissionCheck ac;
  ac.meta = MetaFromProto(proto.metadata());
  ac.controller_name = proto.spec().controller_name();
  ac.parameters_api_group = proto.spec().parameters().api_group();
  ac.parameters_kind = proto.spec().parameters().kind();
  ac.parameters_name = proto.spec().parameters().name();
  return ac;
}

void AdmissionCheckToProto(const AdmissionCheck& ac,
                           v1::AdmissionCheck* proto) {
  MetaToProto(ac.meta, proto->mutable_metadata());
  v1::AdmissionCheckSpec* spec = proto->mutable_spec();
  spec->set_controller_name(ac.controller_name);
  // An empty reference stays absent, as in Kueue where parameters is a
  // pointer.
  if (!ac.parameters_api_group.empty() || !ac.parameters_kind.empty() ||
      !ac.parameters_name.empty()) {
    spec->mutable_parameters()->set_api_group(ac.parameters_api_group);
    spec->mutable_parameters()->set_kind(ac.parameters_kind);
    spec->mutable_parameters()->set_name(ac.parameters_name);
  }
}

// Kueue's CRD defaults apply here, as its API server applies them: an
// absent retryStrategy, or an absent field of it, reads as the default.
ProvisioningRequestConfig ProvisioningRequestConfigFromProto(
    const v1::ProvisioningRequestConfig& proto) {
  const v1::ProvisioningRequestConfigSpec& spec = proto.spec();
  ProvisioningRequestConfig prc;
  prc.meta = MetaFromProto(proto.metadata());
  prc.provisioning_class_name = spec.provisioning_class_name();
  prc.parameters = MapFromProto(spec.parameters());
  prc.managed_resources = {spec.managed_resources().begin(),
                           spec.managed_resources().end()};
  const v1::ProvisioningRequestRetryStrategy& retry = spec.retry_strategy();
  if (retry.has_backoff_limit_count()) {
    prc.retry_strategy.backoff_limit_count = retry.backoff_limit_count();
  }
  if (retry.has_backoff_base_seconds()) {
    prc.retry_strategy.backoff_base_seconds = retry.backoff_base_seconds();
  }
  if (retry.has_backoff_max_seconds()) {
    prc.retry_strategy.backoff_max_seconds = retry.backoff_max_seconds();
  }
  for (const auto& selector : spec.pod_set_updates_node_selector()) {
    prc.pod_set_updates_node_selector.push_back(
        {selector.key(), selector.value_from_provisioning_class_detail()});
  }
  prc.pod_set_merge_policy = spec.pod_set_merge_policy();
  return prc;
}

void ProvisioningRequestConfigToProto(const ProvisioningRequestConfig& prc,
                                      v1::ProvisioningRequestConfig* proto) {
  MetaToProto(prc.meta, proto->mutable_metadata());
  v1::ProvisioningRequestConfigSpec* spec = proto->mutable_spec();
  spec->set_provisioning_class_name(prc.provisioning_class_name);
  MapToProto(prc.parameters, spec->mutable_parameters());
  for (const std::string& resource : prc.managed_resources) {
    spec->add_managed_resources(resource);
  }
  v1::ProvisioningRequestRetryStrategy* retry = spec->mutable_retry_strategy();
  retry->set_backoff_limit_count(prc.retry_strategy.backoff_limit_count);
  retry->set_backoff_base_seconds(prc.retry_strategy.backoff_base_seconds);
  retry->set_backoff_max_seconds(prc.retry_strategy.backoff_max_seconds);
  for (const ProvisioningRequestPodSetUpdatesNodeSelector& selector :
       prc.pod_set_updates_node_selector) {
    v1::ProvisioningRequestPodSetUpdatesNodeSelector* out =
        spec->add_pod_set_updates_node_selector();
    out->set_key(selector.key);
    out->set_value_from_provisioning_class_detail(
        selector.value_from_provisioning_class_detail);
  }
  spec->set_pod_set_merge_policy(prc.pod_set_merge_policy);
}

// ---------------------------------------------------------------------------
// Workloads.

PodSetUpdate PodSetUpdateFromProto(const v1::PodSetUpdate& proto) {
  PodSetUpdate update;
  update.name = proto.name();
  update.labels = MapFromProto(proto.labels());
  update.annotations = MapFromProto(proto.annotations());
  update.node_selector = MapFromProto(proto.node_selector());
  for (const auto& t : proto.tolerations()) {
    update.tolerations.push_back(TolerationFromProto(t));
  }
  return update;
}

void PodSetUpdateToProto(const PodSetUpdate& update, v1::PodSetUpdate* proto) {
  proto->set_name(update.name);
  MapToProto(update.labels, proto->mutable_labels());
  MapToProto(update.annotations, proto->mutable_annotations());
  MapToProto(update.node_selector, proto->mutable_node_selector());
  for (const Toleration& t : update.tolerations) {
    TolerationToProto(t, proto->add_tolerations());
  }
}

absl::StatusOr<ResourceList> ResourceListFromProto(
    absl::string_view path,
    const google::protobuf::Map<std::string, std::string>& proto) {
  ResourceList out;
  for (const auto& [resource, text] : proto) {
    KQ_ASSIGN_OR_RETURN(
        Quantity q,
        ParseQuantity(absl::StrCat(path, "[", resource, "]"), text));
    out.emplace(resource, q);
  }
  return out;
}

void ResourceListToProto(const ResourceList& list,
                         google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [resource, q] : list) {
    (*out)[resource] = QuantityText(resource, q);
  }
}

// The JSON value of a protobuf Value as nlohmann::json, what parsing
// protobuf's JSON for it would give; false for what that fast path does not
// cover (a non-finite number, a Value without a kind), which takes the slow
// path. Numbers are written as protobuf writes them (SimpleDtoa) and read
// back as nlohmann reads them, so "1" stays an integer.
bool ValueToJson(const google::protobuf::Value& value, nlohmann::json& out);

// A Struct's fields as a JSON object, as ValueToJson.
bool StructToJson(const google::protobuf::Struct& fields, nlohmann::json& out) {
  out = nlohmann::json::object();
  for (const auto& [key, field] : fields.fields()) {
    if (!ValueToJson(field, out[key])) return false;
  }
  return true;
}

bool ValueToJson(const google::protobuf::Value& value, nlohmann::json& out) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kNullValue:
      out = nullptr;
      return true;
    case google::protobuf::Value::kBoolValue:
      out = value.bool_value();
      return true;
    case google::protobuf::Value::kStringValue:
      out = value.string_value();
      return true;
    case google::protobuf::Value::kNumberValue: {
      if (!std::isfinite(value.number_value())) return false;
      out = nlohmann::json::parse(
          google::protobuf::SimpleDtoa(value.number_value()), nullptr,
          /*allow_exceptions=*/false);
      return !out.is_discarded();
    }
    case google::protobuf::Value::kStructValue:
      return StructToJson(value.struct_value(), out);
    case google::protobuf::Value::kListValue: {
      out = nlohmann::json::array();
      for (const google::protobuf::Value& item : value.list_value().values()) {
        out.push_back(nullptr);
        if (!ValueToJson(item, out.back())) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// The reverse: nlohmann::json into a protobuf Value, as protobuf's JSON
// parser fills one (every number a double).
void JsonToValue(const nlohmann::json& json, google::protobuf::Value* value);

// A JSON object's members as a Struct's fields, as JsonToValue.
void JsonToStruct(const nlohmann::json& json, google::protobuf::Struct* out) {
  auto* fields = out->mutable_fields();
  for (const auto& [key, item] : json.items()) {
    JsonToValue(item, &(*fields)[key]);
  }
}

void JsonToValue(const nlohmann::json& json, google::protobuf::Value* value) {
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      value->set_null_value(google::protobuf::NULL_VALUE);
      return;
    case nlohmann::json::value_t::boolean:
      value->set_bool_value(json.get<bool>());
      return;
    case nlohmann::json::value_t::string:
      value->set_string_value(json.get_ref<const std::string&>());
      return;
    case nlohmann::json::value_t::number_integer:
      value->set_number_value(
          static_cast<double>(json.get<nlohmann::json::number_integer_t>()));
      return;
    case nlohmann::json::value_t::number_unsigned:
      value->set_number_value(
          static_cast<double>(json.get<nlohmann::json::number_unsigned_t>()));
      return;
    case nlohmann::json::value_t::number_float:
      value->set_number_value(json.get<double>());
      return;
    case nlohmann::json::value_t::object:
      JsonToStruct(json, value->mutable_struct_value());
      return;
    case nlohmann::json::value_t::array: {
      auto* list = value->mutable_list_value();
      for (const nlohmann::json& item : json) {
        JsonToValue(item, list->add_values());
      }
      return;
    }
    default:
      value->set_null_value(google::protobuf::NULL_VALUE);
      return;
  }
}

uint64_t SpecShapeDigestOf(const nlohmann::json& template_dom);

// Writes a Struct as JSON with object keys sorted. Protobuf prints a
// Struct's keys in hash-map order, which differs between two copies of the
// same template; sorting makes equal templates equal strings, so a workload
// compares equal to itself after a trip through the store. Sets
// `*spec_shape` to the text's SpecShapeDigest, made from the parsed
// template rather than by parsing the text again.
absl::StatusOr<std::string> CanonicalJson(
    absl::string_view path, const google::protobuf::Struct& template_struct,
    uint64_t* spec_shape) {
  // nlohmann::json keeps objects in a std::map, so dump() sorts keys. The
  // calls below are the non-throwing forms; the catch is a guard so that no
  // exception can leave the codec.
  try {
    // Fast path: the Struct straight into nlohmann::json (protobuf's JSON
    // writer and a parse of its output cost most of a submission's CPU).
    nlohmann::json direct;
    if (StructToJson(template_struct, direct)) {
      *spec_shape = SpecShapeDigestOf(direct);
      return direct.dump(-1, ' ', /*ensure_ascii=*/false,
                         nlohmann::json::error_handler_t::replace);
    }
    std::string json;
    google::protobuf::util::Status status =
        google::protobuf::util::MessageToJsonString(template_struct, &json);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": cannot be written as JSON: ", status.message().ToString()));
    }
    nlohmann::json parsed =
        nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": protobuf wrote JSON that does not parse"));
    }
    std::string canonical =
        parsed.dump(-1, ' ', /*ensure_ascii=*/false,
                    nlohmann::json::error_handler_t::replace);
    *spec_shape = SpecShapeDigest(canonical);
    return canonical;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

// Reads a template kept as JSON text (CanonicalJson's, or a client's that
// CheckTemplateText accepted) back into a Struct; false when it is not a
// JSON object.
bool StructFromJson(const std::string& json, google::protobuf::Struct* out) {
  try {
    nlohmann::json parsed =
        nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object()) return false;
    JsonToStruct(parsed, out);
    return true;
  } catch (const nlohmann::json::exception&) {
    out->Clear();
    return false;
  }
}

// Reads a template a client sent as JSON text without building it (a DOM,
// its sorted dump and their allocations cost three times as much): it must
// be one JSON object, nested no deeper than a Struct can be in kqd's
// answers. nlohmann refuses numbers out of a double's range, as Kubernetes'
// API server does. The first problem found is kept in `error`.
class TemplateTextChecker : public nlohmann::json::json_sax_t {
 public:
  // Each JSON object level is three message levels of a Struct (Struct, its
  // fields' map entry, Value), and gRPC parses messages up to 100 levels
  // deep: 30 levels leave room for the answers' own (a WatchEvent's
  // workload, spec and pod set).
  static constexpr int kMaxDepth = 30;

  std::string error;

  bool null() override { return Value("null"); }
  bool boolean(bool) override { return Value("boolean"); }
  bool number_integer(number_integer_t) override { return Value("number"); }
  bool number_unsigned(number_unsigned_t) override { return Value("number"); }
  bool number_float(number_float_t, const string_t&) override {
    return Value("number");
  }
  bool string(string_t&) override { return Value("string"); }
  bool binary(binary_t&) override { return Value("binary"); }
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return Value("array") && Enter(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::json::exception& e) override {
    // "[json.exception.parse_error.101] parse error at line 1, ...": the
    // bracketed id means nothing to the client.
    absl::string_view what = e.what();
    if (size_t end = what.find("] ");
        absl::StartsWith(what, "[") && end != absl::string_view::npos) {
      what.remove_prefix(end + 2);
    }
    error = std::string(what);
    return false;
  }

 private:
  // A value outside any object or array is the whole document.
  bool Value(const char* type) {
    if (depth_ > 0) return true;
    error =
        absl::StrCat("must be a JSON object (a PodTemplateSpec), not ",
                     absl::string_view(type) == "array" ? "an " : "a ", type);
    return false;
  }
  bool Enter() {
    if (++depth_ <= kMaxDepth) return true;
    error = absl::StrCat("nested deeper than ", kMaxDepth, " levels");
    return false;
  }
  int depth_ = 0;
};

// A template a client sent as JSON text is kept as given, once
// TemplateTextChecker accepts it; InvalidArgument at `path` otherwise.
absl::Status CheckTemplateText(absl::string_view path,
                               const std::string& text) {
  // nlohmann stops reading at a NUL and skips a byte order mark; JSON
  // allows neither, and the text is kept and handed on as it is.
  if (text.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": contains a NUL byte"));
  }
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": starts with a byte order mark"));
  }
  TemplateTextChecker checker;
  if (nlohmann::json::sax_parse(text, &checker) && checker.error.empty()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": ", checker.error.empty() ? "not JSON" : checker.error));
}

// `from_client`: the pod set came from a client, whose template fields are
// checked here (the store's were when they came in): the store's own mark,
// both forms at once, or text TemplateTextChecker refuses.
// Whether SpecShapeDigest keeps the member `key` whose path from the
// template's root is `path` (keys by depth; an array element's depth has
// none). The members Kueue's SpecShape reads of a PodSpec, and of each
// container only its requests and ports.
bool InSpecShape(const std::vector<std::string>& path, int depth,
                 const std::string& key) {
  static const absl::flat_hash_set<absl::string_view> kSpecFields = {
      "initContainers", "containers",
      "nodeSelector",   "affinity",
      "tolerations",    "runtimeClassName",
      "priority",       "topologySpreadConstraints",
      "overhead",       "resourceClaims",
      "resources"};
  if (depth == 1) return key == "spec";
  if (depth == 2) return kSpecFields.contains(key);
  const bool in_containers =
      path[2] == "containers" || path[2] == "initContainers";
  // spec.resources: only its requests (pod-level resources, KEP-2837).
  if (depth == 3 && path[2] == "resources") return key == "requests";
  // spec.containers[i].<key> (depth 3 is the element).
  if (depth == 4 && in_containers) return key == "resources" || key == "ports";
  if (depth == 5 && in_containers && path[4] == "resources") {
    return key == "requests";
  }
  return true;
}

// Copies the members of `in` that SpecShapeDigest's parse keeps, deciding
// each as that parse's callback does: `depth` is how many JSON containers
// enclose `in`, and `path` holds the keys by depth.
void CopySpecShape(const nlohmann::json& in, int depth,
                   std::vector<std::string>& path, nlohmann::json& out) {
  if (in.is_object()) {
    out = nlohmann::json::object();
    const int inner = depth + 1;
    for (const auto& [key, child] : in.items()) {
      path.resize(inner);
      path.push_back(key);
      if (!InSpecShape(path, inner, key)) continue;
      CopySpecShape(child, inner, path, out[key]);
    }
  } else if (in.is_array()) {
    out = nlohmann::json::array();
    for (const nlohmann::json& child : in) {
      CopySpecShape(child, depth + 1, path, out.emplace_back());
    }
  } else {
    out = in;
  }
}

// SpecShapeDigest of a template already parsed: the same value as that of
// its text, without parsing the text again.
uint64_t SpecShapeDigestOf(const nlohmann::json& template_dom) {
  std::vector<std::string> path;
  nlohmann::json shape;
  CopySpecShape(template_dom, 0, path, shape);
  // Invalid UTF-8 replaced as in the canonical text the digest is of.
  return StableHash(shape.dump(-1, ' ', /*ensure_ascii=*/false,
                               nlohmann::json::error_handler_t::replace));
}

absl::StatusOr<PodSet> PodSetFromProto(int index, const v1::PodSet& proto,
                                       bool from_client) {
  const std::string path = absl::StrCat("spec.podSets[", index, "]");
  PodSet ps;
  ps.name = proto.name();
  ps.count = proto.count();
  if (proto.has_min_count()) ps.min_count = proto.min_count();
  KQ_ASSIGN_OR_RETURN(
      ps.requests,
      ResourceListFromProto(absl::StrCat(path, ".requests"), proto.requests()));
  ps.node_selector = MapFromProto(proto.node_selector());
  for (const auto& t : proto.tolerations()) {
    ps.tolerations.push_back(TolerationFromProto(t));
  }
  for (const auto& term : proto.required_node_affinity()) {
    NodeSelectorTerm t;
    for (const auto& r : term.match_expressions()) {
      t.match_expressions.push_back(RequirementFromProto(r));
    }
    ps.required_node_affinity.push_back(std::move(t));
  }
  if (from_client) {
    if (proto.template_on_disk()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path,
          ".templateOnDisk: set only by kqd's store; send the pod template "
          "in ",
          path, ".template or .templateJson"));
    }
    if (proto.has_template_() && !proto.template_json().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": set template or templateJson, not both"));
    }
    if (!proto.template_json().empty()) {
      KQ_RETURN_IF_ERROR(CheckTemplateText(absl::StrCat(path, ".templateJson"),
                                           proto.template_json()));
    }
  }
  ps.template_on_disk = proto.template_on_disk();
  uint64_t struct_spec_shape = 0;
  if (!proto.template_json().empty()) {
    ps.template_json = proto.template_json();
  } else if (proto.has_template_()) {
    KQ_ASSIGN_OR_RETURN(ps.template_json,
                        CanonicalJson(absl::StrCat(path, ".template"),
                                      proto.template_(), &struct_spec_shape));
  }
  // kqd makes the digest from a client's template (a client's own is never
  // taken); the stored form carries it.
  if (!from_client) {
    ps.spec_shape = proto.spec_shape();
  } else if (!proto.template_json().empty()) {
    ps.spec_shape = SpecShapeDigest(ps.template_json.str());
  } else if (proto.has_template_()) {
    ps.spec_shape = struct_spec_shape;
  }
  return ps;
}

// Where a pod set's template goes in its proto.
enum class TemplateOut {
  kStruct,  // PodSet.template (an answer, TEMPLATE_FORM_STRUCT)
  kJson,    // PodSet.template_json (an answer, TEMPLATE_FORM_JSON)
  kStored,  // template_json, or the template_on_disk mark (the store)
};

void PodSetToProto(const PodSet& ps, TemplateOut out, v1::PodSet* proto) {
  proto->set_name(ps.name);
  proto->set_count(ps.count);
  if (ps.min_count.has_value()) proto->set_min_count(*ps.min_count);
  ResourceListToProto(ps.requests, proto->mutable_requests());
  MapToProto(ps.node_selector, proto->mutable_node_selector());
  for (const Toleration& t : ps.tolerations) {
    TolerationToProto(t, proto->add_tolerations());
  }
  for (const NodeSelectorTerm& term : ps.required_node_affinity) {
    v1::NodeSelectorTerm* term_proto = proto->add_required_node_affinity();
    for (const LabelSelectorRequirement& r : term.match_expressions) {
      RequirementToProto(r, term_proto->add_match_expressions());
    }
  }
  if (out == TemplateOut::kStored) {
    // A template kept on disk is never written into its workload's row,
    // even while the engine has its text attached.
    if (ps.template_on_disk) {
      proto->set_template_on_disk(true);
    } else {
      proto->set_template_json(ps.template_json.str());
    }
    proto->set_spec_shape(ps.spec_shape);
  } else if (out == TemplateOut::kJson) {
    proto->set_template_json(ps.template_json.str());
  } else if (!ps.template_json.empty()) {
    // template_json was written from a Struct or checked when a client sent
    // it (or comes from tests), so it parses; if it does not, the template
    // is left out rather than sent half-written.
    if (!StructFromJson(ps.template_json.str(), proto->mutable_template_())) {
      proto->clear_template_();
    }
  }
}

absl::StatusOr<Admission> AdmissionFromProto(const v1::Admission& proto) {
  Admission admission;
  admission.cluster_queue = proto.cluster_queue();
  for (int i = 0; i < proto.pod_set_assignments_size(); ++i) {
    const v1::PodSetAssignment& psa_proto = proto.pod_set_assignments(i);
    PodSetAssignment psa;
    psa.name = psa_proto.name();
    psa.flavors =
        MapFromProto<std::map<std::string, std::string>>(psa_proto.flavors());
    KQ_ASSIGN_OR_RETURN(psa.resource_usage,
                        ResourceListFromProto(
                            absl::StrCat("status.admission.podSetAssignments[",
                                         i, "].resourceUsage"),
                            psa_proto.resource_usage()));
    psa.count = psa_proto.count();
    admission.pod_set_assignments.push_back(std::move(psa));
  }
  return admission;
}

void AdmissionToProto(const Admission& admission, v1::Admission* proto) {
  proto->set_cluster_queue(admission.cluster_queue);
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    v1::PodSetAssignment* psa_proto = proto->add_pod_set_assignments();
    psa_proto->set_name(psa.name);
    MapToProto(psa.flavors, psa_proto->mutable_flavors());
    ResourceListToProto(psa.resource_usage,
                        psa_proto->mutable_resource_usage());
    psa_proto->set_count(psa.count);
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API.

absl::Time FromProto(const google::protobuf::Timestamp& ts) {
  // The extremes are what ToProto writes for the infinite times.
  if (ts.seconds() == std::numeric_limits<int64_t>::max()) {
    return absl::InfiniteFuture();
  }
  if (ts.seconds() == std::numeric_limits<int64_t>::min()) {
    return absl::InfinitePast();
  }
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

google::protobuf::Timestamp ToProto(absl::Time t) {
  google::protobuf::Timestamp ts;
  if (t == absl::InfiniteFuture()) {
    ts.set_seconds(std::numeric_limits<int64_t>::max());
    return ts;
  }
  if (t == absl::InfinitePast()) {
    ts.set_seconds(std::numeric_limits<int64_t>::min());
    return ts;
  }
  // ToUnixSeconds rounds toward negative infinity, so the remainder is a
  // non-negative count of nanoseconds, as Timestamp requires.
  const int64_t seconds = absl::ToUnixSeconds(t);
  ts.set_seconds(seconds);
  ts.set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
  return ts;
}

absl::StatusOr<ConfigObject> FromProto(const v1::ConfigObject& proto) {
  switch (proto.kind_case()) {
    case v1::ConfigObject::kNamespace:
      return Namespace{.meta = MetaFromProto(proto.namespace_().metadata())};
    case v1::ConfigObject::kResourceFlavor:
      return ResourceFlavorFromProto(proto.resource_flavor());
    case v1::ConfigObject::kClusterQueue: {
      KQ_ASSIGN_OR_RETURN(ClusterQueue cq,
                          ClusterQueueFromProto(proto.cluster_queue()));
      return cq;
    }
    case v1::ConfigObject::kCohort: {
      KQ_ASSIGN_OR_RETURN(Cohort cohort, CohortFromProto(proto.cohort()));
      return cohort;
    }
    case v1::ConfigObject::kLocalQueue: {
      KQ_ASSIGN_OR_RETURN(LocalQueue lq,
                          LocalQueueFromProto(proto.local_queue()));
      return lq;
    }
    case v1::ConfigObject::kWorkloadPriorityClass:
      return PriorityClassFromProto(proto.workload_priority_class());
    case v1::ConfigObject::kAdmissionCheck:
      return AdmissionCheckFromProto(proto.admission_check());
    case v1::ConfigObject::kProvisioningRequestConfig:
      return ProvisioningRequestConfigFromProto(
          proto.provisioning_request_config());
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("config object has no kind set");
}

v1::ConfigObject ToProto(const ConfigObject& object) {
  v1::ConfigObject proto;
  switch (KindOf(object)) {
    case ObjectKind::kNamespace:
      MetaToProto(std::get<Namespace>(object).meta,
                  proto.mutable_namespace_()->mutable_metadata());
      break;
    case ObjectKind::kResourceFlavor:
      ResourceFlavorToProto(std::get<ResourceFlavor>(object),
                            proto.mutable_resource_flavor());
      break;
    case ObjectKind::kClusterQueue:
      ClusterQueueToProto(std::get<ClusterQueue>(object),
                          proto.mutable_cluster_queue());
      break;
    case ObjectKind::kCohort:
      CohortToProto(std::get<Cohort>(object), proto.mutable_cohort());
      break;
    case ObjectKind::kLocalQueue:
      LocalQueueToProto(std::get<LocalQueue>(object),
                        proto.mutable_local_queue());
      break;
    case ObjectKind::kWorkloadPriorityClass:
      PriorityClassToProto(std::get<WorkloadPriorityClass>(object),
                           proto.mutable_workload_priority_class());
      break;
    case ObjectKind::kAdmissionCheck:
      AdmissionCheckToProto(std::get<AdmissionCheck>(object),
                            proto.mutable_admission_check());
      break;
    case ObjectKind::kProvisioningRequestConfig:
      ProvisioningRequestConfigToProto(
          std::get<ProvisioningRequestConfig>(object),
          proto.mutable_provisioning_request_config());
      break;
    case ObjectKind::kWorkload:
      break;  // not a ConfigObject alternative
  }
  return proto;
}

namespace {

absl::StatusOr<Workload> WorkloadFromProto(const v1::Workload& proto,
                                           bool from_client) {
  const v1::WorkloadSpec& spec = proto.spec();
  const v1::WorkloadStatus& status = proto.status();
  Workload wl;
  wl.meta = MetaFromProto(proto.metadata());
  wl.queue_name = spec.queue_name();
  for (int i = 0; i < spec.pod_sets_size(); ++i) {
    KQ_ASSIGN_OR_RETURN(PodSet ps,
                        PodSetFromProto(i, spec.pod_sets(i), from_client));
    wl.pod_sets.push_back(std::move(ps));
  }
  wl.priority_class_name = spec.priority_class_name();
  // Rows stored before kq checked the value load with it dropped (no
  // source), not failing the start-up.
  if (!ParsePriorityClassSource(spec.priority_class_source(),
                                &wl.priority_class_source) &&
      from_client) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.priorityClassSource: Unsupported value: \"",
        spec.priority_class_source(), "\": supported values: \"",
        PriorityClassSourceName(PriorityClassSource::kWorkloadPriorityClass),
        "\", \"",
        PriorityClassSourceName(PriorityClassSource::kPodPriorityClass),
        "\", \"\""));
  }
  wl.priority = spec.priority();
  wl.active = spec.has_active() ? spec.active() : true;
  if (spec.has_maximum_execution_time_seconds()) {
    wl.maximum_execution_time_seconds = spec.maximum_execution_time_seconds();
  }
  if (status.has_admission()) {
    KQ_ASSIGN_OR_RETURN(wl.admission, AdmissionFromProto(status.admission()));
  }
  for (const auto& c : status.conditions()) {
    wl.conditions.push_back(ConditionFromProto(c));
  }
  for (const auto& check_proto : status.admission_checks()) {
    AdmissionCheckState check;
    check.name = check_proto.name();
    check.state = OrDefault(check_proto.state(), "Pending");
    if (check_proto.has_last_transition_time()) {
      check.last_transition_time =
          FromProto(check_proto.last_transition_time());
    }
    check.message = check_proto.message();
    for (const auto& update : check_proto.pod_set_updates()) {
      check.pod_set_updates.push_back(PodSetUpdateFromProto(update));
    }
    wl.admission_checks.push_back(std::move(check));
  }
  if (status.requeue_state().has_count()) {
    SetRequeueCount(wl, status.requeue_state().count());
  }
  if (status.requeue_state().has_requeue_at()) {
    SetRequeueAt(wl, FromProto(status.requeue_state().requeue_at()));
  }
  if (status.has_runner()) {
    wl.runner = Runner{status.runner().id(),
                       FromProto(status.runner().lease_expire_time())};
  }
  if (status.has_stop_deadline()) {
    wl.stop_deadline = FromProto(status.stop_deadline());
  }
  for (int i = 0; i < status.reclaimable_pods_size(); ++i) {
    const v1::ReclaimablePod& rp = status.reclaimable_pods(i);
    // A list keyed by name in Kueue (listType=map): a second entry for a
    // pod set would silently replace the first in kq's map.
    if (!wl.reclaimable_pods.emplace(rp.name(), rp.count()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("status.reclaimablePods[", i,
                       "].name: duplicate value \"", rp.name(), "\""));
    }
  }
  return wl;
}

v1::Workload WorkloadToProto(const Workload& workload, TemplateOut out) {
  v1::Workload proto;
  MetaToProto(workload.meta, proto.mutable_metadata());
  v1::WorkloadSpec* spec = proto.mutable_spec();
  spec->set_queue_name(workload.queue_name);
  for (const PodSet& ps : workload.pod_sets) {
    PodSetToProto(ps, out, spec->add_pod_sets());
  }
  spec->set_priority_class_name(workload.priority_class_name.str());
  spec->set_priority_class_source(
      PriorityClassSourceName(workload.priority_class_source));
  spec->set_priority(workload.priority);
  spec->set_active(workload.active);
  if (workload.maximum_execution_time_seconds.has_value()) {
    spec->set_maximum_execution_time_seconds(
        *workload.maximum_execution_time_seconds);
  }
  v1::WorkloadStatus* status = proto.mutable_status();
  if (workload.admission.has_value()) {
    AdmissionToProto(*workload.admission, status->mutable_admission());
  }
  for (const Condition& c : workload.conditions) {
    ConditionToProto(c, status->add_conditions());
  }
  for (const AdmissionCheckState& check : workload.admission_checks) {
    v1::AdmissionCheckState* check_proto = status->add_admission_checks();
    check_proto->set_name(check.name);
    check_proto->set_state(check.state);
    if (check.last_transition_time != absl::UnixEpoch()) {
      *check_proto->mutable_last_transition_time() =
          ToProto(check.last_transition_time);
    }
    check_proto->set_message(check.message);
    for (const PodSetUpdate& update : check.pod_set_updates) {
      PodSetUpdateToProto(update, check_proto->add_pod_set_updates());
    }
  }
  if (std::optional<int32_t> count = RequeueCount(workload)) {
    status->mutable_requeue_state()->set_count(*count);
  }
  if (std::optional<absl::Time> at = RequeueAt(workload)) {
    *status->mutable_requeue_state()->mutable_requeue_at() = ToProto(*at);
  }
  if (workload.runner.has_value()) {
    status->mutable_runner()->set_id(workload.runner->id);
    *status->mutable_runner()->mutable_lease_expire_time() =
        ToProto(workload.runner->lease_expire_time);
  }
  if (workload.stop_deadline.has_value()) {
    *status->mutable_stop_deadline() = ToProto(*workload.stop_deadline);
  }
  for (const auto& [name, count] : workload.reclaimable_pods) {
    v1::ReclaimablePod* rp = status->add_reclaimable_pods();
    rp->set_name(name);
    rp->set_count(count);
  }
  return proto;
}

}  // namespace

absl::StatusOr<Workload> FromClientProto(const v1::Workload& proto) {
  return WorkloadFromProto(proto, /*from_client=*/true);
}

absl::StatusOr<Workload> FromProto(const v1::Workload& proto) {
  return WorkloadFromProto(proto, /*from_client=*/false);
}

v1::Workload ToProto(const Workload& workload, v1::TemplateForm form) {
  return WorkloadToProto(workload, form == v1::TEMPLATE_FORM_JSON
                                       ? TemplateOut::kJson
                                       : TemplateOut::kStruct);
}

v1::Workload ToStoredProto(const Workload& workload) {
  return WorkloadToProto(workload, TemplateOut::kStored);
}

PodSetUpdate FromProto(const v1::PodSetUpdate& proto) {
  return PodSetUpdateFromProto(proto);
}

v1::PodSetUpdate ToProto(const PodSetUpdate& update) {
  v1::PodSetUpdate proto;
  PodSetUpdateToProto(update, &proto);
  return proto;
}

// ---------------------------------------------------------------------------
// Kueue Configuration.

absl::StatusOr<Configuration> FromProto(const v1::Configuration& proto) {
  Configuration config;
  if (proto.has_fair_sharing()) {
    FairSharingConfig& fair_sharing = config.fair_sharing.emplace();
    const auto& strategies = proto.fair_sharing().preemption_strategies();
    if (!strategies.empty()) fair_sharing.preemption_strategies.clear();
    for (int i = 0; i < strategies.size(); ++i) {
      const std::string path =
          absl::StrCat("fairSharing.preemptionStrategies[", i, "]");
      if (strategies[i] == "LessThanOrEqualToFinalShare") {
        fair_sharing.preemption_strategies.push_back(
            FairSharingStrategy::kLessThanOrEqualToFinalShare);
      } else if (strategies[i] == "LessThanInitialShare") {
        fair_sharing.preemption_strategies.push_back(
            FairSharingStrategy::kLessThanInitialShare);
      } else {
        return UnsupportedValue(
            path, strategies[i],
            "LessThanOrEqualToFinalShare or LessThanInitialShare");
      }
    }
  }
  const v1::ResourcesConfig& resources = proto.resources();
  const std::string& check = resources.quota_check_strategy();
  if (check.empty() || check == "BlockUndeclared") {
    config.resources.quota_check_strategy =
        QuotaCheckStrategy::kBlockUndeclared;
  } else if (check == "IgnoreUndeclared") {
    config.resources.quota_check_strategy =
        QuotaCheckStrategy::kIgnoreUndeclared;
  } else {
    return UnsupportedValue("resources.quotaCheckStrategy", check,
                            "BlockUndeclared or IgnoreUndeclared");
  }
  for (const std::string& prefix : resources.exclude_resource_prefixes()) {
    config.resources.exclude_resource_prefixes.push_back(prefix);
  }
  for (int i = 0; i < resources.transformations_size(); ++i) {
    const v1::ResourceTransformation& in = resources.transformations(i);
    const std::string path = absl::StrCat("resources.transformations[", i, "]");
    ResourceTransformation& out =
        config.resources.transformations.emplace_back();
    out.input = in.input();
    if (in.strategy().empty() || in.strategy() == "Retain") {
      out.strategy = TransformationStrategy::kRetain;
    } else if (in.strategy() == "Replace") {
      out.strategy = TransformationStrategy::kReplace;
    } else {
      return UnsupportedValue(absl::StrCat(path, ".strategy"), in.strategy(),
                              "Retain or Replace");
    }
    out.multiply_by = in.multiply_by();
    KQ_ASSIGN_OR_RETURN(
        out.outputs,
        ResourceListFromProto(absl::StrCat(path, ".outputs"), in.outputs()));
  }
  KQ_RETURN_IF_ERROR(ValidateConfiguration(config));
  return config;
}

std::string QuantityToProto(absl::string_view resource, Quantity q) {
  return QuantityText(resource, q);
}

uint64_t SpecShapeDigest(absl::string_view template_json) {
  // The template with every member outside Kueue's SpecShape dropped while
  // parsing; its dump (members sorted by key) is what is hashed, so the
  // members' order in the text does not matter.
  std::vector<std::string> path;
  auto keep = [&path](int depth, nlohmann::json::parse_event_t event,
                      nlohmann::json& parsed) {
    if (event != nlohmann::json::parse_event_t::key) return true;
    path.resize(depth);
    path.push_back(parsed.get<std::string>());
    return InSpecShape(path, depth, path.back());
  };
  nlohmann::json shape =
      nlohmann::json::parse(template_json, keep, /*allow_exceptions=*/false);
  if (shape.is_discarded()) return 0;
  return StableHash(shape.dump());
}

}  // namespace kq::codec
