#pragma once

// One function per `kq` verb. Each takes its parsed options and a
// CommandContext, writes to ctx.out / ctx.err and returns the process exit
// code (kExitOk, kExitError or kExitUsage). Argument syntax is checked by
// the command-line layer (cli/app.cc); what depends on values (kinds,
// --request items) is checked here.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "kq/v1/workload.pb.h"

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

// What `kq submit`, `kq run` and `kq simulate --server` build a one-pod-set
// Workload from.
struct WorkloadFlags {
  // LocalQueue name.
  std::string queue;
  std::string namespace_name = "default";
  // At most one of name and generate_name is set.
  std::string name;
  std::string generate_name;
  int count = 1;
  // Per pod, already parsed (ParseRequests).
  std::map<std::string, std::string> requests;
  std::string priority_class;
  std::string pod_set = "main";
};

// The Workload of `flags`: metadata, spec.queueName, the priority class
// (source kueue.x-k8s.io/workloadpriorityclass) and one pod set.
v1::Workload BuildWorkload(const WorkloadFlags& flags);

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

// `kq describe KIND NAME` (cli/printers/describe_printer.h). A workload
// that has not finished also gets the "Explain" section of
// QueueService.Explain (DescribeExplanation); when Explain fails for
// another reason than the workload having finished meanwhile, the rest is
// printed and a warning says why.
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
  // -f: scenario files (offline), or files of workloads (--server).
  std::vector<ManifestSource> sources;
  // --server: ask kqd (QueueService.Simulate) instead of simulating
  // offline.
  bool live = false;
  // --server without -f: the workload built from flags (queue, requests).
  std::vector<std::string> requests;
  WorkloadFlags workload;
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

// `kq simulate --server`: the live dry-run of each workload of the sources
// (other documents are skipped with a warning), or of the workload built
// from the flags. Prints per workload whether it would be admitted now, on
// which ClusterQueue and flavors, the workloads it would preempt, or why
// not; -o json|yaml prints a List of {workload, admissible, victims,
// reason, message}. "Not admissible" is an answer, not an error: the exit
// code is kExitOk unless a call or an input fails.
int RunSimulateLive(const SimulateOptions& options, CommandContext& ctx);

struct RunOptions {
  // The workload: --queue (default "default", Kueue's default LocalQueue
  // name), -n, --name or --generate-name (default generate name "run-"),
  // --count, --priority-class.
  WorkloadFlags workload;
  // --request, as given (each NAME=QUANTITY[,...]); at least one.
  std::vector<std::string> requests;
  // --lease and --grace as typed ("30s", "2m").
  std::string lease = "30s";
  std::string grace = "30s";
  // After --: the command and its arguments.
  std::vector<std::string> command;
  // Empty: "<hostname>:<pid>".
  std::string runner_id;
  // How long each Admit call waits (tests shorten it).
  absl::Duration poll = absl::Seconds(5);
  // Install SIGINT/SIGTERM handling (tests call the runner directly).
  bool handle_signals = true;
};

// `kq run [flags] -- COMMAND [ARGS...]` (cli/run/runner.h): submits the
// workload, waits for its admission, runs the command while it holds
// quota, stops it on eviction and runs it again from the start when the
// workload is admitted again. Returns the command's exit code (128 +
// signal when killed), 128 + signal when kq is interrupted (Ctrl-C: 130),
// kExitUsage for bad flags, kExitError when kqd fails or the workload ends
// without running. A second Ctrl-C kills the command at once.
int RunRun(const RunOptions& options, CommandContext& ctx);

struct WatchOptions {
  // "workloads" (a table row per Workload event) or "events" (one line per
  // event of any kind); kubectl's kind spellings are accepted.
  std::string what = "workloads";
  std::string namespace_name = "default";
  bool all_namespaces = false;
  // LocalQueue (needs a namespace) and ClusterQueue filters.
  std::string queue;
  std::string cluster_queue;
  // "", "wide", "json" or "yaml".
  std::string output;
  std::optional<int64_t> from_revision;
  // workloads: skip the initial listing.
  bool watch_only = false;
  // The AGE reference of each row; unset: ctx.now.
  std::function<absl::Time()> clock;
  // Ctrl-C ends the watch with kExitOk (tests leave it off).
  bool handle_signals = true;
};

// `kq watch [workloads|events]`: WatchResumable until interrupted.
// workloads: unless --from-revision or --watch-only, the current workloads
// are listed first (EVENT ADDED) and the watch starts at the list's
// revision, as `kubectl get -w`; each row has the columns of `kq get
// workloads` (wide with -o wide) plus EVENT and REVISION. events: one line
// "REVISION TYPE KIND NAMESPACE/NAME SUMMARY" per event; -n keeps
// cluster-scoped objects and the namespace's workloads. -o json prints one
// {"type","revision","object"} JSON document per line, -o yaml one YAML
// document per event. Each event is flushed as it arrives. OUT_OF_RANGE
// (the revision left kqd's log) is kExitError with a message to list
// again.
int RunWatch(const WatchOptions& options, CommandContext& ctx);

struct PreemptOptions {
  // "[workload] NAME".
  std::vector<std::string> args;
  std::string namespace_name = "default";
  // --reason: recorded in the Evicted condition's message.
  std::string reason;
  bool deactivate = false;
  // Who asks ($USER); empty: "operator".
  std::string actor;
};

// `kq preempt workload NAME`: AdminService.Preempt, then
// "workload.kueue.x-k8s.io/NAME preempted" (or "deactivated").
int RunPreempt(const PreemptOptions& options, CommandContext& ctx);

struct StopResumeOptions {
  // workload, clusterqueue or localqueue (any kubectl spelling).
  std::string kind;
  std::string name;
  std::string namespace_name = "default";
  // stop clusterqueue|localqueue: Hold instead of HoldAndDrain.
  bool keep_already_running = false;
};

// `kq stop KIND NAME`, as kueuectl: a workload is deactivated
// (spec.active=false); a ClusterQueue or LocalQueue gets stopPolicy
// HoldAndDrain (admitted workloads are evicted), or Hold with
// --keep-already-running. Prints "<resource>/NAME stopped".
int RunStop(const StopResumeOptions& options, CommandContext& ctx);

// `kq resume KIND NAME`: spec.active=true, or stopPolicy None. Prints
// "<resource>/NAME resumed".
int RunResume(const StopResumeOptions& options, CommandContext& ctx);

}  // namespace kq::cli
