// `kq get`.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "cli/printers/table_printer.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"
#include "proto/util/config_object.h"

namespace kq::cli {
namespace {

// What a get fetched: objects of one kind, or workloads.
struct Fetched {
  std::vector<v1::ConfigObject> objects;
  std::vector<v1::Workload> workloads;
};

absl::StatusOr<Fetched> Fetch(const KindInfo& kind, const GetOptions& options,
                              client::Client& client) {
  // Namespaced kinds look in -n, or everywhere with -A; cluster-scoped kinds
  // have no namespace.
  const std::string ns =
      kind.namespaced && !options.all_namespaces ? options.namespace_name : "";
  Fetched fetched;
  if (kind.kind == Kind::kWorkload) {
    if (!options.name.empty()) {
      absl::StatusOr<v1::GetWorkloadResponse> response =
          client.GetWorkload(ns, options.name);
      if (!response.ok()) {
        return response.status();
      }
      fetched.workloads.push_back(response->workload());
      return fetched;
    }
    v1::ListWorkloadsRequest request;
    request.set_namespace_(ns);
    request.set_include_finished(true);
    absl::StatusOr<v1::ListWorkloadsResponse> response =
        client.ListWorkloads(request);
    if (!response.ok()) {
      return response.status();
    }
    fetched.workloads.assign(response->workloads().begin(),
                             response->workloads().end());
    return fetched;
  }
  if (!options.name.empty()) {
    absl::StatusOr<v1::ConfigObject> object =
        client.GetObject(kind.name, ns, options.name);
    if (!object.ok()) {
      return object.status();
    }
    fetched.objects.push_back(*std::move(object));
    return fetched;
  }
  absl::StatusOr<v1::ListObjectsResponse> response =
      client.ListObjects(kind.name, ns);
  if (!response.ok()) {
    return response.status();
  }
  fetched.objects.assign(response->objects().begin(),
                         response->objects().end());
  return fetched;
}

// Kueue-shaped JSON: the object itself for `get KIND NAME`, else a List.
nlohmann::json ToJson(const Fetched& fetched, bool single) {
  std::vector<nlohmann::json> items;
  for (const v1::ConfigObject& object : fetched.objects) {
    items.push_back(manifest::ToKueueJson(object));
  }
  for (const v1::Workload& workload : fetched.workloads) {
    items.push_back(manifest::ToKueueJson(workload));
  }
  if (single && items.size() == 1) {
    return items.front();
  }
  return manifest::MakeList(std::move(items));
}

}  // namespace

int RunGet(const GetOptions& options, CommandContext& ctx) {
  absl::StatusOr<KindInfo> kind = ResolveKind(options.kind);
  if (!kind.ok()) {
    return ReportUsage(kind.status(), ctx.err);
  }
  const std::string& output = options.output;
  if (!output.empty() && output != "wide" && output != "json" &&
      output != "yaml" && output != "name") {
    return ReportUsage(
        absl::InvalidArgumentError("--output must be one of wide, json, "
                                   "yaml, name; got \"" +
                                   output + "\""),
        ctx.err);
  }
  if (options.all_namespaces && !options.name.empty()) {
    return ReportUsage(absl::InvalidArgumentError(
                           "a resource cannot be retrieved by name across "
                           "all namespaces"),
                       ctx.err);
  }

  absl::StatusOr<Fetched> fetched = Fetch(*kind, options, ctx.client);
  if (!fetched.ok()) {
    return ReportError(fetched.status(), ctx.err);
  }

  if (output == "json" || output == "yaml") {
    nlohmann::json json = ToJson(*fetched, !options.name.empty());
    if (output == "json") {
      // Replacing invalid UTF-8 instead of throwing: output must not abort.
      ctx.out << json.dump(2, ' ', false,
                           nlohmann::json::error_handler_t::replace)
              << "\n";
    } else {
      ctx.out << manifest::ToYaml(json);
    }
    return kExitOk;
  }
  if (output == "name") {
    for (const v1::ConfigObject& object : fetched->objects) {
      ctx.out << QualifiedName(kind->kind, proto_util::MetaOf(object).name())
              << "\n";
    }
    for (const v1::Workload& workload : fetched->workloads) {
      ctx.out << QualifiedName(Kind::kWorkload, workload.metadata().name())
              << "\n";
    }
    return kExitOk;
  }

  const TableOptions table_options = {.wide = output == "wide",
                                      .all_namespaces = options.all_namespaces};
  const std::string table =
      kind->kind == Kind::kWorkload
          ? PrintWorkloadTable(fetched->workloads, table_options, ctx.now)
          : PrintObjectTable(kind->kind, fetched->objects, table_options,
                             ctx.now);
  if (table.empty()) {
    ctx.err << NoResourcesFound(kind->kind, options.all_namespaces,
                                options.namespace_name)
            << "\n";
    return kExitOk;
  }
  ctx.out << table;
  return kExitOk;
}

}  // namespace kq::cli
