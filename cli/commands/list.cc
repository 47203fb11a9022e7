// `kq list`.

#include "cli/commands/list.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/kinds.h"
#include "cli/printers/format.h"
#include "cli/printers/list_printer.h"
#include "cli/printers/table_printer.h"
#include "cli/selectors.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"
#include "proto/util/config_object.h"

namespace kq::cli {
namespace {

using ListKind = ListOptions::Kind;

// The most the visibility API lists in one call.
constexpr int64_t kPendingWorkloadsPage = 100'000;

cli::Kind CliKind(ListKind kind) {
  switch (kind) {
    case ListKind::kClusterQueue:
      return cli::Kind::kClusterQueue;
    case ListKind::kLocalQueue:
      return cli::Kind::kLocalQueue;
    case ListKind::kResourceFlavor:
      return cli::Kind::kResourceFlavor;
    case ListKind::kWorkload:
      break;
  }
  return cli::Kind::kWorkload;
}

// The flags' values as single items: repeated, or comma-separated.
std::vector<std::string> Items(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& value : values) {
    for (absl::string_view item : absl::StrSplit(value, ',')) {
      items.emplace_back(item);
    }
  }
  return items;
}

// Go's strconv.ParseBool, which pflag's --active reads with.
absl::StatusOr<bool> ParseBool(const std::string& text) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == t) return true;
  }
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == f) return false;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid argument \"", text,
                   "\" for \"--active\" flag: strconv.ParseBool: parsing \"",
                   text, "\": invalid syntax"));
}

// kueuectl's --status values; an empty set, or one with "all", keeps all.
absl::StatusOr<std::set<std::string>> ParseStatuses(
    const std::vector<std::string>& values) {
  std::set<std::string> statuses;
  for (const std::string& item : Items(values)) {
    const std::string status = absl::AsciiStrToLower(item);
    if (status != "all" && status != "pending" && status != "quotareserved" &&
        status != "admitted" && status != "finished") {
      // kueuectl's message, which leaves out quotareserved.
      return absl::InvalidArgumentError(
          absl::StrCat("invalid status value (", item,
                       "). Must be \"all\", \"pending\", \"admitted\" or "
                       "\"finished\""));
    }
    statuses.insert(status);
  }
  if (statuses.count("all")) statuses.clear();
  return statuses;
}

// --for TYPE[.GROUP]/NAME: the name of the batch/v1 Job whose workloads to
// list. kq knows jobs only through kq-k8s-shim, which runs batch/v1 Jobs.
absl::StatusOr<std::string> ParseForJob(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() > 2) {
    return absl::InvalidArgumentError(
        "arguments in resource/name form may not have more than one slash");
  }
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError("--for must be in resource/name form");
  }
  // kubectl's spellings of batch/v1 jobs: the kind, singular or plural,
  // optionally with the group ("job.batch") or version and group
  // ("jobs.v1.batch").
  const std::string type = absl::AsciiStrToLower(parts[0]);
  for (const char* job : {"job", "jobs"}) {
    for (const char* suffix : {"", ".batch", ".v1.batch"}) {
      if (type == absl::StrCat(job, suffix)) return parts[1];
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--for: kq knows the workloads of batch/v1 Jobs only (job/NAME), not \"",
      parts[0], "\""));
}

// The field selectors Kueue's CRDs support, per kind.
std::vector<std::string> SelectableFields(ListKind kind) {
  std::vector<std::string> fields = {"metadata.name", "metadata.namespace"};
  if (kind == ListKind::kWorkload) {
    fields.push_back("status.admission.clusterQueue");
  }
  return fields;
}

std::string MetaField(const v1::ObjectMeta& meta, const std::string& field) {
  if (field == "metadata.name") return meta.name();
  if (field == "metadata.namespace") return meta.namespace_();
  return "";
}

// -o json|yaml: a v1 List, as `kq get` prints it.
void PrintList(std::vector<nlohmann::json> items, const std::string& output,
               std::ostream& out) {
  const nlohmann::json list = manifest::MakeList(std::move(items));
  if (output == "json") {
    out << list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  } else {
    out << manifest::ToYaml(list);
  }
}

struct Selectors {
  LabelSelector labels;
  FieldSelector fields;
};

// --active: at most one value, as kueuectl's Validate wants.
absl::StatusOr<std::optional<bool>> ParseActive(
    const std::vector<std::string>& flags) {
  const std::vector<std::string> values = Items(flags);
  if (values.size() > 1) {
    return absl::InvalidArgumentError("only one active flag can be provided");
  }
  if (values.empty()) return std::nullopt;
  absl::StatusOr<bool> parsed = ParseBool(values.front());
  if (!parsed.ok()) return parsed.status();
  return *parsed;
}

// The ClusterQueues (those whose Active condition is `active`, when set),
// LocalQueues or ResourceFlavors that pass the filters.
absl::StatusOr<std::vector<v1::ConfigObject>> ListConfigObjects(
    const ListOptions& options, const Selectors& selectors,
    std::optional<bool> active, client::Client& client) {
  const KindInfo& kind = InfoOf(CliKind(options.kind));
  const std::string ns =
      kind.namespaced && !options.all_namespaces ? options.namespace_name : "";
  absl::StatusOr<v1::ListObjectsResponse> listed =
      client.ListObjects(kind.name, ns);
  if (!listed.ok()) return listed.status();
  std::vector<v1::ConfigObject> kept;
  for (const v1::ConfigObject& object : listed->objects()) {
    const v1::ObjectMeta& meta = proto_util::MetaOf(object);
    if (!selectors.labels.Matches(meta.labels())) continue;
    if (!selectors.fields.Matches(
            [&](const std::string& field) { return MetaField(meta, field); })) {
      continue;
    }
    if (active.has_value()) {
      const v1::Condition* c =
          FindCondition(object.cluster_queue().status().conditions(), "Active");
      if ((c != nullptr && c->status() == "True") != *active) continue;
    }
    if (!options.cluster_queue.empty() &&
        object.local_queue().spec().cluster_queue() != options.cluster_queue) {
      continue;
    }
    kept.push_back(object);
  }
  return kept;
}

// The ClusterQueue of every LocalQueue of `ns` ("" for all).
absl::StatusOr<std::map<ObjectName, std::string>> LocalQueueClusterQueues(
    const std::string& ns, client::Client& client) {
  absl::StatusOr<v1::ListObjectsResponse> listed =
      client.ListObjects("LocalQueue", ns);
  if (!listed.ok()) return listed.status();
  std::map<ObjectName, std::string> out;
  for (const v1::ConfigObject& object : listed->objects()) {
    const v1::LocalQueue& lq = object.local_queue();
    out[{lq.metadata().namespace_(), lq.metadata().name()}] =
        lq.spec().cluster_queue();
  }
  return out;
}

// The positionInLocalQueue of the pending `workloads`, from the visibility
// API, one listing per ClusterQueue they wait in. A ClusterQueue gone
// meanwhile gives none, as kueuectl ignores NotFound; a kqd older than the
// API gives none either, with a warning on `err`.
absl::Status FillPositions(const std::vector<v1::Workload>& workloads,
                           WorkloadListResources& resources,
                           client::Client& client, std::ostream& err) {
  std::map<std::string, std::set<ObjectName>> wanted;
  for (const v1::Workload& wl : workloads) {
    if (WorkloadState(wl) != "Pending") continue;
    const std::string cq = WorkloadClusterQueue(wl, resources);
    if (cq.empty()) continue;
    wanted[cq].insert({wl.metadata().namespace_(), wl.metadata().name()});
  }
  for (const auto& [cq, names] : wanted) {
    v1::PendingWorkloadsRequest request;
    request.set_cluster_queue(cq);
    request.set_limit(kPendingWorkloadsPage);
    size_t found = 0;
    while (found < names.size()) {
      absl::StatusOr<v1::PendingWorkloadsResponse> page =
          client.PendingWorkloads(request);
      if (!page.ok()) {
        if (page.status().code() == absl::StatusCode::kNotFound) break;
        if (page.status().code() == absl::StatusCode::kUnimplemented) {
          err << "Warning: kqd does not serve PendingWorkloads; POSITION IN "
                 "QUEUE is left empty\n";
          return absl::OkStatus();
        }
        return page.status();
      }
      for (const v1::PendingWorkload& p : page->items()) {
        const ObjectName key{p.metadata().namespace_(), p.metadata().name()};
        if (!names.count(key)) continue;
        resources.positions_in_local_queue[key] = p.position_in_local_queue();
        ++found;
      }
      if (page->items_size() < kPendingWorkloadsPage) break;
      request.set_offset(request.offset() + kPendingWorkloadsPage);
    }
  }
  return absl::OkStatus();
}

int ListWorkloads(const ListOptions& options, const Selectors& selectors,
                  CommandContext& ctx, const ListTableOptions& table) {
  absl::StatusOr<std::set<std::string>> statuses =
      ParseStatuses(options.statuses);
  if (!statuses.ok()) return ReportUsage(statuses.status(), ctx.err);
  std::optional<std::string> job;
  if (!options.for_object.empty()) {
    absl::StatusOr<std::string> name = ParseForJob(options.for_object);
    if (!name.ok()) return ReportUsage(name.status(), ctx.err);
    job = *name;
  }
  const std::string ns = options.all_namespaces ? "" : options.namespace_name;
  v1::ListWorkloadsRequest request;
  request.set_namespace_(ns);
  request.set_include_finished(true);
  absl::StatusOr<v1::ListWorkloadsResponse> listed =
      ctx.client.ListWorkloads(request);
  if (!listed.ok()) return ReportError(listed.status(), ctx.err);

  WorkloadListResources resources;
  const bool needs_local_queues =
      std::any_of(listed->workloads().begin(), listed->workloads().end(),
                  [](const v1::Workload& wl) {
                    return wl.status().admission().cluster_queue().empty();
                  });
  if (needs_local_queues) {
    absl::StatusOr<std::map<ObjectName, std::string>> lqs =
        LocalQueueClusterQueues(ns, ctx.client);
    if (!lqs.ok()) return ReportError(lqs.status(), ctx.err);
    resources.local_queue_cluster_queues = *std::move(lqs);
  }

  std::vector<v1::Workload> kept;
  for (const v1::Workload& wl : listed->workloads()) {
    const v1::ObjectMeta& meta = wl.metadata();
    if (!selectors.labels.Matches(meta.labels())) continue;
    if (!selectors.fields.Matches([&](const std::string& field) {
          return field == "status.admission.clusterQueue"
                     ? wl.status().admission().cluster_queue()
                     : MetaField(meta, field);
        })) {
      continue;
    }
    if (job.has_value()) {
      const std::optional<JobOwner> owner = JobOf(wl);
      if (!owner.has_value() || owner->name != *job) continue;
    }
    if (!options.local_queue.empty() &&
        wl.spec().queue_name() != options.local_queue) {
      continue;
    }
    if (!options.cluster_queue.empty() &&
        WorkloadClusterQueue(wl, resources) != options.cluster_queue) {
      continue;
    }
    if (!statuses->empty() &&
        !statuses->count(absl::AsciiStrToLower(WorkloadListStatus(wl)))) {
      continue;
    }
    kept.push_back(wl);
  }

  if (options.output == "json" || options.output == "yaml") {
    std::vector<nlohmann::json> items;
    for (const v1::Workload& wl : kept) {
      items.push_back(manifest::ToKueueJson(wl));
    }
    PrintList(std::move(items), options.output, ctx.out);
  } else if (options.output == "name") {
    for (const v1::Workload& wl : kept) {
      ctx.out << QualifiedName(cli::Kind::kWorkload, wl.metadata().name())
              << "\n";
    }
  } else {
    if (absl::Status s = FillPositions(kept, resources, ctx.client, ctx.err);
        !s.ok()) {
      return ReportError(s, ctx.err);
    }
    ctx.out << PrintWorkloadList(kept, resources, table, ctx.now);
  }
  if (kept.empty()) {
    ctx.err << NoResourcesFound(cli::Kind::kWorkload, options.all_namespaces,
                                options.namespace_name)
            << "\n";
  }
  return kExitOk;
}

}  // namespace

CLI::App* AddListCommand(CLI::App& app, ListOptions& options) {
  CLI::App* list = app.add_subcommand(
      "list",
      "List ClusterQueues, LocalQueues, ResourceFlavors or Workloads "
      "(kueuectl's list)");
  list->require_subcommand(1);
  auto add_kind = [&](const char* name, std::vector<const char*> aliases,
                      const char* help, ListKind kind) {
    CLI::App* sub = list->add_subcommand(name, help);
    for (const char* alias : aliases) sub->alias(alias);
    sub->parse_complete_callback([&options, kind] { options.kind = kind; });
    sub->add_option("-l,--selector", options.label_selector,
                    "Selector (label query) to filter on, supports '=', "
                    "'==', '!=', 'in', 'notin' (e.g. -l key1=value1,key2)");
    sub->add_option("--field-selector", options.field_selector,
                    "Selector (field query) to filter on, supports '=', "
                    "'==' and '!=' (metadata.name, metadata.namespace)");
    sub->add_option("-o,--output", options.output, "wide|json|yaml|name");
    return sub;
  };
  auto add_namespaces = [&](CLI::App* sub) {
    sub->add_option("-n,--namespace", options.namespace_name,
                    "Namespace to list (default \"default\")");
    sub->add_flag("-A,--all-namespaces", options.all_namespaces,
                  "List across all namespaces");
  };

  CLI::App* cq = add_kind("clusterqueue", {"cq", "clusterqueues"},
                          "List ClusterQueues", ListKind::kClusterQueue);
  cq->add_option("--active", options.active,
                 "Filter by active status: 'true' or 'false'")
      ->allow_extra_args(false);

  CLI::App* lq = add_kind("localqueue", {"lq", "localqueues"},
                          "List LocalQueues", ListKind::kLocalQueue);
  add_namespaces(lq);
  lq->add_option("-c,--clusterqueue", options.cluster_queue,
                 "Filter by the ClusterQueue of the LocalQueue");

  add_kind("resourceflavor", {"rf", "resourceflavors"}, "List ResourceFlavors",
           ListKind::kResourceFlavor);

  CLI::App* wl = add_kind(
      "workload", {"wl", "workloads", "kwl", "kueueworkload", "kueueworkloads"},
      "List Workloads", ListKind::kWorkload);
  add_namespaces(wl);
  wl->add_option("-c,--clusterqueue", options.cluster_queue,
                 "Filter by the ClusterQueue of the workload");
  wl->add_option("-q,--localqueue", options.local_queue,
                 "Filter by LocalQueue name");
  wl->add_option("--status", options.statuses,
                 "Filter by status: all, pending, quotareserved, admitted or "
                 "finished (repeatable or comma-separated)")
      ->allow_extra_args(false);
  wl->add_option("--for", options.for_object,
                 "Only the workloads of this job: job/NAME (a batch/v1 Job "
                 "run through kq-k8s-shim)");
  return list;
}

int RunList(const ListOptions& options, CommandContext& ctx) {
  const std::string& output = options.output;
  if (!output.empty() && output != "wide" && output != "json" &&
      output != "yaml" && output != "name") {
    return ReportUsage(
        absl::InvalidArgumentError(absl::StrCat(
            "--output must be one of wide, json, yaml, name; got \"", output,
            "\"")),
        ctx.err);
  }
  Selectors selectors;
  absl::StatusOr<LabelSelector> labels =
      LabelSelector::Parse(options.label_selector);
  if (!labels.ok()) return ReportUsage(labels.status(), ctx.err);
  selectors.labels = *std::move(labels);
  absl::StatusOr<FieldSelector> fields = FieldSelector::Parse(
      options.field_selector, SelectableFields(options.kind));
  if (!fields.ok()) return ReportUsage(fields.status(), ctx.err);
  selectors.fields = *std::move(fields);

  const ListTableOptions table{.wide = output == "wide",
                               .all_namespaces = options.all_namespaces};
  if (options.kind == ListKind::kWorkload) {
    return ListWorkloads(options, selectors, ctx, table);
  }
  absl::StatusOr<std::optional<bool>> active = ParseActive(options.active);
  if (!active.ok()) return ReportUsage(active.status(), ctx.err);
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfigObjects(options, selectors, *active, ctx.client);
  if (!objects.ok()) return ReportError(objects.status(), ctx.err);
  const cli::Kind kind = CliKind(options.kind);
  if (output == "json" || output == "yaml") {
    std::vector<nlohmann::json> items;
    for (const v1::ConfigObject& object : *objects) {
      items.push_back(manifest::ToKueueJson(object));
    }
    PrintList(std::move(items), output, ctx.out);
  } else if (output == "name") {
    for (const v1::ConfigObject& object : *objects) {
      ctx.out << QualifiedName(kind, proto_util::MetaOf(object).name()) << "\n";
    }
  } else if (options.kind == ListKind::kClusterQueue) {
    ctx.out << PrintClusterQueueList(*objects, table, ctx.now);
  } else if (options.kind == ListKind::kLocalQueue) {
    ctx.out << PrintLocalQueueList(*objects, table, ctx.now);
  } else {
    ctx.out << PrintResourceFlavorList(*objects, table, ctx.now);
  }
  if (objects->empty()) {
    ctx.err << NoResourcesFound(kind, options.all_namespaces,
                                options.namespace_name)
            << "\n";
  }
  return kExitOk;
}

}  // namespace kq::cli
