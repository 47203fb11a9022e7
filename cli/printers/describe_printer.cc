#include "cli/printers/describe_printer.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cli/kinds.h"
#include "cli/printers/age.h"
#include "cli/printers/describe_writer.h"
#include "cli/printers/format.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "proto/util/config_object.h"

namespace kq::cli {
namespace {

constexpr absl::string_view kKueueApiVersion = "kueue.x-k8s.io/v1beta1";

using Rows = std::vector<std::vector<std::string>>;

// One "k=v" line per entry, sorted by key.
std::vector<std::string> KeyValueLines(
    const google::protobuf::Map<std::string, std::string>& map) {
  std::map<std::string, std::string> sorted(map.begin(), map.end());
  std::vector<std::string> lines;
  for (const auto& [key, value] : sorted) {
    lines.push_back(absl::StrCat(key, "=", value));
  }
  return lines;
}

// Name, Namespace, Labels, Annotations, API Version, Kind and Metadata.
void WriteHeader(DescribeWriter& w, const v1::ObjectMeta& metadata,
                 absl::string_view api_version, absl::string_view kind,
                 absl::Time now) {
  w.Field(0, "Name", metadata.name());
  w.Field(0, "Namespace", metadata.namespace_());
  w.MultiField(0, "Labels", KeyValueLines(metadata.labels()));
  w.MultiField(0, "Annotations", KeyValueLines(metadata.annotations()));
  w.Field(0, "API Version", api_version);
  w.Field(0, "Kind", kind);
  w.Section(0, "Metadata");
  std::string created = FormatTimestamp(metadata.creation_timestamp());
  if (metadata.has_creation_timestamp()) {
    absl::StrAppend(&created, " (",
                    FormatAge(metadata.creation_timestamp(), now), " ago)");
  }
  w.Field(1, "Creation Timestamp", created);
  w.Field(1, "Resource Version", absl::StrCat(metadata.revision()));
  if (!metadata.uid().empty()) {
    w.Field(1, "UID", metadata.uid());
  }
}

void WriteConditions(
    DescribeWriter& w, int level,
    const google::protobuf::RepeatedPtrField<v1::Condition>& conditions) {
  if (conditions.empty()) {
    w.Field(level, "Conditions", "<none>");
    return;
  }
  w.Section(level, "Conditions");
  Rows rows;
  for (const v1::Condition& condition : conditions) {
    rows.push_back({condition.type(), condition.status(), condition.reason(),
                    condition.message()});
  }
  w.Table(level + 1, {"Type", "Status", "Reason", "Message"}, rows);
}

std::string OptionalOr(bool has, const std::string& value,
                       const char* fallback) {
  return has ? value : fallback;
}

// "key=value:effect".
std::string FormatTaint(const v1::Taint& taint) {
  std::string out = taint.key();
  if (!taint.value().empty()) {
    absl::StrAppend(&out, "=", taint.value());
  }
  absl::StrAppend(&out, ":", taint.effect());
  return out;
}

// "key=value:effect op=Exists for 300s", the parts that are set.
std::string FormatToleration(const v1::Toleration& toleration) {
  std::vector<std::string> parts;
  std::string match = toleration.key();
  if (!toleration.value().empty()) {
    absl::StrAppend(&match, "=", toleration.value());
  }
  if (!toleration.effect().empty()) {
    absl::StrAppend(&match, ":", toleration.effect());
  }
  if (!match.empty()) {
    parts.push_back(match);
  }
  if (toleration.operator_() == "Exists") {
    parts.push_back("op=Exists");
  }
  if (toleration.has_toleration_seconds()) {
    parts.push_back(absl::StrCat("for ", toleration.toleration_seconds(), "s"));
  }
  return absl::StrJoin(parts, " ");
}

// kubectl's selector syntax: "k=v,key in (a,b),key notin (c),key,!key".
std::string FormatSelector(const v1::LabelSelector& selector) {
  std::vector<std::string> terms = KeyValueLines(selector.match_labels());
  for (const v1::LabelSelectorRequirement& requirement :
       selector.match_expressions()) {
    const std::string values =
        absl::StrCat("(", absl::StrJoin(requirement.values(), ","), ")");
    if (requirement.operator_() == "In") {
      terms.push_back(absl::StrCat(requirement.key(), " in ", values));
    } else if (requirement.operator_() == "NotIn") {
      terms.push_back(absl::StrCat(requirement.key(), " notin ", values));
    } else if (requirement.operator_() == "Exists") {
      terms.push_back(requirement.key());
    } else if (requirement.operator_() == "DoesNotExist") {
      terms.push_back(absl::StrCat("!", requirement.key()));
    } else {
      terms.push_back(absl::StrCat(requirement.key(), " ",
                                   requirement.operator_(), " ", values));
    }
  }
  return absl::StrJoin(terms, ",");
}

// One row per flavor and resource of `groups`: Flavor, Resource, Nominal,
// Borrowing Limit, Lending Limit ("-" when unlimited), then, when `status`
// is given, Reserved and Admitted.
void WriteQuota(
    DescribeWriter& w,
    const google::protobuf::RepeatedPtrField<v1::ResourceGroup>& groups,
    const v1::ClusterQueueStatus* status) {
  if (groups.empty()) {
    w.Field(0, "Quota", "<none>");
    return;
  }
  std::vector<std::string> header = {"Flavor", "Resource", "Nominal",
                                     "Borrowing Limit", "Lending Limit"};
  if (status != nullptr) {
    header.push_back("Reserved");
    header.push_back("Admitted");
  }
  Rows rows;
  for (const v1::ResourceGroup& group : groups) {
    for (const v1::FlavorQuotas& flavor : group.flavors()) {
      for (const v1::ResourceQuota* quota :
           QuotasInCoveredOrder(group, flavor)) {
        std::vector<std::string> row = {
            flavor.name(), quota->name(), quota->nominal_quota(),
            OptionalOr(quota->has_borrowing_limit(), quota->borrowing_limit(),
                       "-"),
            OptionalOr(quota->has_lending_limit(), quota->lending_limit(),
                       "-")};
        if (status != nullptr) {
          row.push_back(FlavorUsageTotal(status->flavors_reservation(),
                                         flavor.name(), quota->name()));
          row.push_back(FlavorUsageTotal(status->flavors_usage(), flavor.name(),
                                         quota->name()));
        }
        rows.push_back(std::move(row));
      }
    }
  }
  w.Section(0, "Quota");
  w.Table(1, header, rows);
}

void WriteFairSharing(DescribeWriter& w, int level,
                      const v1::FairSharing& fair_sharing) {
  if (fair_sharing.has_weight()) {
    w.Field(level, "Fair Sharing Weight", fair_sharing.weight());
  }
}

void DescribeClusterQueue(DescribeWriter& w, const v1::ClusterQueue& cq) {
  const v1::ClusterQueueSpec& spec = cq.spec();
  w.Section(0, "Spec");
  w.Field(1, "Cohort",
          spec.cohort_name().empty() ? "<none>" : spec.cohort_name());
  w.Field(1, "Queueing Strategy",
          spec.queueing_strategy().empty() ? "BestEffortFIFO"
                                           : spec.queueing_strategy());
  std::string selector = "<none> (no namespace may submit)";
  if (spec.has_namespace_selector()) {
    selector = FormatSelector(spec.namespace_selector());
    if (selector.empty()) {
      selector = "<all namespaces>";
    }
  }
  w.Field(1, "Namespace Selector", selector);
  w.Field(1, "Stop Policy",
          spec.stop_policy().empty() ? "None" : spec.stop_policy());
  WriteFairSharing(w, 1, spec.fair_sharing());
  w.Section(1, "Preemption");
  const v1::ClusterQueuePreemption& preemption = spec.preemption();
  auto or_never = [](const std::string& value) {
    return value.empty() ? std::string("Never") : value;
  };
  w.Field(2, "Reclaim Within Cohort",
          or_never(preemption.reclaim_within_cohort()));
  w.Field(2, "Within Cluster Queue",
          or_never(preemption.within_cluster_queue()));
  w.Field(2, "Borrow Within Cohort",
          or_never(preemption.borrow_within_cohort().policy()));
  if (preemption.borrow_within_cohort().has_max_priority_threshold()) {
    w.Field(2, "Max Priority Threshold",
            absl::StrCat(
                preemption.borrow_within_cohort().max_priority_threshold()));
  }
  w.Section(1, "Flavor Fungibility");
  const v1::FlavorFungibility& fungibility = spec.flavor_fungibility();
  w.Field(2, "When Can Borrow",
          fungibility.when_can_borrow().empty()
              ? "MayStopSearch"
              : fungibility.when_can_borrow());
  w.Field(2, "When Can Preempt",
          fungibility.when_can_preempt().empty()
              ? "TryNextFlavor"
              : fungibility.when_can_preempt());
  if (!fungibility.preference().empty()) {
    w.Field(2, "Preference", fungibility.preference());
  }
  std::vector<std::string> checks;
  for (const v1::AdmissionCheckStrategyRule& rule : spec.admission_checks()) {
    checks.push_back(rule.on_flavors().empty()
                         ? rule.name()
                         : absl::StrCat(rule.name(), " (on flavors ",
                                        absl::StrJoin(rule.on_flavors(), ","),
                                        ")"));
  }
  w.MultiField(1, "Admission Checks", checks);
  WriteQuota(w, spec.resource_groups(), &cq.status());
  w.Section(0, "Status");
  w.Field(1, "Pending Workloads",
          absl::StrCat(cq.status().pending_workloads()));
  w.Field(1, "Reserving Workloads",
          absl::StrCat(cq.status().reserving_workloads()));
  w.Field(1, "Admitted Workloads",
          absl::StrCat(cq.status().admitted_workloads()));
  WriteConditions(w, 1, cq.status().conditions());
}

// Flavor / Resource / Reserved / Admitted rows of a LocalQueue's usage.
void WriteLocalQueueUsage(DescribeWriter& w, const v1::LocalQueueStatus& s) {
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto* list : {&s.flavors_reservation(), &s.flavors_usage()}) {
    for (const v1::FlavorUsage& flavor : *list) {
      for (const v1::ResourceUsage& resource : flavor.resources()) {
        keys.insert({flavor.name(), resource.name()});
      }
    }
  }
  if (keys.empty()) {
    w.Field(1, "Usage", "<none>");
    return;
  }
  Rows rows;
  for (const auto& [flavor, resource] : keys) {
    rows.push_back({flavor, resource,
                    FlavorUsageTotal(s.flavors_reservation(), flavor, resource),
                    FlavorUsageTotal(s.flavors_usage(), flavor, resource)});
  }
  w.Section(1, "Usage");
  w.Table(2, {"Flavor", "Resource", "Reserved", "Admitted"}, rows);
}

void DescribeLocalQueue(DescribeWriter& w, const v1::LocalQueue& lq) {
  w.Section(0, "Spec");
  w.Field(1, "Cluster Queue", lq.spec().cluster_queue());
  w.Field(1, "Stop Policy",
          lq.spec().stop_policy().empty() ? "None" : lq.spec().stop_policy());
  WriteFairSharing(w, 1, lq.spec().fair_sharing());
  w.Section(0, "Status");
  w.Field(1, "Pending Workloads",
          absl::StrCat(lq.status().pending_workloads()));
  w.Field(1, "Reserving Workloads",
          absl::StrCat(lq.status().reserving_workloads()));
  w.Field(1, "Admitted Workloads",
          absl::StrCat(lq.status().admitted_workloads()));
  WriteLocalQueueUsage(w, lq.status());
  WriteConditions(w, 1, lq.status().conditions());
}

void DescribeResourceFlavor(DescribeWriter& w, const v1::ResourceFlavor& rf) {
  const v1::ResourceFlavorSpec& spec = rf.spec();
  w.Section(0, "Spec");
  w.MultiField(1, "Node Labels", KeyValueLines(spec.node_labels()));
  std::vector<std::string> taints;
  for (const v1::Taint& taint : spec.node_taints()) {
    taints.push_back(FormatTaint(taint));
  }
  w.MultiField(1, "Node Taints", taints);
  std::vector<std::string> tolerations;
  for (const v1::Toleration& toleration : spec.tolerations()) {
    tolerations.push_back(FormatToleration(toleration));
  }
  w.MultiField(1, "Tolerations", tolerations);
  if (!spec.topology_name().empty()) {
    w.Field(1, "Topology Name", spec.topology_name());
  }
}

void DescribeCohort(DescribeWriter& w, const v1::Cohort& cohort) {
  w.Section(0, "Spec");
  w.Field(1, "Parent",
          cohort.spec().parent_name().empty() ? "<none>"
                                              : cohort.spec().parent_name());
  WriteFairSharing(w, 1, cohort.spec().fair_sharing());
  WriteQuota(w, cohort.spec().resource_groups(), nullptr);
}

void DescribeAdmissionCheck(DescribeWriter& w, const v1::AdmissionCheck& ac) {
  w.Section(0, "Spec");
  w.Field(1, "Controller Name", ac.spec().controller_name());
  if (ac.spec().has_parameters()) {
    w.Section(1, "Parameters");
    w.Field(2, "API Group", ac.spec().parameters().api_group());
    w.Field(2, "Kind", ac.spec().parameters().kind());
    w.Field(2, "Name", ac.spec().parameters().name());
  }
  w.Section(0, "Status");
  WriteConditions(w, 1, ac.status().conditions());
}

void DescribeMultiKueueConfig(DescribeWriter& w,
                              const v1::MultiKueueConfig& config) {
  w.Section(0, "Spec");
  w.MultiField(
      1, "Clusters",
      {config.spec().clusters().begin(), config.spec().clusters().end()});
  w.Field(1, "Quota Management",
          config.spec().quota_management().empty()
              ? "Manual"
              : config.spec().quota_management());
}

void DescribeMultiKueueCluster(DescribeWriter& w,
                               const v1::MultiKueueCluster& cluster) {
  const v1::ClusterSource& source = cluster.spec().cluster_source();
  w.Section(0, "Spec");
  w.Section(1, "Cluster Source");
  if (source.has_kube_config()) {
    w.Section(2, "Kube Config");
    w.Field(3, "Location", source.kube_config().location());
    w.Field(3, "Location Type",
            source.kube_config().location_type().empty()
                ? "Secret"
                : source.kube_config().location_type());
  }
  if (source.has_cluster_profile_ref()) {
    w.Section(2, "Cluster Profile Ref");
    w.Field(3, "Name", source.cluster_profile_ref().name());
  }
  w.Section(0, "Status");
  WriteConditions(w, 1, cluster.status().conditions());
}

void DescribeProvisioningRequestConfig(
    DescribeWriter& w, const v1::ProvisioningRequestConfig& prc) {
  const v1::ProvisioningRequestConfigSpec& spec = prc.spec();
  w.Section(0, "Spec");
  w.Field(1, "Provisioning Class Name", spec.provisioning_class_name());
  w.MultiField(1, "Parameters", KeyValueLines(spec.parameters()));
  w.MultiField(1, "Managed Resources",
               std::vector<std::string>(spec.managed_resources().begin(),
                                        spec.managed_resources().end()));
  if (spec.has_retry_strategy()) {
    const v1::ProvisioningRequestRetryStrategy& retry = spec.retry_strategy();
    w.Section(1, "Retry Strategy");
    auto optional = [](bool has, int32_t value) {
      return has ? absl::StrCat(value) : std::string("<unset>");
    };
    w.Field(
        2, "Backoff Limit Count",
        optional(retry.has_backoff_limit_count(), retry.backoff_limit_count()));
    w.Field(2, "Backoff Base Seconds",
            optional(retry.has_backoff_base_seconds(),
                     retry.backoff_base_seconds()));
    w.Field(
        2, "Backoff Max Seconds",
        optional(retry.has_backoff_max_seconds(), retry.backoff_max_seconds()));
  }
  if (!spec.pod_set_updates_node_selector().empty()) {
    w.Section(1, "Pod Set Updates");
    Rows rows;
    for (const v1::ProvisioningRequestPodSetUpdatesNodeSelector& selector :
         spec.pod_set_updates_node_selector()) {
      rows.push_back(
          {selector.key(), selector.value_from_provisioning_class_detail()});
    }
    w.Section(2, "Node Selector");
    w.Table(3, {"Key", "Value From Provisioning Class Detail"}, rows);
  }
  if (!spec.pod_set_merge_policy().empty()) {
    w.Field(1, "Pod Set Merge Policy", spec.pod_set_merge_policy());
  }
}

// The podSetUpdates of the checks that report some, check by check.
void DescribePodSetUpdates(
    DescribeWriter& w,
    const google::protobuf::RepeatedPtrField<v1::AdmissionCheckState>& checks) {
  bool any = false;
  for (const v1::AdmissionCheckState& check : checks) {
    any = any || !check.pod_set_updates().empty();
  }
  if (!any) return;
  w.Section(1, "Pod Set Updates");
  for (const v1::AdmissionCheckState& check : checks) {
    if (check.pod_set_updates().empty()) continue;
    w.Section(2, check.name());
    for (const v1::PodSetUpdate& update : check.pod_set_updates()) {
      w.Section(3, update.name());
      w.MultiField(4, "Labels", KeyValueLines(update.labels()));
      w.MultiField(4, "Annotations", KeyValueLines(update.annotations()));
      w.MultiField(4, "Node Selector", KeyValueLines(update.node_selector()));
      std::vector<std::string> tolerations;
      for (const v1::Toleration& toleration : update.tolerations()) {
        tolerations.push_back(FormatToleration(toleration));
      }
      w.MultiField(4, "Tolerations", tolerations);
    }
  }
}

void DescribePodSets(DescribeWriter& w, const v1::WorkloadSpec& spec) {
  w.Section(1, "Pod Sets");
  for (const v1::PodSet& pod_set : spec.pod_sets()) {
    w.Section(2, pod_set.name());
    w.Field(3, "Count", absl::StrCat(pod_set.count()));
    if (pod_set.has_min_count()) {
      w.Field(3, "Min Count", absl::StrCat(pod_set.min_count()));
    }
    if (!pod_set.node_selector().empty()) {
      w.MultiField(3, "Node Selector", KeyValueLines(pod_set.node_selector()));
    }
    if (!pod_set.tolerations().empty()) {
      std::vector<std::string> tolerations;
      for (const v1::Toleration& toleration : pod_set.tolerations()) {
        tolerations.push_back(FormatToleration(toleration));
      }
      w.MultiField(3, "Tolerations", tolerations);
    }
    if (pod_set.requests().empty()) {
      w.Field(3, "Requests", "<none>");
      continue;
    }
    w.Section(3, "Requests");
    std::map<std::string, std::string> requests(pod_set.requests().begin(),
                                                pod_set.requests().end());
    for (const auto& [resource, quantity] : requests) {
      w.Field(4, resource, quantity);
    }
  }
}

void DescribeAdmission(DescribeWriter& w, const v1::Admission& admission) {
  w.Section(1, "Admission");
  w.Field(2, "Cluster Queue", admission.cluster_queue());
  w.Section(2, "Pod Set Assignments");
  for (const v1::PodSetAssignment& assignment :
       admission.pod_set_assignments()) {
    w.Section(3, assignment.name());
    w.Field(4, "Count", absl::StrCat(assignment.count()));
    std::set<std::string> resources;
    for (const auto& [resource, flavor] : assignment.flavors()) {
      resources.insert(resource);
    }
    for (const auto& [resource, usage] : assignment.resource_usage()) {
      resources.insert(resource);
    }
    Rows rows;
    for (const std::string& resource : resources) {
      auto flavor = assignment.flavors().find(resource);
      auto usage = assignment.resource_usage().find(resource);
      rows.push_back(
          {resource,
           flavor == assignment.flavors().end() ? "-" : flavor->second,
           usage == assignment.resource_usage().end() ? "-" : usage->second});
    }
    w.Section(4, "Resources");
    w.Table(5, {"Resource", "Flavor", "Usage"}, rows);
  }
}

}  // namespace

std::string DescribeObject(const v1::ConfigObject& object, absl::Time now) {
  DescribeWriter w;
  absl::StatusOr<Kind> kind = KindOf(object);
  if (!kind.ok()) {
    return "";
  }
  const bool core = *kind == Kind::kNamespace;
  WriteHeader(w, proto_util::MetaOf(object), core ? "v1" : kKueueApiVersion,
              InfoOf(*kind).name, now);
  switch (*kind) {
    case Kind::kClusterQueue:
      DescribeClusterQueue(w, object.cluster_queue());
      break;
    case Kind::kLocalQueue:
      DescribeLocalQueue(w, object.local_queue());
      break;
    case Kind::kResourceFlavor:
      DescribeResourceFlavor(w, object.resource_flavor());
      break;
    case Kind::kCohort:
      DescribeCohort(w, object.cohort());
      break;
    case Kind::kWorkloadPriorityClass:
      // Kueue keeps these at the top level; align them on their own rather
      // than with the Metadata section above.
      w.Break();
      w.Field(0, "Value",
              absl::StrCat(object.workload_priority_class().value()));
      w.Field(0, "Description", object.workload_priority_class().description());
      break;
    case Kind::kAdmissionCheck:
      DescribeAdmissionCheck(w, object.admission_check());
      break;
    case Kind::kProvisioningRequestConfig:
      DescribeProvisioningRequestConfig(w,
                                        object.provisioning_request_config());
      break;
    case Kind::kMultiKueueConfig:
      DescribeMultiKueueConfig(w, object.multi_kueue_config());
      break;
    case Kind::kMultiKueueCluster:
      DescribeMultiKueueCluster(w, object.multi_kueue_cluster());
      break;
    case Kind::kNamespace:
    case Kind::kWorkload:
      break;
  }
  return w.Render();
}

std::string DescribeWorkload(const v1::Workload& workload, absl::Time now) {
  DescribeWriter w;
  WriteHeader(w, workload.metadata(), kKueueApiVersion, "Workload", now);
  const v1::WorkloadSpec& spec = workload.spec();
  w.Section(0, "Spec");
  w.Field(1, "Queue", spec.queue_name());
  if (!spec.priority_class_name().empty()) {
    w.Field(1, "Priority Class", spec.priority_class_name());
  }
  w.Field(1, "Priority", absl::StrCat(spec.priority()));
  w.Field(1, "Active", !spec.has_active() || spec.active() ? "true" : "false");
  if (spec.has_maximum_execution_time_seconds()) {
    w.Field(1, "Maximum Execution Time",
            absl::StrCat(spec.maximum_execution_time_seconds(), "s"));
  }
  DescribePodSets(w, spec);

  const v1::WorkloadStatus& status = workload.status();
  w.Section(0, "Status");
  w.Field(1, "State", WorkloadState(workload));
  if (!status.admission().cluster_queue().empty()) {
    DescribeAdmission(w, status.admission());
  }
  if (!status.admission_checks().empty()) {
    w.Section(1, "Admission Checks");
    Rows rows;
    for (const v1::AdmissionCheckState& check : status.admission_checks()) {
      rows.push_back({check.name(), check.state(), check.message()});
    }
    w.Table(2, {"Name", "State", "Message"}, rows);
    DescribePodSetUpdates(w, status.admission_checks());
  }
  if (status.requeue_state().has_count()) {
    w.Section(1, "Requeue State");
    w.Field(2, "Count", absl::StrCat(status.requeue_state().count()));
    w.Field(2, "Requeue At",
            FormatTimestamp(status.requeue_state().requeue_at()));
  }
  WriteConditions(w, 1, status.conditions());
  if (const v1::Condition* pending = PendingCondition(workload)) {
    w.Line(0, absl::StrCat("Pending: ", pending->reason(), ": ",
                           pending->message()));
  }
  return w.Render();
}

std::string DescribeExplanation(const v1::ExplainResponse& explanation,
                                absl::Time now) {
  DescribeWriter w;
  w.Section(0, "Explain");
  w.Field(1, "State", explanation.state());
  if (!explanation.cluster_queue().empty()) {
    w.Field(1, "ClusterQueue", explanation.cluster_queue());
  }
  if (!explanation.reason().empty()) {
    w.Field(1, "Reason", explanation.reason());
  }
  if (!explanation.message().empty()) {
    w.Field(1, "Message", explanation.message());
  }
  if (explanation.has_position_in_cluster_queue()) {
    w.Field(1, "Position In ClusterQueue",
            absl::StrCat(explanation.position_in_cluster_queue()));
  }
  if (explanation.has_position_in_local_queue()) {
    w.Field(1, "Position In LocalQueue",
            absl::StrCat(explanation.position_in_local_queue()));
  }
  if (explanation.has_estimated_start_time()) {
    std::string start = FormatTimestamp(explanation.estimated_start_time());
    const absl::Duration until =
        ToTime(explanation.estimated_start_time()) - now;
    if (until > absl::ZeroDuration()) {
      absl::StrAppend(&start, " (in ", HumanDuration(until), ")");
    }
    w.Field(1, "Estimated Start", start);
  }
  if (explanation.admissions_per_minute() > 0) {
    w.Field(1, "Admission Rate",
            absl::StrFormat("%.2f per minute",
                            explanation.admissions_per_minute()));
  }
  if (!explanation.attempts().empty()) {
    w.Section(1, "Flavor Attempts");
    for (const v1::FlavorAttempt& attempt : explanation.attempts()) {
      w.Section(
          2, attempt.flavor().empty()
                 ? absl::StrCat(attempt.pod_set(), " (no flavor)")
                 : absl::StrCat(attempt.pod_set(), " on ", attempt.flavor()));
      w.Field(3, "Mode", attempt.mode());
      if (!attempt.reasons().empty()) {
        w.MultiField(3, "Reasons",
                     std::vector<std::string>(attempt.reasons().begin(),
                                              attempt.reasons().end()));
      }
      if (!attempt.shortages().empty()) {
        Rows rows;
        for (const v1::ResourceShortage& shortage : attempt.shortages()) {
          rows.push_back({shortage.resource(), shortage.requested(),
                          shortage.available(), shortage.nominal_quota(),
                          OptionalOr(shortage.has_borrowing_limit(),
                                     shortage.borrowing_limit(), "-")});
        }
        w.Table(3,
                {"RESOURCE", "REQUESTED", "AVAILABLE", "NOMINAL",
                 "BORROWING-LIMIT"},
                rows);
      }
    }
  }
  if (!explanation.victims().empty()) {
    w.Section(1, "Would Preempt");
    Rows rows;
    for (const v1::PreemptionVictim& victim : explanation.victims()) {
      rows.push_back({absl::StrCat(victim.namespace_(), "/", victim.name()),
                      victim.cluster_queue(), victim.reason()});
    }
    w.Table(2, {"WORKLOAD", "CLUSTERQUEUE", "REASON"}, rows);
  }
  const v1::WorkloadStatus& status = explanation.workload().status();
  if (!explanation.multikueue_copies().empty() || status.has_cluster_name() ||
      !status.nominated_cluster_names().empty()) {
    // Where it runs, since when, and why not elsewhere.
    w.Section(1, "MultiKueue");
    if (status.has_cluster_name()) {
      std::string since;
      for (const v1::AdmissionCheckState& check : status.admission_checks()) {
        if (check.state() == "Ready" && check.has_last_transition_time()) {
          since = absl::StrCat(
              " (since ", FormatTimestamp(check.last_transition_time()), ")");
        }
      }
      w.Field(2, "Cluster", absl::StrCat(status.cluster_name(), since));
    }
    if (!status.nominated_cluster_names().empty()) {
      w.Field(2, "Nominated",
              absl::StrJoin(status.nominated_cluster_names(), ", "));
    }
    if (status.multikueue().epoch() > 0) {
      w.Field(2, "Dispatch Epoch", absl::StrCat(status.multikueue().epoch()));
    }
    Rows rows;
    for (const v1::MultiKueueCopyState& copy :
         explanation.multikueue_copies()) {
      std::string state = "-";
      if (copy.present()) {
        state =
            copy.bound() ? absl::StrCat(copy.state(), ", bound") : copy.state();
      } else if (status.has_cluster_name() &&
                 status.cluster_name() != copy.cluster()) {
        state =
            absl::StrCat("no copy (admitted on ", status.cluster_name(), ")");
      } else {
        state = "no copy";
      }
      rows.push_back({copy.cluster(), copy.connected() ? "True" : "False",
                      state, copy.reason(), copy.message()});
    }
    if (!rows.empty()) {
      w.Table(2, {"WORKER", "CONNECTED", "COPY", "REASON", "MESSAGE"}, rows);
    }
  }
  return w.Render();
}

}  // namespace kq::cli
