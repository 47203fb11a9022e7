// `kq simulate --server`: QueueService.Simulate, the live dry-run.

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/printers/describe_writer.h"
#include "cli/printers/format.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"

namespace kq::cli {
namespace {

std::string WorkloadName(const v1::Workload& workload) {
  const v1::ObjectMeta& metadata = workload.metadata();
  const std::string& name =
      metadata.name().empty() ? metadata.generate_name() : metadata.name();
  return absl::StrCat(metadata.namespace_(), "/", name);
}

// "workload NS/NAME: admissible" and the details.
std::string DescribeAnswer(const v1::Workload& asked,
                           const v1::SimulateResponse& answer) {
  DescribeWriter w;
  w.Line(0,
         absl::StrCat("workload ", WorkloadName(asked), ": ",
                      answer.admissible() ? "admissible" : "not admissible"));
  const v1::Workload& after = answer.workload();
  if (!after.status().admission().cluster_queue().empty()) {
    w.Field(1, "ClusterQueue", after.status().admission().cluster_queue());
    w.Field(1, "Flavors", FormatPodSetFlavors(after));
  }
  if (!answer.reason().empty()) {
    w.Field(1, "Reason", answer.reason());
  }
  if (!answer.message().empty()) {
    w.Field(1, "Message", answer.message());
  }
  if (!answer.victims().empty()) {
    w.Section(1, "Would Preempt");
    std::vector<std::vector<std::string>> rows;
    for (const v1::PreemptionVictim& victim : answer.victims()) {
      rows.push_back({absl::StrCat(victim.namespace_(), "/", victim.name()),
                      victim.cluster_queue(), victim.reason()});
    }
    w.Table(2, {"WORKLOAD", "CLUSTERQUEUE", "REASON"}, rows);
  }
  return w.Render();
}

nlohmann::json AnswerJson(const v1::SimulateResponse& answer) {
  nlohmann::json json = nlohmann::json::object();
  json["workload"] = manifest::ToKueueJson(answer.workload());
  json["admissible"] = answer.admissible();
  nlohmann::json victims = nlohmann::json::array();
  for (const v1::PreemptionVictim& victim : answer.victims()) {
    victims.push_back({{"namespace", victim.namespace_()},
                       {"name", victim.name()},
                       {"clusterQueue", victim.cluster_queue()},
                       {"reason", victim.reason()}});
  }
  json["victims"] = std::move(victims);
  json["reason"] = answer.reason();
  json["message"] = answer.message();
  return json;
}

}  // namespace

int RunSimulateLive(const SimulateOptions& options, CommandContext& ctx) {
  const std::string& output = options.output;
  if (!output.empty() && output != "wide" && output != "json" &&
      output != "yaml") {
    return ReportUsage(
        absl::InvalidArgumentError(absl::StrCat(
            "unknown output format \"", output, "\": use wide, json or yaml")),
        ctx.err);
  }
  const bool from_flags = options.sources.empty();
  if (!from_flags && !options.requests.empty()) {
    return ReportUsage(absl::InvalidArgumentError(
                           "give either -f FILE or --request/--queue, not "
                           "both"),
                       ctx.err);
  }

  std::vector<v1::Workload> workloads;
  if (from_flags) {
    if (options.requests.empty()) {
      return ReportUsage(
          absl::InvalidArgumentError("kq simulate --server needs -f FILE, or "
                                     "--queue and --request"),
          ctx.err);
    }
    if (options.workload.queue.empty()) {
      return ReportUsage(
          absl::InvalidArgumentError("--queue is required with --request"),
          ctx.err);
    }
    absl::StatusOr<std::map<std::string, std::string>> requests =
        ParseRequests(absl::StrJoin(options.requests, ","));
    if (!requests.ok()) {
      return ReportUsage(requests.status(), ctx.err);
    }
    WorkloadFlags flags = options.workload;
    flags.requests = *std::move(requests);
    if (flags.name.empty()) {
      flags.generate_name = "wl-";
    }
    workloads.push_back(BuildWorkload(flags));
  }
  for (const ManifestSource& source : options.sources) {
    absl::StatusOr<std::vector<manifest::Document>> docs =
        manifest::ParseManifests(source.text);
    if (!docs.ok()) {
      ctx.err << "error: " << source.name << ": " << docs.status().message()
              << "\n";
      return kExitError;
    }
    for (manifest::Document& doc : *docs) {
      const std::string where =
          absl::StrCat(source.name, ": document ", doc.index, " (", doc.kind,
                       " ", doc.name, ")");
      for (const std::string& warning : doc.warnings) {
        ctx.err << "Warning: " << warning << "\n";
      }
      if (!doc.status.ok()) {
        ctx.err << "error: " << where << ": " << doc.status.message() << "\n";
        return kExitError;
      }
      if (!doc.workload.has_value()) {
        ctx.err << "Warning: " << where
                << ": skipped: --server simulates workloads against the live "
                   "state only\n";
        continue;
      }
      if (doc.workload->metadata().namespace_().empty()) {
        doc.workload->mutable_metadata()->set_namespace_(
            options.namespace_name);
      }
      workloads.push_back(*std::move(doc.workload));
    }
  }
  if (workloads.empty()) {
    ctx.err << "error: no workload to simulate\n";
    return kExitError;
  }

  int code = kExitOk;
  std::vector<nlohmann::json> items;
  bool first = true;
  for (const v1::Workload& workload : workloads) {
    v1::SimulateRequest request;
    *request.mutable_workload() = workload;
    absl::StatusOr<v1::SimulateResponse> answer = ctx.client.Simulate(request);
    if (!answer.ok()) {
      ctx.err << "kq: " << absl::StatusCodeToString(answer.status().code())
              << ": workload " << WorkloadName(workload) << ": "
              << answer.status().message() << "\n";
      code = kExitError;
      continue;
    }
    if (output == "json" || output == "yaml") {
      items.push_back(AnswerJson(*answer));
      continue;
    }
    if (!first) {
      ctx.out << "\n";
    }
    first = false;
    ctx.out << DescribeAnswer(workload, *answer);
  }
  if (output == "json" || output == "yaml") {
    nlohmann::json list = manifest::MakeList(std::move(items));
    if (output == "json") {
      ctx.out << list.dump(2, ' ', false,
                           nlohmann::json::error_handler_t::replace)
              << "\n";
    } else {
      ctx.out << manifest::ToYaml(list);
    }
  }
  return code;
}

}  // namespace kq::cli
