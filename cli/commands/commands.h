#pragma once

// One function per `kq` verb. Each takes its parsed options and a
// CommandContext, writes to ctx.out / ctx.err and returns the process exit
// code (kExitOk, kExitError or kExitUsage). Argument syntax is checked by
// the command-line layer (cli/app.cc); what depends on values (kinds,
// --request items) is checked here.

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/command.h"

namespace kq::cli {

// The text of one manifest and what to call it in messages.
struct ManifestSource {
  // The path given to -f, or "STDIN" for "-".
  std::string name;
  std::string text;
};

struct ApplyOptions {
  std::vector<ManifestSource> sources;
  // Given to LocalQueues and Workloads that name no namespace.
  std::string namespace_name = "default";
};

// `kq apply -f FILE...`: parses every source with manifest::ParseManifests
// and sends all objects and workloads in ONE ApplyRequest (one
// transaction), then prints one "<resource>/<name> <action>" line per
// result. A document that is invalid (INVALID_ARGUMENT or any code but
// UNIMPLEMENTED) is reported as "error: FILE: document N (Kind name): ..."
// and nothing at all is applied. A document of an unsupported kind
// (UNIMPLEMENTED) is reported the same way, the others are still applied,
// and the exit code is kExitError. Manifest and server warnings go to
// ctx.err as "Warning: <text>".
int RunApply(const ApplyOptions& options, CommandContext& ctx);

struct SubmitOptions {
  // LocalQueue name; required.
  std::string queue;
  std::string namespace_name = "default";
  // Empty: the server generates a name with prefix "wl-".
  std::string name;
  int count = 1;
  // "cpu=8,memory=32Gi,nvidia.com/gpu=1"; per pod.
  std::string requests;
  std::string priority_class;
  std::string pod_set = "main";
};

// Parses --request: comma-separated NAME=QUANTITY items, quantities in
// Kubernetes syntax ("500m", "32Gi", "1e3"). InvalidArgument names the bad
// item (empty item, missing '=', empty name, bad quantity, duplicate).
absl::StatusOr<std::map<std::string, std::string>> ParseRequests(
    absl::string_view flag);

// `kq submit`: builds a one-pod-set Workload, calls SubmitWorkload and
// prints "workload.kueue.x-k8s.io/<name> created", plus "admitted by
// ClusterQueue <cq> on flavors <res>=<flavor>,..." when the server admitted
// it at once. A bad --request is a usage error (kExitUsage).
int RunSubmit(const SubmitOptions& options, CommandContext& ctx);

struct GetOptions {
  // As typed: "cq", "workloads", ...
  std::string kind;
  // Empty lists every object of the kind.
  std::string name;
  std::string namespace_name = "default";
  bool all_namespaces = false;
  // "", "wide", "json", "yaml" or "name".
  std::string output;
};

// `kq get KIND [NAME]`: a kubectl-style table (cli/printers/
// table_printer.h), or Kueue-shaped JSON/YAML (one object for NAME, a List
// otherwise), or "<resource>/<name>" lines. An empty table prints kubectl's
// "No resources found..." to ctx.err and succeeds. Workload listings
// include finished workloads.
int RunGet(const GetOptions& options, CommandContext& ctx);

struct DescribeOptions {
  std::string kind;
  std::string name;
  std::string namespace_name = "default";
};

// `kq describe KIND NAME` (cli/printers/describe_printer.h).
int RunDescribe(const DescribeOptions& options, CommandContext& ctx);

struct WorkloadActionOptions {
  // "[workload] NAME": one or two positional arguments.
  std::vector<std::string> args;
  std::string namespace_name = "default";
  // finish only: record "Failed" instead of "Succeeded".
  bool failed = false;
  // finish only.
  std::string message;
};

// `kq cancel [workload] NAME`: CancelWorkload, then
// "workload.kueue.x-k8s.io/NAME cancelled".
int RunCancel(const WorkloadActionOptions& options, CommandContext& ctx);

// `kq finish [workload] NAME [--failed] [--message M]`: FinishWorkload,
// then "workload.kueue.x-k8s.io/NAME finished".
int RunFinish(const WorkloadActionOptions& options, CommandContext& ctx);

struct DeleteOptions {
  std::string kind;
  std::string name;
  std::string namespace_name = "default";
};

// `kq delete KIND NAME`: Delete (CancelWorkload for workloads, which kq
// keeps as finished records), then "<resource>/NAME deleted".
int RunDelete(const DeleteOptions& options, CommandContext& ctx);

// `kq version`: the client version.
int RunVersion(std::ostream& out);

struct SimulateOptions {
  std::vector<ManifestSource> sources;
  // Passes to run; negative: until a pass changes nothing.
  int passes = -1;
  // "" or "wide" (a table), "json" or "yaml" (a Kueue List of workloads).
  std::string output;
  // Given to LocalQueues and Workloads that name no namespace.
  std::string namespace_name = "default";
};

// Runs the admission core offline on the scenario and prints every workload
// after the passes. Needs no server.
int RunSimulate(const SimulateOptions& options, std::ostream& out,
                std::ostream& err);

}  // namespace kq::cli
