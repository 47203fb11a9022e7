#include "cli/printers/watch_printer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cli/kinds.h"
#include "cli/printers/format.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"
#include "proto/util/config_object.h"

namespace kq::cli {
namespace {

// "Reason: message", or the part that is set.
std::string ReasonAndMessage(const v1::Condition& condition) {
  if (condition.message().empty()) {
    return condition.reason();
  }
  if (condition.reason().empty()) {
    return condition.message();
  }
  return absl::StrCat(condition.reason(), ": ", condition.message());
}

std::string StopPolicySuffix(const std::string& policy) {
  if (policy.empty() || policy == "None") {
    return "";
  }
  return absl::StrCat(" stopPolicy=", policy);
}

std::string ObjectSummary(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kClusterQueue: {
      const v1::ClusterQueue& cq = object.cluster_queue();
      return absl::StrCat("pending=", cq.status().pending_workloads(),
                          " reserving=", cq.status().reserving_workloads(),
                          " admitted=", cq.status().admitted_workloads(),
                          StopPolicySuffix(cq.spec().stop_policy()));
    }
    case v1::ConfigObject::kLocalQueue: {
      const v1::LocalQueue& lq = object.local_queue();
      return absl::StrCat("clusterQueue=", lq.spec().cluster_queue(),
                          " pending=", lq.status().pending_workloads(),
                          " reserving=", lq.status().reserving_workloads(),
                          " admitted=", lq.status().admitted_workloads(),
                          StopPolicySuffix(lq.spec().stop_policy()));
    }
    case v1::ConfigObject::kResourceFlavor:
      return absl::StrCat(
          "nodeLabels=",
          FormatLabels(object.resource_flavor().spec().node_labels()));
    case v1::ConfigObject::kCohort:
      if (object.cohort().spec().parent_name().empty()) {
        return "";
      }
      return absl::StrCat("parent=", object.cohort().spec().parent_name());
    case v1::ConfigObject::kWorkloadPriorityClass:
      return absl::StrCat("value=", object.workload_priority_class().value());
    case v1::ConfigObject::kAdmissionCheck:
      return absl::StrCat("controller=",
                          object.admission_check().spec().controller_name());
    case v1::ConfigObject::kProvisioningRequestConfig:
      return absl::StrCat("class=", object.provisioning_request_config()
                                        .spec()
                                        .provisioning_class_name());
    case v1::ConfigObject::kMultiKueueConfig:
      return absl::StrCat(
          "clusters=",
          absl::StrJoin(object.multi_kueue_config().spec().clusters(), ","));
    case v1::ConfigObject::kMultiKueueCluster:
      return absl::StrCat(
          "connected=",
          ConditionStatus(object.multi_kueue_cluster().status().conditions(),
                          "Active"));
    case v1::ConfigObject::kNamespace:
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return "";
}

}  // namespace

std::string WatchEventType(const v1::WatchEvent& event) {
  switch (event.type()) {
    case v1::WatchEvent::ADDED:
      return "ADDED";
    case v1::WatchEvent::MODIFIED:
      return "MODIFIED";
    case v1::WatchEvent::DELETED:
      return "DELETED";
    default:
      return "UNKNOWN";
  }
}

std::string WatchEventKind(const v1::WatchEvent& event) {
  if (event.has_workload()) {
    return "Workload";
  }
  if (event.has_config_object()) {
    absl::StatusOr<Kind> kind = KindOf(event.config_object());
    if (kind.ok()) {
      return InfoOf(*kind).name;
    }
  }
  return "";
}

std::string WatchEventName(const v1::WatchEvent& event) {
  const v1::ObjectMeta& metadata =
      event.has_workload() ? event.workload().metadata()
                           : proto_util::MetaOf(event.config_object());
  if (metadata.namespace_().empty()) {
    return metadata.name();
  }
  return absl::StrCat(metadata.namespace_(), "/", metadata.name());
}

std::string WorkloadSummary(const v1::Workload& workload) {
  const auto& conditions = workload.status().conditions();
  const std::string state = WorkloadState(workload);
  if (state == "Finished") {
    return absl::StrCat(
        "Finished: ", ReasonAndMessage(*FindCondition(conditions, "Finished")));
  }
  const std::string& cluster_queue =
      workload.status().admission().cluster_queue();
  const v1::Condition* evicted = FindCondition(conditions, "Evicted");
  if (!cluster_queue.empty() && evicted != nullptr &&
      evicted->status() == "True") {
    return absl::StrCat("Evicting: ", ReasonAndMessage(*evicted));
  }
  if (state == "Admitted") {
    return absl::StrCat("Admitted by ", cluster_queue, " on ",
                        FormatPodSetFlavors(workload));
  }
  if (state == "QuotaReserved") {
    return absl::StrCat("QuotaReserved in ", cluster_queue,
                        ", admission checks pending");
  }
  if (workload.spec().has_active() && !workload.spec().active()) {
    return "Deactivated";
  }
  if (const v1::Condition* pending = PendingCondition(workload)) {
    return absl::StrCat("Pending: ", pending->message().empty()
                                         ? pending->reason()
                                         : pending->message());
  }
  return "Pending";
}

std::string WatchEventSummary(const v1::WatchEvent& event) {
  if (event.type() == v1::WatchEvent::DELETED) {
    return "deleted";
  }
  if (event.has_workload()) {
    return WorkloadSummary(event.workload());
  }
  return ObjectSummary(event.config_object());
}

nlohmann::json WatchEventObjectJson(const v1::WatchEvent& event) {
  if (event.has_workload()) {
    return manifest::ToKueueJson(event.workload());
  }
  if (event.has_config_object()) {
    return manifest::ToKueueJson(event.config_object());
  }
  return nullptr;
}

nlohmann::json WatchEventJson(const v1::WatchEvent& event) {
  nlohmann::json json = nlohmann::json::object();
  json["type"] = WatchEventType(event);
  json["revision"] = event.revision();
  json["object"] = WatchEventObjectJson(event);
  return json;
}

}  // namespace kq::cli
