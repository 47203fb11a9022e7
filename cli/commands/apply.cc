// `kq apply`.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "kq/v1/admin_service.pb.h"

#include "manifest/manifest.h"
#include "proto/util/config_object.h"

namespace kq::cli {
namespace {

// "document 3 (ClusterQueue cq-a)", naming what the user wrote.
std::string DocumentLabel(const manifest::Document& document) {
  std::string what = document.kind.empty() ? "<no kind>" : document.kind;
  if (!document.name.empty()) {
    absl::StrAppend(&what, " ", document.name);
  }
  return absl::StrCat("document ", document.index, " (", what, ")");
}

// Fills in the namespace of a namespaced object that names none, as
// kubectl does with the current namespace.
void DefaultNamespace(v1::ConfigObject& object, const std::string& ns) {
  if (object.has_local_queue() &&
      object.local_queue().metadata().namespace_().empty()) {
    object.mutable_local_queue()->mutable_metadata()->set_namespace_(ns);
  }
}

void DefaultNamespace(v1::Workload& workload, const std::string& ns) {
  if (workload.metadata().namespace_().empty()) {
    workload.mutable_metadata()->set_namespace_(ns);
  }
}

// "resourceflavor.kueue.x-k8s.io/gpu-a100" for one ApplyResult.
std::string ResultName(const v1::ApplyResult& result) {
  if (result.has_workload()) {
    return QualifiedName(Kind::kWorkload, result.workload().metadata().name());
  }
  absl::StatusOr<Kind> kind = KindOf(result.object());
  if (!kind.ok()) {
    return "<unknown>";
  }
  return QualifiedName(*kind, proto_util::MetaOf(result.object()).name());
}

}  // namespace

int RunApply(const ApplyOptions& options, CommandContext& ctx) {
  // 1. Parse everything first: an invalid document anywhere means nothing
  //    is sent, so a half-applied setup never happens.
  v1::ApplyRequest request;
  bool invalid = false;
  bool unsupported = false;
  for (const ManifestSource& source : options.sources) {
    absl::StatusOr<std::vector<manifest::Document>> documents =
        manifest::ParseManifests(source.text);
    if (!documents.ok()) {
      ctx.err << "error: " << source.name << ": "
              << documents.status().message() << "\n";
      invalid = true;
      continue;
    }
    for (manifest::Document& document : *documents) {
      for (const std::string& warning : document.warnings) {
        ctx.err << "Warning: " << warning << "\n";
      }
      if (!document.status.ok()) {
        ctx.err << "error: " << source.name << ": " << DocumentLabel(document)
                << ": " << document.status.message() << "\n";
        if (absl::IsUnimplemented(document.status)) {
          unsupported = true;
        } else {
          invalid = true;
        }
        continue;
      }
      if (document.config_object.has_value()) {
        DefaultNamespace(*document.config_object, options.namespace_name);
        *request.add_objects() = std::move(*document.config_object);
      } else if (document.workload.has_value()) {
        DefaultNamespace(*document.workload, options.namespace_name);
        *request.add_workloads() = std::move(*document.workload);
      } else if (document.configuration.has_value()) {
        // Like Kueue's, the Configuration is the server's start-up file,
        // not an object in the API.
        ctx.err << "error: " << source.name << ": " << DocumentLabel(document)
                << ": a Kueue Configuration is read by kqd at start "
                   "(kqd --config=FILE), not applied\n";
        unsupported = true;
      }
    }
  }
  if (invalid) {
    return kExitError;
  }
  if (request.objects().empty() && request.workloads().empty()) {
    if (!unsupported) {
      ctx.err << "error: no objects passed to apply\n";
    }
    return kExitError;
  }

  // 2. One transaction for all of it. Only names are printed: the
  //    templates may come back as text, which kqd converts for nothing.
  request.set_template_form(v1::TEMPLATE_FORM_JSON);
  absl::StatusOr<v1::ApplyResponse> response = ctx.client.Apply(request);
  if (!response.ok()) {
    return ReportError(response.status(), ctx.err);
  }

  // 3. Report, kubectl style.
  for (const v1::ApplyResult& result : response->results()) {
    for (const std::string& warning : result.warnings()) {
      ctx.err << "Warning: " << warning << "\n";
    }
    ctx.out << ResultName(result) << " " << result.action() << "\n";
  }
  return unsupported ? kExitError : kExitOk;
}

}  // namespace kq::cli
