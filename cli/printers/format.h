#pragma once

// Small renderings shared by the table and describe printers.

#include <string>
#include <vector>

#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {

// The condition of `type`, or nullptr.
const v1::Condition* FindCondition(
    const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
    const std::string& type);

// The status ("True", "False", "Unknown") of the condition of `type`, or ""
// when there is none, as kubectl prints a missing printer-column value.
std::string ConditionStatus(
    const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
    const std::string& type);

// A workload's state, most advanced first as in Kueue: "Finished"
// (Finished=True), "Admitted" (Admitted=True), "QuotaReserved"
// (QuotaReserved=True), otherwise "Pending".
std::string WorkloadState(const v1::Workload& workload);

// Why a workload waits: the QuotaReserved=False condition while it is
// Pending, nullptr otherwise.
const v1::Condition* PendingCondition(const v1::Workload& workload);

// The total of `resource` in `flavor` of a usage list (a queue's
// flavors_reservation or flavors_usage), "0" when absent.
std::string FlavorUsageTotal(
    const google::protobuf::RepeatedPtrField<v1::FlavorUsage>& usage,
    const std::string& flavor, const std::string& resource);

// The resource quotas of `flavor` in the order of `group`'s covered
// resources, then any the flavor lists beyond them (kqd rejects those, but
// printers show what they are given).
std::vector<const v1::ResourceQuota*> QuotasInCoveredOrder(
    const v1::ResourceGroup& group, const v1::FlavorQuotas& flavor);

// "k=v,k2=v2" sorted by key; "<none>" when empty (kubectl's label rendering).
std::string FormatLabels(
    const google::protobuf::Map<std::string, std::string>& labels);

// The flavors of an admitted workload, per pod set:
// "main: cpu=gpu-a100,memory=gpu-a100; workers: cpu=default-cpu", resources
// sorted by name; "" when it holds no admission.
std::string FormatPodSetFlavors(const v1::Workload& workload);

}  // namespace kq::cli
