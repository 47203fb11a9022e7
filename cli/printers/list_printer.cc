#include "cli/printers/list_printer.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "cli/printers/age.h"
#include "cli/printers/format.h"
#include "cli/printers/tab_writer.h"
#include "cli/printers/table_printer.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {
namespace {

using Row = std::vector<std::string>;

// kq-k8s-shim's annotation naming the batch/v1 Job of a workload it made
// (shim/jobs/job_workload.h kJobNameAnnotation; the CLI cannot include the
// shim).
constexpr char kJobNameAnnotation[] = "kq.dev/job-name";

// A table with an optional leading NAMESPACE column.
class Table {
 public:
  Table(bool with_namespace, Row header)
      : with_namespace_(with_namespace),
        writer_(kTableMinWidth, kTablePadding) {
    Add("NAMESPACE", std::move(header));
  }

  void Add(const std::string& namespace_name, Row row) {
    if (with_namespace_) row.insert(row.begin(), namespace_name);
    writer_.AddLine(std::move(row));
  }

  std::string Render() const { return writer_.Render(); }

 private:
  bool with_namespace_;
  TabWriter writer_;
};

void AddWide(bool wide, Row& row, Row extra) {
  if (!wide) return;
  for (std::string& cell : extra) row.push_back(std::move(cell));
}

// How kueuectl prints a Go bool.
std::string Bool(bool value) { return value ? "true" : "false"; }

bool IsTrue(const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
            const std::string& type) {
  const v1::Condition* c = FindCondition(conditions, type);
  return c != nullptr && c->status() == "True";
}

std::string NodeLabels(const v1::ResourceFlavorSpec& spec) {
  std::map<std::string, std::string> sorted(spec.node_labels().begin(),
                                            spec.node_labels().end());
  std::vector<std::string> labels;
  for (const auto& [key, value] : sorted) {
    labels.push_back(absl::StrCat(key, "=", value));
  }
  return absl::StrJoin(labels, ", ");
}

std::string NodeTaints(const v1::ResourceFlavorSpec& spec) {
  std::vector<std::string> taints;
  for (const v1::Taint& taint : spec.node_taints()) {
    taints.push_back(absl::StrCat(taint.key(), taint.value().empty() ? "" : "=",
                                  taint.value(), ":", taint.effect()));
  }
  return absl::StrJoin(taints, ", ");
}

// EXEC TIME: kueuectl's admitted-to-finished (or now) duration.
std::string ExecTime(const v1::Workload& wl, absl::Time now) {
  const auto& conditions = wl.status().conditions();
  const v1::Condition* admitted = FindCondition(conditions, "Admitted");
  if (admitted == nullptr || admitted->status() != "True") return "";
  absl::Time end = now;
  const v1::Condition* finished = FindCondition(conditions, "Finished");
  if (finished != nullptr && finished->status() == "True") {
    end = ToTime(finished->last_transition_time());
  }
  return HumanDuration(end - ToTime(admitted->last_transition_time()));
}

}  // namespace

std::string PrintClusterQueueList(absl::Span<const v1::ConfigObject> objects,
                                  const ListTableOptions& options,
                                  absl::Time now) {
  if (objects.empty()) return "";
  Row header = {"NAME",   "COHORT", "PENDING WORKLOADS", "ADMITTED WORKLOADS",
                "ACTIVE", "AGE"};
  AddWide(options.wide, header, {"STRATEGY", "USAGE"});
  Table table(false, std::move(header));
  for (const v1::ConfigObject& object : objects) {
    const v1::ClusterQueue& cq = object.cluster_queue();
    Row row = {cq.metadata().name(),
               cq.spec().cohort_name(),
               absl::StrCat(cq.status().pending_workloads()),
               absl::StrCat(cq.status().admitted_workloads()),
               Bool(IsTrue(cq.status().conditions(), "Active")),
               FormatAge(cq.metadata().creation_timestamp(), now)};
    const std::string& strategy = cq.spec().queueing_strategy();
    AddWide(options.wide, row,
            {strategy.empty() ? "BestEffortFIFO" : strategy,
             FormatClusterQueueUsage(cq)});
    table.Add("", std::move(row));
  }
  return table.Render();
}

std::string PrintLocalQueueList(absl::Span<const v1::ConfigObject> objects,
                                const ListTableOptions& options,
                                absl::Time now) {
  if (objects.empty()) return "";
  Row header = {"NAME", "CLUSTERQUEUE", "PENDING WORKLOADS",
                "ADMITTED WORKLOADS", "AGE"};
  AddWide(options.wide, header, {"ACTIVE"});
  Table table(options.all_namespaces, std::move(header));
  for (const v1::ConfigObject& object : objects) {
    const v1::LocalQueue& lq = object.local_queue();
    Row row = {lq.metadata().name(), lq.spec().cluster_queue(),
               absl::StrCat(lq.status().pending_workloads()),
               absl::StrCat(lq.status().admitted_workloads()),
               FormatAge(lq.metadata().creation_timestamp(), now)};
    AddWide(options.wide, row,
            {Bool(IsTrue(lq.status().conditions(), "Active"))});
    table.Add(lq.metadata().namespace_(), std::move(row));
  }
  return table.Render();
}

std::string PrintResourceFlavorList(absl::Span<const v1::ConfigObject> objects,
                                    const ListTableOptions& options,
                                    absl::Time now) {
  if (objects.empty()) return "";
  Row header = {"NAME", "NODE LABELS", "AGE"};
  AddWide(options.wide, header, {"NODE TAINTS"});
  Table table(false, std::move(header));
  for (const v1::ConfigObject& object : objects) {
    const v1::ResourceFlavor& rf = object.resource_flavor();
    Row row = {rf.metadata().name(), NodeLabels(rf.spec()),
               FormatAge(rf.metadata().creation_timestamp(), now)};
    AddWide(options.wide, row, {NodeTaints(rf.spec())});
    table.Add("", std::move(row));
  }
  return table.Render();
}

std::string WorkloadClusterQueue(const v1::Workload& workload,
                                 const WorkloadListResources& resources) {
  if (!workload.status().admission().cluster_queue().empty()) {
    return workload.status().admission().cluster_queue();
  }
  auto lq = resources.local_queue_cluster_queues.find(
      {workload.metadata().namespace_(), workload.spec().queue_name()});
  return lq == resources.local_queue_cluster_queues.end() ? "" : lq->second;
}

std::string WorkloadListStatus(const v1::Workload& workload) {
  return absl::AsciiStrToUpper(WorkloadState(workload));
}

std::optional<JobOwner> JobOf(const v1::Workload& workload) {
  const auto& annotations = workload.metadata().annotations();
  auto name = annotations.find(kJobNameAnnotation);
  if (name == annotations.end()) return std::nullopt;
  return JobOwner{"job", name->second};
}

std::string PrintWorkloadList(absl::Span<const v1::Workload> workloads,
                              const WorkloadListResources& resources,
                              const ListTableOptions& options, absl::Time now) {
  if (workloads.empty()) return "";
  // A MultiKueue manager's list says where each workload runs; elsewhere
  // the column would always be empty.
  const bool federated = std::any_of(
      workloads.begin(), workloads.end(), [](const v1::Workload& wl) {
        return wl.status().has_cluster_name() ||
               !wl.status().nominated_cluster_names().empty();
      });
  Row header = {"NAME",         "JOB TYPE", "JOB NAME",          "LOCALQUEUE",
                "CLUSTERQUEUE", "STATUS",   "POSITION IN QUEUE", "EXEC TIME",
                "AGE"};
  if (federated) header.insert(header.begin() + 5, "CLUSTER");
  AddWide(options.wide, header, {"PRIORITY", "REASON"});
  Table table(options.all_namespaces, std::move(header));
  for (const v1::Workload& wl : workloads) {
    const std::optional<JobOwner> job = JobOf(wl);
    std::string position;
    auto p = resources.positions_in_local_queue.find(
        {wl.metadata().namespace_(), wl.metadata().name()});
    if (p != resources.positions_in_local_queue.end()) {
      position = absl::StrCat(p->second);
    }
    Row row = {wl.metadata().name(),
               job.has_value() ? job->type : "",
               job.has_value() ? job->name : "",
               wl.spec().queue_name(),
               WorkloadClusterQueue(wl, resources),
               WorkloadListStatus(wl),
               position,
               ExecTime(wl, now),
               FormatAge(wl.metadata().creation_timestamp(), now)};
    if (federated) {
      // The winner, or the workers still being tried.
      const auto& nominated = wl.status().nominated_cluster_names();
      row.insert(row.begin() + 5,
                 wl.status().has_cluster_name()
                     ? wl.status().cluster_name()
                     : absl::StrJoin(nominated.begin(), nominated.end(), ","));
    }
    const v1::Condition* pending = PendingCondition(wl);
    AddWide(options.wide, row,
            {absl::StrCat(wl.spec().priority()),
             pending == nullptr ? "" : pending->reason()});
    table.Add(wl.metadata().namespace_(), std::move(row));
  }
  return table.Render();
}

}  // namespace kq::cli
