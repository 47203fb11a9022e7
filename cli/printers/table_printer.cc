#include "cli/printers/table_printer.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "cli/kinds.h"
#include "cli/printers/age.h"
#include "cli/printers/format.h"
#include "cli/printers/tab_writer.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "proto/util/config_object.h"

namespace kq::cli {
namespace {

using Row = std::vector<std::string>;

// A table with an optional leading NAMESPACE column.
class Table {
 public:
  Table(bool with_namespace, Row header)
      : with_namespace_(with_namespace),
        writer_(kTableMinWidth, kTablePadding) {
    if (with_namespace_) {
      header.insert(header.begin(), "NAMESPACE");
    }
    writer_.AddLine(std::move(header));
  }

  void Add(const v1::ObjectMeta& metadata, Row row) {
    if (with_namespace_) {
      row.insert(row.begin(), metadata.namespace_());
    }
    writer_.AddLine(std::move(row));
  }

  std::string Render() const { return writer_.Render(); }

 private:
  bool with_namespace_;
  TabWriter writer_;
};

// Appends `extra` to `row` when `wide`.
void AddWide(bool wide, Row& row, const Row& extra) {
  if (wide) {
    row.insert(row.end(), extra.begin(), extra.end());
  }
}

std::string DefaultIfEmpty(const std::string& value, const char* fallback) {
  return value.empty() ? fallback : value;
}

Row ObjectRow(Kind kind, const v1::ConfigObject& object, bool wide,
              absl::Time now) {
  const v1::ObjectMeta& metadata = proto_util::MetaOf(object);
  const std::string age = FormatAge(metadata.creation_timestamp(), now);
  Row row;
  switch (kind) {
    case Kind::kClusterQueue: {
      const v1::ClusterQueue& cq = object.cluster_queue();
      const v1::ClusterQueueStatus& status = cq.status();
      if (!wide) {
        return {metadata.name(), cq.spec().cohort_name(),
                absl::StrCat(status.pending_workloads())};
      }
      return {metadata.name(),
              cq.spec().cohort_name(),
              DefaultIfEmpty(cq.spec().queueing_strategy(), "BestEffortFIFO"),
              absl::StrCat(status.pending_workloads()),
              absl::StrCat(status.admitted_workloads()),
              ConditionStatus(status.conditions(), "Active"),
              FormatClusterQueueUsage(cq)};
    }
    case Kind::kLocalQueue: {
      const v1::LocalQueue& lq = object.local_queue();
      row = {metadata.name(), lq.spec().cluster_queue(),
             absl::StrCat(lq.status().pending_workloads()),
             absl::StrCat(lq.status().admitted_workloads())};
      AddWide(wide, row, {ConditionStatus(lq.status().conditions(), "Active")});
      return row;
    }
    case Kind::kResourceFlavor:
      row = {metadata.name(), age};
      AddWide(wide, row,
              {FormatLabels(object.resource_flavor().spec().node_labels())});
      return row;
    case Kind::kCohort:
      return {metadata.name(), object.cohort().spec().parent_name(), age};
    case Kind::kWorkloadPriorityClass: {
      const v1::WorkloadPriorityClass& wpc = object.workload_priority_class();
      row = {metadata.name(), absl::StrCat(wpc.value()), age};
      AddWide(wide, row, {wpc.description()});
      return row;
    }
    case Kind::kAdmissionCheck:
      return {metadata.name(),
              object.admission_check().spec().controller_name(), age};
    case Kind::kProvisioningRequestConfig: {
      const v1::ProvisioningRequestConfigSpec& spec =
          object.provisioning_request_config().spec();
      row = {metadata.name(), spec.provisioning_class_name(), age};
      AddWide(wide, row,
              {absl::StrJoin(spec.managed_resources(), ","),
               spec.retry_strategy().has_backoff_limit_count()
                   ? absl::StrCat(spec.retry_strategy().backoff_limit_count())
                   : ""});
      return row;
    }
    case Kind::kMultiKueueConfig:
      row = {metadata.name(), age};
      AddWide(
          wide, row,
          {absl::StrJoin(object.multi_kueue_config().spec().clusters(), ",")});
      return row;
    case Kind::kMultiKueueCluster:
      // Kueue's printer column Connected: the Active condition's status.
      return {metadata.name(),
              ConditionStatus(
                  object.multi_kueue_cluster().status().conditions(), "Active"),
              age};
    case Kind::kNamespace:
    case Kind::kWorkload:
      break;
  }
  return {metadata.name(), age};
}

Row ObjectHeader(Kind kind, bool wide) {
  Row header;
  switch (kind) {
    case Kind::kClusterQueue:
      if (wide) {
        return {"NAME",
                "COHORT",
                "STRATEGY",
                "PENDING WORKLOADS",
                "ADMITTED WORKLOADS",
                "ACTIVE",
                "USAGE"};
      }
      return {"NAME", "COHORT", "PENDING WORKLOADS"};
    case Kind::kLocalQueue:
      header = {"NAME", "CLUSTERQUEUE", "PENDING WORKLOADS",
                "ADMITTED WORKLOADS"};
      AddWide(wide, header, {"ACTIVE"});
      return header;
    case Kind::kResourceFlavor:
      header = {"NAME", "AGE"};
      AddWide(wide, header, {"NODE LABELS"});
      return header;
    case Kind::kCohort:
      return {"NAME", "PARENT", "AGE"};
    case Kind::kWorkloadPriorityClass:
      header = {"NAME", "VALUE", "AGE"};
      AddWide(wide, header, {"DESCRIPTION"});
      return header;
    case Kind::kAdmissionCheck:
      return {"NAME", "CONTROLLER", "AGE"};
    case Kind::kProvisioningRequestConfig:
      header = {"NAME", "PROVISIONING CLASS", "AGE"};
      AddWide(wide, header, {"MANAGED RESOURCES", "BACKOFF LIMIT"});
      return header;
    case Kind::kMultiKueueConfig:
      header = {"NAME", "AGE"};
      AddWide(wide, header, {"CLUSTERS"});
      return header;
    case Kind::kMultiKueueCluster:
      return {"NAME", "CONNECTED", "AGE"};
    case Kind::kNamespace:
    case Kind::kWorkload:
      break;
  }
  return {"NAME", "AGE"};
}

}  // namespace

std::string FormatClusterQueueUsage(const v1::ClusterQueue& cluster_queue) {
  const auto& reservation = cluster_queue.status().flavors_reservation();
  std::vector<std::string> flavors;
  for (const v1::ResourceGroup& group :
       cluster_queue.spec().resource_groups()) {
    for (const v1::FlavorQuotas& flavor : group.flavors()) {
      const std::vector<const v1::ResourceQuota*> quotas =
          QuotasInCoveredOrder(group, flavor);
      std::vector<std::string> parts;
      for (const v1::ResourceQuota* quota : quotas) {
        parts.push_back(absl::StrCat(
            quota->name(), " ",
            FlavorUsageTotal(reservation, flavor.name(), quota->name()), "/",
            quota->nominal_quota()));
      }
      flavors.push_back(
          absl::StrCat(flavor.name(), ": ", absl::StrJoin(parts, ", ")));
    }
  }
  return absl::StrJoin(flavors, "; ");
}

std::string PrintObjectTable(Kind kind,
                             absl::Span<const v1::ConfigObject> objects,
                             const TableOptions& options, absl::Time now) {
  if (objects.empty()) {
    return "";
  }
  Table table(options.all_namespaces && InfoOf(kind).namespaced,
              ObjectHeader(kind, options.wide));
  for (const v1::ConfigObject& object : objects) {
    table.Add(proto_util::MetaOf(object),
              ObjectRow(kind, object, options.wide, now));
  }
  return table.Render();
}

std::vector<std::string> WorkloadTableHeader(const TableOptions& options) {
  Row header = {"NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"};
  AddWide(options.wide, header, {"PRIORITY", "STATUS", "FLAVORS", "REASON"});
  if (options.all_namespaces) {
    header.insert(header.begin(), "NAMESPACE");
  }
  return header;
}

std::vector<std::string> WorkloadTableRow(const v1::Workload& workload,
                                          const TableOptions& options,
                                          absl::Time now) {
  const auto& conditions = workload.status().conditions();
  Row row = {workload.metadata().name(),
             workload.spec().queue_name(),
             workload.status().admission().cluster_queue(),
             ConditionStatus(conditions, "Admitted"),
             ConditionStatus(conditions, "Finished"),
             FormatAge(workload.metadata().creation_timestamp(), now)};
  const v1::Condition* pending = PendingCondition(workload);
  AddWide(options.wide, row,
          {absl::StrCat(workload.spec().priority()), WorkloadState(workload),
           FormatPodSetFlavors(workload),
           pending == nullptr ? "" : pending->reason()});
  if (options.all_namespaces) {
    row.insert(row.begin(), workload.metadata().namespace_());
  }
  return row;
}

std::string PrintWorkloadTable(absl::Span<const v1::Workload> workloads,
                               const TableOptions& options, absl::Time now) {
  if (workloads.empty()) {
    return "";
  }
  TabWriter writer(kTableMinWidth, kTablePadding);
  writer.AddLine(WorkloadTableHeader(options));
  for (const v1::Workload& workload : workloads) {
    writer.AddLine(WorkloadTableRow(workload, options, now));
  }
  return writer.Render();
}

std::string NoResourcesFound(Kind kind, bool all_namespaces,
                             absl::string_view namespace_name) {
  if (InfoOf(kind).namespaced && !all_namespaces) {
    return absl::StrCat("No resources found in ", namespace_name,
                        " namespace.");
  }
  return "No resources found";
}

}  // namespace kq::cli
