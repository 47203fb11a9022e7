// `kq cancel`, `kq finish` and `kq delete`.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {
namespace {

// The NAME of "[workload] NAME"; InvalidArgument when the optional first
// argument is not the workload kind or the count is wrong.
absl::StatusOr<std::string> WorkloadName(const std::vector<std::string>& args,
                                         absl::string_view verb) {
  if (args.size() == 1) {
    return args[0];
  }
  if (args.size() == 2 && IsWorkloadKind(args[0])) {
    return args[1];
  }
  if (args.size() == 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        verb, " works on workloads only, got kind \"", args[0], "\""));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("usage: kq ", verb, " [workload] NAME"));
}

}  // namespace

int RunCancel(const WorkloadActionOptions& options, CommandContext& ctx) {
  absl::StatusOr<std::string> name = WorkloadName(options.args, "cancel");
  if (!name.ok()) {
    return ReportUsage(name.status(), ctx.err);
  }
  absl::StatusOr<v1::Workload> workload =
      ctx.client.CancelWorkload(options.namespace_name, *name);
  if (!workload.ok()) {
    return ReportError(workload.status(), ctx.err);
  }
  ctx.out << QualifiedName(Kind::kWorkload, *name) << " cancelled\n";
  return kExitOk;
}

int RunFinish(const WorkloadActionOptions& options, CommandContext& ctx) {
  absl::StatusOr<std::string> name = WorkloadName(options.args, "finish");
  if (!name.ok()) {
    return ReportUsage(name.status(), ctx.err);
  }
  absl::StatusOr<v1::Workload> workload = ctx.client.FinishWorkload(
      options.namespace_name, *name, !options.failed, options.message);
  if (!workload.ok()) {
    return ReportError(workload.status(), ctx.err);
  }
  ctx.out << QualifiedName(Kind::kWorkload, *name) << " finished\n";
  return kExitOk;
}

int RunDelete(const DeleteOptions& options, CommandContext& ctx) {
  absl::StatusOr<KindInfo> kind = ResolveKind(options.kind);
  if (!kind.ok()) {
    return ReportUsage(kind.status(), ctx.err);
  }
  const std::string ns = kind->namespaced ? options.namespace_name : "";
  if (kind->kind == Kind::kWorkload) {
    // kq keeps workloads as records; deleting one means cancelling it.
    absl::StatusOr<v1::Workload> workload =
        ctx.client.CancelWorkload(ns, options.name);
    if (!workload.ok()) {
      return ReportError(workload.status(), ctx.err);
    }
  } else {
    absl::Status status = ctx.client.Delete(kind->name, ns, options.name);
    if (!status.ok()) {
      return ReportError(status, ctx.err);
    }
  }
  ctx.out << QualifiedName(kind->kind, options.name) << " deleted\n";
  return kExitOk;
}

}  // namespace kq::cli
