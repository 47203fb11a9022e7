// `kq describe`.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "cli/printers/describe_printer.h"
#include "cli/printers/format.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"

namespace kq::cli {

int RunDescribe(const DescribeOptions& options, CommandContext& ctx) {
  absl::StatusOr<KindInfo> kind = ResolveKind(options.kind);
  if (!kind.ok()) {
    return ReportUsage(kind.status(), ctx.err);
  }
  const std::string ns = kind->namespaced ? options.namespace_name : "";
  if (kind->kind == Kind::kWorkload) {
    absl::StatusOr<v1::GetWorkloadResponse> response =
        ctx.client.GetWorkload(ns, options.name);
    if (!response.ok()) {
      return ReportError(response.status(), ctx.err);
    }
    ctx.out << DescribeWorkload(response->workload(), ctx.now);
    if (WorkloadState(response->workload()) == "Finished") {
      return kExitOk;
    }
    absl::StatusOr<v1::ExplainResponse> explanation =
        ctx.client.Explain(ns, options.name);
    if (explanation.ok()) {
      ctx.out << DescribeExplanation(*explanation, ctx.now);
    } else if (explanation.status().code() !=
               absl::StatusCode::kFailedPrecondition) {
      // FAILED_PRECONDITION: it finished since GetWorkload; nothing to
      // explain.
      ctx.err << "Warning: cannot explain workload " << options.name << ": "
              << absl::StatusCodeToString(explanation.status().code()) << ": "
              << explanation.status().message() << "\n";
    }
    return kExitOk;
  }
  absl::StatusOr<v1::ConfigObject> object =
      ctx.client.GetObject(kind->name, ns, options.name);
  if (!object.ok()) {
    return ReportError(object.status(), ctx.err);
  }
  ctx.out << DescribeObject(*object, ctx.now);
  return kExitOk;
}

}  // namespace kq::cli
