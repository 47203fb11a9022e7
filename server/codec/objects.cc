// The configuration objects: ResourceFlavor, ClusterQueue, Cohort,
// LocalQueue, WorkloadPriorityClass, AdmissionCheck,
// ProvisioningRequestConfig, MultiKueueConfig, MultiKueueCluster and
// Namespace.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "base/status_macros.h"
#include "server/codec/codec.h"
#include "server/codec/internal.h"

namespace kq::codec {
namespace {

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

Taint TaintFromProto(const v1::Taint& proto) {
  return Taint{
      .key = proto.key(), .value = proto.value(), .effect = proto.effect()};
}

void TaintToProto(const Taint& taint, v1::Taint* proto) {
  proto->set_key(taint.key);
  proto->set_value(taint.value);
  proto->set_effect(taint.effect);
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

// An empty quotaManagement reads as Kueue's default, Manual.
MultiKueueConfig MultiKueueConfigFromProto(const v1::MultiKueueConfig& proto) {
  MultiKueueConfig config;
  config.meta = MetaFromProto(proto.metadata());
  config.clusters = {proto.spec().clusters().begin(),
                     proto.spec().clusters().end()};
  if (!proto.spec().quota_management().empty()) {
    config.quota_management = proto.spec().quota_management();
  }
  return config;
}

void MultiKueueConfigToProto(const MultiKueueConfig& config,
                             v1::MultiKueueConfig* proto) {
  MetaToProto(config.meta, proto->mutable_metadata());
  for (const std::string& cluster : config.clusters) {
    proto->mutable_spec()->add_clusters(cluster);
  }
  proto->mutable_spec()->set_quota_management(config.quota_management);
}

// A source given with its required field empty is refused here, where its
// presence is still known (the core type keeps no empty source): Kueue's CRD
// says the field is required rather than that no source was given.
absl::StatusOr<MultiKueueCluster> MultiKueueClusterFromProto(
    const v1::MultiKueueCluster& proto) {
  MultiKueueCluster cluster;
  cluster.meta = MetaFromProto(proto.metadata());
  const v1::ClusterSource& source = proto.spec().cluster_source();
  if (source.has_kube_config()) {
    if (source.kube_config().location().empty()) {
      return absl::InvalidArgumentError(
          "spec.clusterSource.kubeConfig.location: Required value");
    }
    cluster.location = source.kube_config().location();
    if (!source.kube_config().location_type().empty()) {
      cluster.location_type = source.kube_config().location_type();
    }
  }
  if (source.has_cluster_profile_ref()) {
    if (source.cluster_profile_ref().name().empty()) {
      return absl::InvalidArgumentError(
          "spec.clusterSource.clusterProfileRef.name: Required value");
    }
    cluster.cluster_profile_name = source.cluster_profile_ref().name();
  }
  return cluster;
}

void MultiKueueClusterToProto(const MultiKueueCluster& cluster,
                              v1::MultiKueueCluster* proto) {
  MetaToProto(cluster.meta, proto->mutable_metadata());
  v1::ClusterSource* source = proto->mutable_spec()->mutable_cluster_source();
  if (!cluster.location.empty()) {
    source->mutable_kube_config()->set_location(cluster.location);
    source->mutable_kube_config()->set_location_type(cluster.location_type);
  }
  if (!cluster.cluster_profile_name.empty()) {
    source->mutable_cluster_profile_ref()->set_name(
        cluster.cluster_profile_name);
  }
}

}  // namespace

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
    case v1::ConfigObject::kMultiKueueConfig:
      return MultiKueueConfigFromProto(proto.multi_kueue_config());
    case v1::ConfigObject::kMultiKueueCluster: {
      KQ_ASSIGN_OR_RETURN(
          MultiKueueCluster cluster,
          MultiKueueClusterFromProto(proto.multi_kueue_cluster()));
      return cluster;
    }
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
    case ObjectKind::kMultiKueueConfig:
      MultiKueueConfigToProto(std::get<MultiKueueConfig>(object),
                              proto.mutable_multi_kueue_config());
      break;
    case ObjectKind::kMultiKueueCluster:
      MultiKueueClusterToProto(std::get<MultiKueueCluster>(object),
                               proto.mutable_multi_kueue_cluster());
      break;
    case ObjectKind::kWorkload:
      break;  // not a ConfigObject alternative
  }
  return proto;
}

}  // namespace kq::codec
