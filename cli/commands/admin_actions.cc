// `kq preempt`, `kq stop` and `kq resume`: kueuectl's operator verbs.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {
namespace {

// The kind of `kq stop|resume KIND NAME`; InvalidArgument for a kind the
// verbs do not apply to.
absl::StatusOr<KindInfo> StopResumeKind(const std::string& text,
                                        absl::string_view verb) {
  absl::StatusOr<KindInfo> kind = ResolveKind(text);
  if (!kind.ok()) {
    return kind.status();
  }
  if (kind->kind != Kind::kWorkload && kind->kind != Kind::kClusterQueue &&
      kind->kind != Kind::kLocalQueue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kq ", verb, " works on workload, clusterqueue and localqueue, not \"",
        text, "\""));
  }
  return kind;
}

// SetStopPolicy on a ClusterQueue or LocalQueue.
absl::Status SetStopPolicy(const KindInfo& kind,
                           const StopResumeOptions& options,
                           const std::string& policy, client::Client& client) {
  v1::SetStopPolicyRequest request;
  request.set_kind(kind.name);
  if (kind.namespaced) {
    request.set_namespace_(options.namespace_name);
  }
  request.set_name(options.name);
  request.set_stop_policy(policy);
  return client.SetStopPolicy(request).status();
}

}  // namespace

int RunPreempt(const PreemptOptions& options, CommandContext& ctx) {
  std::string name;
  if (options.args.size() == 1) {
    name = options.args[0];
  } else if (options.args.size() == 2 && IsWorkloadKind(options.args[0])) {
    name = options.args[1];
  } else if (options.args.size() == 2) {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "preempt works on workloads only, got kind \"",
                           options.args[0], "\"")),
                       ctx.err);
  } else {
    return ReportUsage(
        absl::InvalidArgumentError("usage: kq preempt [workload] NAME"),
        ctx.err);
  }
  v1::PreemptRequest request;
  request.set_namespace_(options.namespace_name);
  request.set_name(name);
  request.set_message(options.reason);
  request.set_actor(options.actor.empty() ? "operator" : options.actor);
  request.set_deactivate(options.deactivate);
  absl::StatusOr<v1::Workload> workload = ctx.client.Preempt(request);
  if (!workload.ok()) {
    return ReportError(workload.status(), ctx.err);
  }
  ctx.out << QualifiedName(Kind::kWorkload, name)
          << (options.deactivate ? " deactivated\n" : " preempted\n");
  return kExitOk;
}

int RunStop(const StopResumeOptions& options, CommandContext& ctx) {
  absl::StatusOr<KindInfo> kind = StopResumeKind(options.kind, "stop");
  if (!kind.ok()) {
    return ReportUsage(kind.status(), ctx.err);
  }
  absl::Status status;
  if (kind->kind == Kind::kWorkload) {
    if (options.keep_already_running) {
      return ReportUsage(
          absl::InvalidArgumentError("--keep-already-running applies to "
                                     "clusterqueue and localqueue only"),
          ctx.err);
    }
    status = ctx.client
                 .SetWorkloadActive(options.namespace_name, options.name, false)
                 .status();
  } else {
    status = SetStopPolicy(
        *kind, options, options.keep_already_running ? "Hold" : "HoldAndDrain",
        ctx.client);
  }
  if (!status.ok()) {
    return ReportError(status, ctx.err);
  }
  ctx.out << QualifiedName(kind->kind, options.name) << " stopped\n";
  return kExitOk;
}

int RunResume(const StopResumeOptions& options, CommandContext& ctx) {
  absl::StatusOr<KindInfo> kind = StopResumeKind(options.kind, "resume");
  if (!kind.ok()) {
    return ReportUsage(kind.status(), ctx.err);
  }
  absl::Status status;
  if (kind->kind == Kind::kWorkload) {
    status =
        ctx.client.SetWorkloadActive(options.namespace_name, options.name, true)
            .status();
  } else {
    status = SetStopPolicy(*kind, options, "None", ctx.client);
  }
  if (!status.ok()) {
    return ReportError(status, ctx.err);
  }
  ctx.out << QualifiedName(kind->kind, options.name) << " resumed\n";
  return kExitOk;
}

}  // namespace kq::cli
