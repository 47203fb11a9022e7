#include "cli/printers/format.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {

const v1::Condition* FindCondition(
    const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
    const std::string& type) {
  for (const v1::Condition& condition : conditions) {
    if (condition.type() == type) {
      return &condition;
    }
  }
  return nullptr;
}

std::string ConditionStatus(
    const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
    const std::string& type) {
  const v1::Condition* condition = FindCondition(conditions, type);
  return condition == nullptr ? "" : condition->status();
}

std::string WorkloadState(const v1::Workload& workload) {
  const auto& conditions = workload.status().conditions();
  for (const char* type : {"Finished", "Admitted", "QuotaReserved"}) {
    if (ConditionStatus(conditions, type) == "True") {
      return type;
    }
  }
  return "Pending";
}

const v1::Condition* PendingCondition(const v1::Workload& workload) {
  if (WorkloadState(workload) != "Pending") {
    return nullptr;
  }
  const v1::Condition* condition =
      FindCondition(workload.status().conditions(), "QuotaReserved");
  if (condition == nullptr || condition->status() != "False") {
    return nullptr;
  }
  return condition;
}

std::string FlavorUsageTotal(
    const google::protobuf::RepeatedPtrField<v1::FlavorUsage>& usage,
    const std::string& flavor, const std::string& resource) {
  for (const v1::FlavorUsage& flavor_usage : usage) {
    if (flavor_usage.name() != flavor) {
      continue;
    }
    for (const v1::ResourceUsage& resource_usage : flavor_usage.resources()) {
      if (resource_usage.name() == resource &&
          !resource_usage.total().empty()) {
        return resource_usage.total();
      }
    }
  }
  return "0";
}

std::vector<const v1::ResourceQuota*> QuotasInCoveredOrder(
    const v1::ResourceGroup& group, const v1::FlavorQuotas& flavor) {
  std::vector<const v1::ResourceQuota*> quotas;
  for (const std::string& resource : group.covered_resources()) {
    for (const v1::ResourceQuota& quota : flavor.resources()) {
      if (quota.name() == resource) {
        quotas.push_back(&quota);
      }
    }
  }
  for (const v1::ResourceQuota& quota : flavor.resources()) {
    bool covered = false;
    for (const std::string& resource : group.covered_resources()) {
      covered = covered || resource == quota.name();
    }
    if (!covered) {
      quotas.push_back(&quota);
    }
  }
  return quotas;
}

std::string FormatLabels(
    const google::protobuf::Map<std::string, std::string>& labels) {
  if (labels.empty()) {
    return "<none>";
  }
  // protobuf maps have no defined order.
  std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  return absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

std::string FormatPodSetFlavors(const v1::Workload& workload) {
  std::vector<std::string> pod_sets;
  for (const v1::PodSetAssignment& assignment :
       workload.status().admission().pod_set_assignments()) {
    std::map<std::string, std::string> flavors(assignment.flavors().begin(),
                                               assignment.flavors().end());
    pod_sets.push_back(
        absl::StrCat(assignment.name(), ": ",
                     absl::StrJoin(flavors, ",", absl::PairFormatter("="))));
  }
  return absl::StrJoin(pod_sets, "; ");
}

}  // namespace kq::cli
