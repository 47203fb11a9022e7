// `kq simulate`: the admission core offline on a scenario file. This is the
// one command that links kq's server core (server/simulator, server/codec)
// into the CLI: running the core without a server is its purpose.

#include <sstream>

#include "absl/strings/str_cat.h"
#include "cli/commands/commands.h"
#include "cli/printers/table_printer.h"

#include "manifest/manifest.h"
#include "server/codec/codec.h"
#include "server/simulator/simulator.h"

namespace kq::cli {
namespace {

std::string DocumentName(const ManifestSource& source,
                         const manifest::Document& doc) {
  std::string name = doc.name;
  if (!doc.namespace_name.empty()) name = doc.namespace_name + "/" + name;
  return absl::StrCat(source.name, ": document ", doc.index, " (", doc.kind,
                      " ", name, ")");
}

bool IsKueueConfiguration(const manifest::Document& doc) {
  return doc.kind == "Configuration" &&
         doc.api_version.rfind("config.kueue.x-k8s.io/", 0) == 0;
}

}  // namespace

int RunSimulate(const SimulateOptions& options, std::ostream& out,
                std::ostream& err) {
  if (!options.output.empty() && options.output != "wide" &&
      options.output != "json" && options.output != "yaml") {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "unknown output format \"", options.output,
                           "\": use wide, json or yaml")),
                       err);
  }
  simulator::Scenario scenario;
  int configurations = 0;
  for (const ManifestSource& source : options.sources) {
    absl::StatusOr<std::vector<manifest::Document>> docs =
        manifest::ParseManifests(source.text);
    if (!docs.ok()) {
      err << "error: " << source.name << ": " << docs.status().message()
          << "\n";
      return kExitError;
    }
    for (manifest::Document& doc : *docs) {
      for (const std::string& warning : doc.warnings) {
        err << "Warning: " << warning << "\n";
      }
      if (doc.configuration.has_value() || IsKueueConfiguration(doc)) {
        if (++configurations > 1) {
          err << "error: " << DocumentName(source, doc)
              << ": at most one Kueue Configuration per scenario\n";
          return kExitError;
        }
      }
      if (!doc.status.ok()) {
        err << "error: " << DocumentName(source, doc) << ": "
            << doc.status.message() << "\n";
        return kExitError;
      }
      if (doc.configuration.has_value()) {
        absl::StatusOr<Configuration> configuration =
            codec::FromProto(*doc.configuration);
        if (!configuration.ok()) {
          err << "error: " << DocumentName(source, doc) << ": "
              << configuration.status().message() << "\n";
          return kExitError;
        }
        scenario.configuration = *std::move(configuration);
        continue;
      }
      if (doc.config_object.has_value()) {
        absl::StatusOr<ConfigObject> object =
            codec::FromProto(*doc.config_object);
        if (!object.ok()) {
          err << "error: " << DocumentName(source, doc) << ": "
              << object.status().message() << "\n";
          return kExitError;
        }
        ObjectMeta& meta = MutableMetaOf(*object);
        if (IsNamespaced(KindOf(*object)) && meta.namespace_name.empty()) {
          meta.namespace_name = options.namespace_name;
        }
        scenario.objects.push_back(*std::move(object));
      } else if (doc.workload.has_value()) {
        absl::StatusOr<Workload> wl = codec::FromClientProto(*doc.workload);
        if (!wl.ok()) {
          err << "error: " << DocumentName(source, doc) << ": "
              << wl.status().message() << "\n";
          return kExitError;
        }
        if (wl->meta.namespace_name.empty()) {
          wl->meta.namespace_name = options.namespace_name;
        }
        if (wl->meta.name.empty()) {
          err << "error: " << DocumentName(source, doc)
              << ": metadata.name: a scenario workload needs a name "
                 "(generateName is not deterministic)\n";
          return kExitError;
        }
        scenario.workloads.push_back(*std::move(wl));
      }
    }
  }

  simulator::Options sim_options;
  sim_options.passes = options.passes;
  absl::StatusOr<simulator::Result> result =
      simulator::Simulate(std::move(scenario), sim_options);
  if (!result.ok()) return ReportError(result.status(), err);

  std::vector<v1::Workload> workloads;
  for (const Workload& wl : result->workloads) {
    workloads.push_back(codec::ToProto(wl));
  }
  if (options.output == "json" || options.output == "yaml") {
    std::vector<nlohmann::json> items;
    for (const v1::Workload& wl : workloads) {
      items.push_back(manifest::ToKueueJson(wl));
    }
    nlohmann::json list = manifest::MakeList(std::move(items));
    if (options.output == "json") {
      out << list.dump(2) << "\n";
    } else {
      out << manifest::ToYaml(list);
    }
    return kExitOk;
  }
  TableOptions table{.wide = true, .all_namespaces = true};
  absl::Time now = absl::UnixEpoch();
  for (const Workload& wl : result->workloads) {
    now = std::max(now, wl.meta.creation_timestamp);
  }
  out << PrintWorkloadTable(workloads, table, now);
  err << result->passes << " pass(es)\n";
  return kExitOk;
}

}  // namespace kq::cli
