#include "cli/app.h"

#include <cstdint>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/commands/list.h"
#include "cli/suggest.h"

namespace kq::cli {
namespace {

// Reads `path` ("-" is env.in) into a ManifestSource. False, with kubectl's
// message on err, when the file cannot be read.
bool ReadSource(const std::string& path, const Environment& env,
                ManifestSource& source) {
  std::ostringstream text;
  if (path == "-") {
    source.name = "STDIN";
    text << env.in->rdbuf();
  } else {
    source.name = path;
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      *env.err << "error: the path \"" << path << "\" does not exist\n";
      return false;
    }
    text << file.rdbuf();
  }
  source.text = text.str();
  return true;
}

void AddNamespaceOption(CLI::App* command, std::string& ns) {
  command->add_option("-n,--namespace", ns,
                      "Namespace of namespaced objects (default \"default\")");
}

int Run(const std::vector<std::string>& args, const Environment& env) {
  CLI::App app{
      "kq: the command-line client of kqd, Kueue's admission model "
      "as a service",
      "kq"};
  app.require_subcommand(1);
  // Global flags may also follow the subcommand, as with kubectl.
  app.fallthrough();
  std::string server = env.default_server;
  CLI::Option* server_option =
      app.add_option("--server", server,
                     "host:port of kqd (default: $KQ_SERVER, else "
                     "127.0.0.1:7070)");

  std::string ns = "default";

  ApplyOptions apply_options;
  std::vector<std::string> files;
  CLI::App* apply =
      app.add_subcommand("apply", "Create or update objects from manifests");
  apply->add_option("-f,--filename", files, "Manifest file, or - for stdin")
      ->required();
  AddNamespaceOption(apply, ns);

  SubmitOptions submit_options;
  CLI::App* submit = app.add_subcommand("submit", "Submit a workload");
  submit->add_option("--queue", submit_options.queue, "LocalQueue name")
      ->required();
  AddNamespaceOption(submit, ns);
  submit->add_option("--name", submit_options.name,
                     "Workload name (default: generated, wl-...)");
  submit->add_option("--count", submit_options.count, "Number of pods")
      ->check(CLI::NonNegativeNumber);
  submit
      ->add_option("--request", submit_options.requests,
                   "Per-pod requests, e.g. cpu=8,memory=32Gi,nvidia.com/gpu=1")
      ->required();
  submit->add_option("--priority-class", submit_options.priority_class,
                     "WorkloadPriorityClass name");
  submit->add_option("--pod-set", submit_options.pod_set,
                     "Pod set name (default main)");

  GetOptions get_options;
  CLI::App* get = app.add_subcommand("get", "List or show objects");
  get->add_option("kind", get_options.kind,
                  "cq, lq, rf, cohort, wpc, ac, prc, workload, ns")
      ->required();
  get->add_option("name", get_options.name, "Object name");
  AddNamespaceOption(get, ns);
  get->add_flag("-A,--all-namespaces", get_options.all_namespaces,
                "List namespaced objects of every namespace");
  get->add_option("-o,--output", get_options.output, "wide|json|yaml|name");

  ListOptions list_options;
  CLI::App* list = AddListCommand(app, list_options);

  DescribeOptions describe_options;
  CLI::App* describe =
      app.add_subcommand("describe", "Show one object in detail");
  describe->add_option("kind", describe_options.kind, "Object kind")
      ->required();
  describe->add_option("name", describe_options.name, "Object name")
      ->required();
  AddNamespaceOption(describe, ns);

  WorkloadActionOptions cancel_options;
  CLI::App* cancel = app.add_subcommand("cancel", "Cancel a workload");
  cancel->add_option("args", cancel_options.args, "[workload] NAME")
      ->required()
      ->expected(1, 2);
  AddNamespaceOption(cancel, ns);

  WorkloadActionOptions finish_options;
  CLI::App* finish =
      app.add_subcommand("finish", "Report that a workload completed");
  finish->add_option("args", finish_options.args, "[workload] NAME")
      ->required()
      ->expected(1, 2);
  AddNamespaceOption(finish, ns);
  finish->add_flag("--failed", finish_options.failed,
                   "Record a failure instead of a success");
  finish->add_option("--message", finish_options.message, "Why it finished");

  DeleteOptions delete_options;
  CLI::App* del = app.add_subcommand("delete", "Delete an object");
  del->add_option("kind", delete_options.kind, "Object kind")->required();
  del->add_option("name", delete_options.name, "Object name")->required();
  AddNamespaceOption(del, ns);

  CLI::App* version = app.add_subcommand("version", "Print the kq version");

  SimulateOptions simulate_options;
  std::vector<std::string> scenario_files;
  std::string simulate_server;
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "Run Kueue's admission rules offline on a scenario, or (--server) ask "
      "kqd whether workloads would be admitted now");
  simulate->add_option("-f,--filename", scenario_files,
                       "Scenario file, or - (with --server: workloads)");
  CLI::Option* simulate_live =
      simulate
          ->add_option("--server", simulate_server,
                       "Dry-run against kqd's live state (optionally at "
                       "host:port) instead of offline")
          ->expected(0, 1);
  simulate->add_option("--passes", simulate_options.passes,
                       "Scheduling passes to run (default: until nothing "
                       "changes)");
  simulate->add_option("-o,--output", simulate_options.output,
                       "wide|json|yaml");
  simulate
      ->add_option("--request", simulate_options.requests,
                   "--server: per-pod request NAME=QUANTITY (repeatable)")
      ->allow_extra_args(false);
  simulate->add_option("--queue", simulate_options.workload.queue,
                       "--server: LocalQueue of the workload");
  simulate->add_option("--name", simulate_options.workload.name,
                       "--server: workload name");
  simulate
      ->add_option("--count", simulate_options.workload.count,
                   "--server: number of pods")
      ->check(CLI::PositiveNumber);
  simulate->add_option("--priority-class",
                       simulate_options.workload.priority_class,
                       "--server: WorkloadPriorityClass name");
  AddNamespaceOption(simulate, ns);

  RunOptions run_options;
  run_options.workload.queue = "default";
  CLI::App* run = app.add_subcommand(
      "run",
      "Run a local command as a workload: wait for admission, run it while "
      "admitted, stop it when evicted");
  run->footer(
      "kq run submits a one-pod-set workload, waits until kqd admits it "
      "(printing why it waits), then runs COMMAND in its own process group "
      "with KQ_WORKLOAD, KQ_CLUSTER_QUEUE, KQ_FLAVORS and KQ_NODE_LABELS set, "
      "renewing its runner lease every lease/3. When the workload is "
      "evicted (preempted, stopped, ...), COMMAND gets SIGTERM, SIGKILL "
      "after --grace, and kq waits to be admitted again, then starts "
      "COMMAND again from the beginning. When COMMAND exits, the workload "
      "finishes (Succeeded for exit code 0) and kq exits with COMMAND's "
      "code. Ctrl-C stops COMMAND and finishes the workload as Failed "
      "(exit 130); a second Ctrl-C kills it at once.");
  run->add_option("--queue", run_options.workload.queue,
                  "LocalQueue name (default \"default\")");
  AddNamespaceOption(run, ns);
  run->add_option("--name", run_options.workload.name, "Workload name");
  run->add_option("--generate-name", run_options.workload.generate_name,
                  "Workload name prefix, completed by kqd (default run-)");
  run->add_option("--request", run_options.requests,
                  "Per-pod request NAME=QUANTITY, repeatable or "
                  "comma-separated: --request cpu=4 --request memory=8Gi")
      ->allow_extra_args(false);
  run->add_option("--count", run_options.workload.count,
                  "Number of pods (default 1)");
  run->add_option("--priority-class", run_options.workload.priority_class,
                  "WorkloadPriorityClass name");
  run->add_option("--lease", run_options.lease,
                  "Runner lease, renewed every lease/3 (default 30s)");
  run->add_option("--grace", run_options.grace,
                  "Time between SIGTERM and SIGKILL when stopping (default "
                  "30s)");
  run->add_option("command", run_options.command,
                  "-- COMMAND [ARGS...]: what to run");

  WatchOptions watch_options;
  int64_t from_revision = 0;
  CLI::App* watch = app.add_subcommand(
      "watch", "Stream changes: workloads (a table) or events (all kinds)");
  watch->add_option("what", watch_options.what,
                    "workloads (default) or events");
  AddNamespaceOption(watch, ns);
  watch->add_flag("-A,--all-namespaces", watch_options.all_namespaces,
                  "Watch every namespace");
  watch->add_option("--queue", watch_options.queue,
                    "Only workloads of this LocalQueue");
  watch->add_option("--cluster-queue", watch_options.cluster_queue,
                    "Only workloads admitted to this ClusterQueue, and it");
  watch->add_option("-o,--output", watch_options.output, "wide|json|yaml");
  CLI::Option* from_revision_option = watch->add_option(
      "--from-revision", from_revision,
      "Resume after this revision (default: list, then watch from now)");
  watch->add_flag("--watch-only", watch_options.watch_only,
                  "workloads: do not list the current ones first");

  PreemptOptions preempt_options;
  CLI::App* preempt = app.add_subcommand(
      "preempt", "Evict a workload holding quota (it is queued again)");
  preempt->add_option("args", preempt_options.args, "[workload] NAME")
      ->required()
      ->expected(1, 2);
  AddNamespaceOption(preempt, ns);
  preempt->add_option("--reason", preempt_options.reason,
                      "Why; recorded in the Evicted condition");
  preempt->add_flag("--deactivate", preempt_options.deactivate,
                    "Deactivate it (spec.active=false) instead of requeueing");

  StopResumeOptions stop_options;
  CLI::App* stop = app.add_subcommand(
      "stop", "Stop a workload, or a ClusterQueue or LocalQueue (kueuectl)");
  stop->add_option("kind", stop_options.kind,
                   "workload, clusterqueue or localqueue")
      ->required();
  stop->add_option("name", stop_options.name, "Object name")->required();
  AddNamespaceOption(stop, ns);
  stop->add_flag("--keep-already-running", stop_options.keep_already_running,
                 "Queues: keep admitted workloads running (Hold instead of "
                 "HoldAndDrain)");

  StopResumeOptions resume_options;
  CLI::App* resume = app.add_subcommand(
      "resume", "Resume a stopped workload, ClusterQueue or LocalQueue");
  resume
      ->add_option("kind", resume_options.kind,
                   "workload, clusterqueue or localqueue")
      ->required();
  resume->add_option("name", resume_options.name, "Object name")->required();
  AddNamespaceOption(resume, ns);

  std::vector<const char*> argv;
  for (const std::string& arg : args) {
    argv.push_back(arg.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    // --help is a "successful" parse error with exit code 0. Words after
    // `kq run`'s flags are the command to run, put without "--": the hint
    // below says so.
    const bool run_extras =
        run->parsed() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
    if (e.get_exit_code() != 0 && !run_extras &&
        ReportUnknownCommandOrFlag(app, args, *env.err)) {
      return kExitUsage;
    }
    const int code = app.exit(e, *env.out, *env.err);
    if (code != 0 && run_extras) {
      *env.err << "hint: put the command after --: kq run [flags] -- "
                  "COMMAND [ARGS...]\n";
    }
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (version->parsed()) {
    return RunVersion(*env.out);
  }
  if (simulate->parsed()) {
    simulate_options.namespace_name = ns;
    simulate_options.workload.namespace_name = ns;
    simulate_options.live = simulate_live->count() > 0;
    if (!simulate_options.live) {
      if (scenario_files.empty()) {
        return ReportUsage(absl::InvalidArgumentError(
                               "kq simulate needs -f FILE (a scenario), or "
                               "--server to ask kqd"),
                           *env.err);
      }
      if (!simulate_options.requests.empty() ||
          !simulate_options.workload.queue.empty()) {
        return ReportUsage(absl::InvalidArgumentError(
                               "--request and --queue need --server: an "
                               "offline simulation reads its workloads "
                               "from -f"),
                           *env.err);
      }
    }
    for (const std::string& file : scenario_files) {
      ManifestSource source;
      if (!ReadSource(file, env, source)) {
        return kExitError;
      }
      simulate_options.sources.push_back(std::move(source));
    }
    if (!simulate_options.live) {
      return RunSimulate(simulate_options, *env.out, *env.err);
    }
    if (!simulate_server.empty()) {
      server = simulate_server;
    }
  }
  client::Client& client = env.connect(server);
  if (absl::Status connected = client.Connect(env.connect_timeout);
      !connected.ok()) {
    const ServerOrigin origin =
        server_option->count() > 0 || !simulate_server.empty()
            ? ServerOrigin::kFlag
            : env.default_server_origin;
    return ReportUnreachable(server, origin, connected, *env.err);
  }
  CommandContext ctx{
      .client = client, .out = *env.out, .err = *env.err, .now = env.now};
  if (apply->parsed()) {
    apply_options.namespace_name = ns;
    for (const std::string& file : files) {
      ManifestSource source;
      if (!ReadSource(file, env, source)) {
        return kExitError;
      }
      apply_options.sources.push_back(std::move(source));
    }
    return RunApply(apply_options, ctx);
  }
  if (submit->parsed()) {
    submit_options.namespace_name = ns;
    return RunSubmit(submit_options, ctx);
  }
  if (get->parsed()) {
    get_options.namespace_name = ns;
    return RunGet(get_options, ctx);
  }
  if (list->parsed()) {
    return RunList(list_options, ctx);
  }
  if (describe->parsed()) {
    describe_options.namespace_name = ns;
    return RunDescribe(describe_options, ctx);
  }
  if (cancel->parsed()) {
    cancel_options.namespace_name = ns;
    return RunCancel(cancel_options, ctx);
  }
  if (finish->parsed()) {
    finish_options.namespace_name = ns;
    return RunFinish(finish_options, ctx);
  }
  if (del->parsed()) {
    delete_options.namespace_name = ns;
    return RunDelete(delete_options, ctx);
  }
  if (simulate->parsed()) {
    return RunSimulateLive(simulate_options, ctx);
  }
  if (run->parsed()) {
    run_options.workload.namespace_name = ns;
    return RunRun(run_options, ctx);
  }
  if (watch->parsed()) {
    watch_options.namespace_name = ns;
    if (from_revision_option->count() > 0) {
      watch_options.from_revision = from_revision;
    }
    watch_options.clock = env.clock;
    return RunWatch(watch_options, ctx);
  }
  if (preempt->parsed()) {
    preempt_options.namespace_name = ns;
    preempt_options.actor = env.user;
    return RunPreempt(preempt_options, ctx);
  }
  if (stop->parsed()) {
    stop_options.namespace_name = ns;
    return RunStop(stop_options, ctx);
  }
  if (resume->parsed()) {
    resume_options.namespace_name = ns;
    return RunResume(resume_options, ctx);
  }
  *env.err << "error: no command given\n";
  return kExitUsage;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, const Environment& env) {
  // kq code does not throw, but CLI11, yaml-cpp and nlohmann can; none of it
  // may escape the process entry point.
  try {
    return Run(args, env);
  } catch (const std::exception& e) {
    *env.err << "error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace kq::cli
