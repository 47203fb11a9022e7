// ToKueueJson and MakeList: kq.v1 protos -> Kueue-shaped JSON
// (kueue.x-k8s.io/v1beta1 field names; v1beta2 for the MultiKueue kinds).
// Fields are omitted when empty, as Kubernetes' omitempty does; a sub-object
// the proto has set is always written, even when empty, so that
// `namespaceSelector: {}` (all namespaces) survives and
// ParseManifests(ToYaml(ToKueueJson(x))) == x.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"
#include "manifest/proto_json.h"

namespace kq::manifest {
namespace {

using internal::FormatTimestamp;
using nlohmann::json;
template <typename T>
using Repeated = google::protobuf::RepeatedPtrField<T>;
using StringMap = google::protobuf::Map<std::string, std::string>;

constexpr absl::string_view kKueueV1beta1 = "kueue.x-k8s.io/v1beta1";
// The MultiKueue kinds are written in Kueue's storage version: v1beta1's
// MultiKueueCluster has no clusterSource, and v1beta2 is what Kueue's
// documentation shows.
constexpr absl::string_view kKueueV1beta2 = "kueue.x-k8s.io/v1beta2";

void PutString(json& out, const char* key, const std::string& value) {
  if (!value.empty()) out[key] = value;
}

void PutMap(json& out, const char* key, const StringMap& values) {
  if (values.empty()) return;
  json& object = out[key] = json::object();
  for (const auto& [name, value] : values) object[name] = value;
}

void PutList(json& out, const char* key, const Repeated<std::string>& values) {
  if (values.empty()) return;
  json& list = out[key] = json::array();
  for (const std::string& value : values) list.push_back(value);
}

json Header(absl::string_view api_version, absl::string_view kind) {
  json out = json::object();
  out["apiVersion"] = api_version;
  out["kind"] = kind;
  return out;
}

json MetadataJson(const v1::ObjectMeta& meta) {
  json out = json::object();
  PutString(out, "name", meta.name());
  PutString(out, "generateName", meta.generate_name());
  PutString(out, "namespace", meta.namespace_());
  PutString(out, "uid", meta.uid());
  if (meta.revision() != 0) {
    out["resourceVersion"] = std::to_string(meta.revision());
  }
  if (meta.has_creation_timestamp()) {
    out["creationTimestamp"] = FormatTimestamp(meta.creation_timestamp());
  }
  PutMap(out, "labels", meta.labels());
  PutMap(out, "annotations", meta.annotations());
  return out;
}

json ConditionsJson(const Repeated<v1::Condition>& conditions) {
  json list = json::array();
  for (const v1::Condition& c : conditions) {
    // Kubernetes conditions require all of these, even when empty.
    json item = {{"type", c.type()},
                 {"status", c.status()},
                 {"reason", c.reason()},
                 {"message", c.message()}};
    if (c.has_last_transition_time()) {
      item["lastTransitionTime"] = FormatTimestamp(c.last_transition_time());
    }
    list.push_back(std::move(item));
  }
  return list;
}

json TolerationJson(const v1::Toleration& t) {
  json out = json::object();
  PutString(out, "key", t.key());
  PutString(out, "operator", t.operator_());
  PutString(out, "value", t.value());
  PutString(out, "effect", t.effect());
  if (t.has_toleration_seconds())
    out["tolerationSeconds"] = t.toleration_seconds();
  return out;
}

json RequirementsJson(const Repeated<v1::LabelSelectorRequirement>& list) {
  json out = json::array();
  for (const v1::LabelSelectorRequirement& r : list) {
    json item = json::object();
    PutString(item, "key", r.key());
    PutString(item, "operator", r.operator_());
    PutList(item, "values", r.values());
    out.push_back(std::move(item));
  }
  return out;
}

json LabelSelectorJson(const v1::LabelSelector& selector) {
  json out = json::object();
  PutMap(out, "matchLabels", selector.match_labels());
  if (!selector.match_expressions().empty()) {
    out["matchExpressions"] = RequirementsJson(selector.match_expressions());
  }
  return out;
}

json FairSharingJson(const v1::FairSharing& fs) {
  json out = json::object();
  if (fs.has_weight()) out["weight"] = fs.weight();
  return out;
}

json ResourceGroupsJson(const Repeated<v1::ResourceGroup>& groups) {
  json out = json::array();
  for (const v1::ResourceGroup& group : groups) {
    json flavors = json::array();
    for (const v1::FlavorQuotas& flavor : group.flavors()) {
      json resources = json::array();
      for (const v1::ResourceQuota& quota : flavor.resources()) {
        json item = {{"name", quota.name()},
                     {"nominalQuota", quota.nominal_quota()}};
        if (quota.has_borrowing_limit()) {
          item["borrowingLimit"] = quota.borrowing_limit();
        }
        if (quota.has_lending_limit()) {
          item["lendingLimit"] = quota.lending_limit();
        }
        resources.push_back(std::move(item));
      }
      flavors.push_back({{"name", flavor.name()}, {"resources", resources}});
    }
    json item = {{"flavors", flavors}};
    item["coveredResources"] = json::array();
    for (const std::string& r : group.covered_resources()) {
      item["coveredResources"].push_back(r);
    }
    out.push_back(std::move(item));
  }
  return out;
}

json FlavorUsagesJson(const Repeated<v1::FlavorUsage>& usages) {
  json out = json::array();
  for (const v1::FlavorUsage& usage : usages) {
    json resources = json::array();
    for (const v1::ResourceUsage& r : usage.resources()) {
      json item = {{"name", r.name()}};
      PutString(item, "total", r.total());
      PutString(item, "borrowed", r.borrowed());
      resources.push_back(std::move(item));
    }
    json item = {{"name", usage.name()}};
    if (!resources.empty()) item["resources"] = std::move(resources);
    out.push_back(std::move(item));
  }
  return out;
}

// Status shared by ClusterQueue and LocalQueue; `usage_key` is the v1beta1
// spelling of the admitted usage ("flavorsUsage" / "flavorUsage").
template <typename Status>
json QueueStatusJson(const Status& status, const char* usage_key) {
  json out = json::object();
  if (!status.conditions().empty()) {
    out["conditions"] = ConditionsJson(status.conditions());
  }
  if (!status.flavors_reservation().empty()) {
    out["flavorsReservation"] = FlavorUsagesJson(status.flavors_reservation());
  }
  if (!status.flavors_usage().empty()) {
    out[usage_key] = FlavorUsagesJson(status.flavors_usage());
  }
  out["pendingWorkloads"] = status.pending_workloads();
  out["reservingWorkloads"] = status.reserving_workloads();
  out["admittedWorkloads"] = status.admitted_workloads();
  return out;
}

json FairSharingStatusJson(const v1::FairSharingStatus& status) {
  return json{{"weightedShare", status.weighted_share()}};
}

json ResourceFlavorJson(const v1::ResourceFlavor& rf) {
  json out = Header(kKueueV1beta1, "ResourceFlavor");
  out["metadata"] = MetadataJson(rf.metadata());
  if (rf.has_spec()) {
    const v1::ResourceFlavorSpec& s = rf.spec();
    json spec = json::object();
    PutMap(spec, "nodeLabels", s.node_labels());
    if (!s.node_taints().empty()) {
      json& taints = spec["nodeTaints"] = json::array();
      for (const v1::Taint& t : s.node_taints()) {
        json taint = json::object();
        PutString(taint, "key", t.key());
        PutString(taint, "value", t.value());
        PutString(taint, "effect", t.effect());
        taints.push_back(std::move(taint));
      }
    }
    if (!s.tolerations().empty()) {
      json& tolerations = spec["tolerations"] = json::array();
      for (const v1::Toleration& t : s.tolerations()) {
        tolerations.push_back(TolerationJson(t));
      }
    }
    PutString(spec, "topologyName", s.topology_name());
    out["spec"] = std::move(spec);
  }
  return out;
}

json ClusterQueueJson(const v1::ClusterQueue& cq) {
  json out = Header(kKueueV1beta1, "ClusterQueue");
  out["metadata"] = MetadataJson(cq.metadata());
  if (cq.has_spec()) {
    const v1::ClusterQueueSpec& s = cq.spec();
    json spec = json::object();
    if (!s.resource_groups().empty()) {
      spec["resourceGroups"] = ResourceGroupsJson(s.resource_groups());
    }
    PutString(spec, "cohort", s.cohort_name());
    PutString(spec, "queueingStrategy", s.queueing_strategy());
    if (s.has_namespace_selector()) {
      spec["namespaceSelector"] = LabelSelectorJson(s.namespace_selector());
    }
    if (s.has_flavor_fungibility()) {
      json f = json::object();
      PutString(f, "whenCanBorrow", s.flavor_fungibility().when_can_borrow());
      PutString(f, "whenCanPreempt", s.flavor_fungibility().when_can_preempt());
      PutString(f, "preference", s.flavor_fungibility().preference());
      spec["flavorFungibility"] = std::move(f);
    }
    if (s.has_preemption()) {
      const v1::ClusterQueuePreemption& p = s.preemption();
      json preemption = json::object();
      PutString(preemption, "reclaimWithinCohort", p.reclaim_within_cohort());
      PutString(preemption, "withinClusterQueue", p.within_cluster_queue());
      if (p.has_borrow_within_cohort()) {
        json b = json::object();
        PutString(b, "policy", p.borrow_within_cohort().policy());
        if (p.borrow_within_cohort().has_max_priority_threshold()) {
          b["maxPriorityThreshold"] =
              p.borrow_within_cohort().max_priority_threshold();
        }
        preemption["borrowWithinCohort"] = std::move(b);
      }
      spec["preemption"] = std::move(preemption);
    }
    if (!s.admission_checks().empty()) {
      json rules = json::array();
      for (const v1::AdmissionCheckStrategyRule& rule : s.admission_checks()) {
        json item = {{"name", rule.name()}};
        PutList(item, "onFlavors", rule.on_flavors());
        rules.push_back(std::move(item));
      }
      spec["admissionChecksStrategy"] = {{"admissionChecks", rules}};
    }
    PutString(spec, "stopPolicy", s.stop_policy());
    if (s.has_fair_sharing()) {
      spec["fairSharing"] = FairSharingJson(s.fair_sharing());
    }
    out["spec"] = std::move(spec);
  }
  if (cq.has_status()) {
    out["status"] = QueueStatusJson(cq.status(), "flavorsUsage");
    if (cq.status().has_fair_sharing()) {
      out["status"]["fairSharing"] =
          FairSharingStatusJson(cq.status().fair_sharing());
    }
  }
  return out;
}

json CohortJson(const v1::Cohort& co) {
  json out = Header(kKueueV1beta1, "Cohort");
  out["metadata"] = MetadataJson(co.metadata());
  if (co.has_spec()) {
    json spec = json::object();
    PutString(spec, "parentName", co.spec().parent_name());
    if (!co.spec().resource_groups().empty()) {
      spec["resourceGroups"] = ResourceGroupsJson(co.spec().resource_groups());
    }
    if (co.spec().has_fair_sharing()) {
      spec["fairSharing"] = FairSharingJson(co.spec().fair_sharing());
    }
    out["spec"] = std::move(spec);
  }
  if (co.status().has_fair_sharing()) {
    out["status"]["fairSharing"] =
        FairSharingStatusJson(co.status().fair_sharing());
  }
  return out;
}

json LocalQueueJson(const v1::LocalQueue& lq) {
  json out = Header(kKueueV1beta1, "LocalQueue");
  out["metadata"] = MetadataJson(lq.metadata());
  if (lq.has_spec()) {
    json spec = json::object();
    PutString(spec, "clusterQueue", lq.spec().cluster_queue());
    PutString(spec, "stopPolicy", lq.spec().stop_policy());
    if (lq.spec().has_fair_sharing()) {
      spec["fairSharing"] = FairSharingJson(lq.spec().fair_sharing());
    }
    out["spec"] = std::move(spec);
  }
  if (lq.has_status()) {
    out["status"] = QueueStatusJson(lq.status(), "flavorUsage");
  }
  return out;
}

json WorkloadPriorityClassJson(const v1::WorkloadPriorityClass& wpc) {
  json out = Header(kKueueV1beta1, "WorkloadPriorityClass");
  out["metadata"] = MetadataJson(wpc.metadata());
  out["value"] = wpc.value();
  PutString(out, "description", wpc.description());
  return out;
}

json AdmissionCheckJson(const v1::AdmissionCheck& ac) {
  json out = Header(kKueueV1beta1, "AdmissionCheck");
  out["metadata"] = MetadataJson(ac.metadata());
  if (ac.has_spec()) {
    json spec = json::object();
    PutString(spec, "controllerName", ac.spec().controller_name());
    if (ac.spec().has_parameters()) {
      json p = json::object();
      PutString(p, "apiGroup", ac.spec().parameters().api_group());
      PutString(p, "kind", ac.spec().parameters().kind());
      PutString(p, "name", ac.spec().parameters().name());
      spec["parameters"] = std::move(p);
    }
    out["spec"] = std::move(spec);
  }
  if (ac.has_status()) {
    json status = json::object();
    if (!ac.status().conditions().empty()) {
      status["conditions"] = ConditionsJson(ac.status().conditions());
    }
    out["status"] = std::move(status);
  }
  return out;
}

json ProvisioningRequestConfigJson(const v1::ProvisioningRequestConfig& prc) {
  json out = Header(kKueueV1beta1, "ProvisioningRequestConfig");
  out["metadata"] = MetadataJson(prc.metadata());
  if (!prc.has_spec()) return out;
  const v1::ProvisioningRequestConfigSpec& s = prc.spec();
  json spec = json::object();
  PutString(spec, "provisioningClassName", s.provisioning_class_name());
  PutMap(spec, "parameters", s.parameters());
  PutList(spec, "managedResources", s.managed_resources());
  if (s.has_retry_strategy()) {
    const v1::ProvisioningRequestRetryStrategy& r = s.retry_strategy();
    json retry = json::object();
    if (r.has_backoff_limit_count()) {
      retry["backoffLimitCount"] = r.backoff_limit_count();
    }
    if (r.has_backoff_base_seconds()) {
      retry["backoffBaseSeconds"] = r.backoff_base_seconds();
    }
    if (r.has_backoff_max_seconds()) {
      retry["backoffMaxSeconds"] = r.backoff_max_seconds();
    }
    spec["retryStrategy"] = std::move(retry);
  }
  if (!s.pod_set_updates_node_selector().empty()) {
    json selectors = json::array();
    for (const v1::ProvisioningRequestPodSetUpdatesNodeSelector& n :
         s.pod_set_updates_node_selector()) {
      json item = json::object();
      PutString(item, "key", n.key());
      PutString(item, "valueFromProvisioningClassDetail",
                n.value_from_provisioning_class_detail());
      selectors.push_back(std::move(item));
    }
    spec["podSetUpdates"] = {{"nodeSelector", std::move(selectors)}};
  }
  PutString(spec, "podSetMergePolicy", s.pod_set_merge_policy());
  out["spec"] = std::move(spec);
  return out;
}

json MultiKueueConfigJson(const v1::MultiKueueConfig& config) {
  json out = Header(kKueueV1beta2, "MultiKueueConfig");
  out["metadata"] = MetadataJson(config.metadata());
  if (!config.has_spec()) return out;
  json spec = json::object();
  PutList(spec, "clusters", config.spec().clusters());
  PutString(spec, "quotaManagement", config.spec().quota_management());
  out["spec"] = std::move(spec);
  return out;
}

json MultiKueueClusterJson(const v1::MultiKueueCluster& cluster) {
  json out = Header(kKueueV1beta2, "MultiKueueCluster");
  out["metadata"] = MetadataJson(cluster.metadata());
  if (cluster.has_spec()) {
    const v1::ClusterSource& s = cluster.spec().cluster_source();
    json source = json::object();
    if (s.has_kube_config()) {
      json kube_config = json::object();
      PutString(kube_config, "location", s.kube_config().location());
      PutString(kube_config, "locationType", s.kube_config().location_type());
      source["kubeConfig"] = std::move(kube_config);
    }
    if (s.has_cluster_profile_ref()) {
      json ref = json::object();
      PutString(ref, "name", s.cluster_profile_ref().name());
      source["clusterProfileRef"] = std::move(ref);
    }
    out["spec"] = {{"clusterSource", std::move(source)}};
  }
  if (cluster.has_status()) {
    json status = json::object();
    if (!cluster.status().conditions().empty()) {
      status["conditions"] = ConditionsJson(cluster.status().conditions());
    }
    out["status"] = std::move(status);
  }
  return out;
}

json PodSetUpdateJson(const v1::PodSetUpdate& update) {
  json out = {{"name", update.name()}};
  PutMap(out, "labels", update.labels());
  PutMap(out, "annotations", update.annotations());
  PutMap(out, "nodeSelector", update.node_selector());
  if (!update.tolerations().empty()) {
    json& tolerations = out["tolerations"] = json::array();
    for (const v1::Toleration& t : update.tolerations()) {
      tolerations.push_back(TolerationJson(t));
    }
  }
  return out;
}

json NamespaceJson(const v1::Namespace& ns) {
  json out = Header("v1", "Namespace");
  out["metadata"] = MetadataJson(ns.metadata());
  return out;
}

// A pod set's template. A workload submitted through the API may carry only
// the derived fields (requests, node selector, ...); then a minimal
// template that derives back to them is written, so nothing is lost.
json PodTemplateJson(const v1::PodSet& pod_set) {
  if (std::optional<json> carried = internal::PodSetTemplateJson(pod_set)) {
    return *std::move(carried);
  }
  if (pod_set.requests().empty() && pod_set.node_selector().empty() &&
      pod_set.tolerations().empty() &&
      pod_set.required_node_affinity().empty()) {
    return nullptr;
  }
  json container = {{"name", "main"}};
  if (!pod_set.requests().empty()) {
    json requests = json::object();
    for (const auto& [name, value] : pod_set.requests()) requests[name] = value;
    container["resources"] = {{"requests", std::move(requests)}};
  }
  json spec = {{"containers", json::array({std::move(container)})}};
  PutMap(spec, "nodeSelector", pod_set.node_selector());
  if (!pod_set.tolerations().empty()) {
    json& tolerations = spec["tolerations"] = json::array();
    for (const v1::Toleration& t : pod_set.tolerations()) {
      tolerations.push_back(TolerationJson(t));
    }
  }
  if (!pod_set.required_node_affinity().empty()) {
    json terms = json::array();
    for (const v1::NodeSelectorTerm& term : pod_set.required_node_affinity()) {
      terms.push_back(
          {{"matchExpressions", RequirementsJson(term.match_expressions())}});
    }
    spec["affinity"] = {{"nodeAffinity",
                         {{"requiredDuringSchedulingIgnoredDuringExecution",
                           {{"nodeSelectorTerms", std::move(terms)}}}}}};
  }
  return {{"spec", std::move(spec)}};
}

json WorkloadSpecJson(const v1::WorkloadSpec& s) {
  json spec = json::object();
  PutString(spec, "queueName", s.queue_name());
  json pod_sets = json::array();
  for (const v1::PodSet& pod_set : s.pod_sets()) {
    json item = {{"name", pod_set.name()}, {"count", pod_set.count()}};
    if (pod_set.has_min_count()) item["minCount"] = pod_set.min_count();
    json tmpl = PodTemplateJson(pod_set);
    if (!tmpl.is_null()) item["template"] = std::move(tmpl);
    pod_sets.push_back(std::move(item));
  }
  if (!pod_sets.empty()) spec["podSets"] = std::move(pod_sets);
  PutString(spec, "priorityClassName", s.priority_class_name());
  PutString(spec, "priorityClassSource", s.priority_class_source());
  if (s.priority() != 0 || !s.priority_class_name().empty()) {
    spec["priority"] = s.priority();
  }
  if (s.has_active()) spec["active"] = s.active();
  if (s.has_maximum_execution_time_seconds()) {
    spec["maximumExecutionTimeSeconds"] = s.maximum_execution_time_seconds();
  }
  return spec;
}

json WorkloadStatusJson(const v1::WorkloadStatus& s) {
  json status = json::object();
  if (s.has_admission()) {
    json admission = json::object();
    PutString(admission, "clusterQueue", s.admission().cluster_queue());
    json assignments = json::array();
    for (const v1::PodSetAssignment& a : s.admission().pod_set_assignments()) {
      json item = {{"name", a.name()}, {"count", a.count()}};
      PutMap(item, "flavors", a.flavors());
      PutMap(item, "resourceUsage", a.resource_usage());
      assignments.push_back(std::move(item));
    }
    if (!assignments.empty()) {
      admission["podSetAssignments"] = std::move(assignments);
    }
    status["admission"] = std::move(admission);
  }
  if (!s.conditions().empty()) {
    status["conditions"] = ConditionsJson(s.conditions());
  }
  if (!s.admission_checks().empty()) {
    json checks = json::array();
    for (const v1::AdmissionCheckState& c : s.admission_checks()) {
      json item = {{"name", c.name()}, {"state", c.state()}};
      if (c.has_last_transition_time()) {
        item["lastTransitionTime"] = FormatTimestamp(c.last_transition_time());
      }
      PutString(item, "message", c.message());
      if (!c.pod_set_updates().empty()) {
        json& updates = item["podSetUpdates"] = json::array();
        for (const v1::PodSetUpdate& update : c.pod_set_updates()) {
          updates.push_back(PodSetUpdateJson(update));
        }
      }
      checks.push_back(std::move(item));
    }
    status["admissionChecks"] = std::move(checks);
  }
  if (s.has_requeue_state()) {
    json requeue = json::object();
    if (s.requeue_state().has_count()) {
      requeue["count"] = s.requeue_state().count();
    }
    if (s.requeue_state().has_requeue_at()) {
      requeue["requeueAt"] = FormatTimestamp(s.requeue_state().requeue_at());
    }
    status["requeueState"] = std::move(requeue);
  }
  if (!s.reclaimable_pods().empty()) {
    json pods = json::array();
    for (const v1::ReclaimablePod& p : s.reclaimable_pods()) {
      pods.push_back({{"name", p.name()}, {"count", p.count()}});
    }
    status["reclaimablePods"] = std::move(pods);
  }
  // MultiKueue (a manager's workload).
  if (!s.nominated_cluster_names().empty()) {
    status["nominatedClusterNames"] =
        json(std::vector<std::string>(s.nominated_cluster_names().begin(),
                                      s.nominated_cluster_names().end()));
  }
  if (s.has_cluster_name()) status["clusterName"] = s.cluster_name();
  return status;
}

}  // namespace

nlohmann::json ToKueueJson(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kNamespace:
      return NamespaceJson(object.namespace_());
    case v1::ConfigObject::kResourceFlavor:
      return ResourceFlavorJson(object.resource_flavor());
    case v1::ConfigObject::kClusterQueue:
      return ClusterQueueJson(object.cluster_queue());
    case v1::ConfigObject::kCohort:
      return CohortJson(object.cohort());
    case v1::ConfigObject::kLocalQueue:
      return LocalQueueJson(object.local_queue());
    case v1::ConfigObject::kWorkloadPriorityClass:
      return WorkloadPriorityClassJson(object.workload_priority_class());
    case v1::ConfigObject::kAdmissionCheck:
      return AdmissionCheckJson(object.admission_check());
    case v1::ConfigObject::kProvisioningRequestConfig:
      return ProvisioningRequestConfigJson(
          object.provisioning_request_config());
    case v1::ConfigObject::kMultiKueueConfig:
      return MultiKueueConfigJson(object.multi_kueue_config());
    case v1::ConfigObject::kMultiKueueCluster:
      return MultiKueueClusterJson(object.multi_kueue_cluster());
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return nullptr;
}

nlohmann::json ToKueueJson(const v1::Workload& workload) {
  json out = Header(kKueueV1beta1, "Workload");
  out["metadata"] = MetadataJson(workload.metadata());
  if (workload.has_spec()) out["spec"] = WorkloadSpecJson(workload.spec());
  if (workload.has_status()) {
    out["status"] = WorkloadStatusJson(workload.status());
  }
  return out;
}

nlohmann::json MakeList(std::vector<nlohmann::json> items) {
  json list = Header("v1", "List");
  list["items"] = json::array();
  for (json& item : items) list["items"].push_back(std::move(item));
  return list;
}

}  // namespace kq::manifest
