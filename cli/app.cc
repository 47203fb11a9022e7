#include "cli/app.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/commands/config.h"
#include "cli/commands/list.h"
#include "cli/kqconfig.h"
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

// `kq config VERB` with a VERB config does not have: kubectl's message
// with the nearest verbs, and true; false (nothing printed) when a verb
// parsed or none was given.
bool ReportUnknownConfigVerb(const CLI::App& config,
                             const std::vector<std::string>& args,
                             std::ostream& err) {
  std::vector<std::string> verbs;
  for (const CLI::App* verb :
       config.get_subcommands([](const CLI::App*) { return true; })) {
    if (verb->parsed()) return false;
    verbs.push_back(verb->get_name());
  }
  auto word = std::find(args.begin(), args.end(), "config");
  if (word != args.end()) ++word;
  while (word != args.end() && word->starts_with("-")) ++word;
  if (word == args.end()) return false;
  err << "error: unknown command \"" << *word << "\" for \"kq config\"\n";
  const std::vector<std::string> near = Suggestions(*word, verbs);
  if (!near.empty()) {
    err << "\nDid you mean this?\n";
    for (const std::string& verb : near) err << "\t" << verb << "\n";
    err << "\n";
  }
  err << "Run 'kq config --help' for usage.\n";
  return true;
}

// What a failed connection says about TLS, as a hint after kubectl's
// message: a plaintext client of a TLS kqd sees its socket closed; a TLS
// client sees the handshake fail, or the certificate name another host; a
// client certificate kqd does not trust closes the socket after the
// client's side of a TLS 1.3 handshake succeeded.
void PrintTlsHint(const client::ClientOptions& options,
                  const absl::Status& status, std::ostream& err) {
  const std::string message = absl::AsciiStrToLower(status.message());
  if (options.tls_ca_file.empty()) {
    if (absl::StrContains(message, "socket closed")) {
      err << "hint: kqd may be serving TLS: give --tls-ca with the CA that "
             "signed its certificate (or use a context that has one)\n";
    }
    return;
  }
  if (absl::StrContains(message, "peer name")) {
    if (options.tls_server_name.empty()) {
      err << "hint: kqd's certificate does not name the host of "
          << options.target
          << ": use a name it carries in --server, or --tls-server-name\n";
    } else {
      err << "hint: kqd's certificate does not name " << options.tls_server_name
          << " (--tls-server-name)\n";
    }
  } else if (absl::StrContains(message, "handshake")) {
    err << "hint: the TLS handshake failed: check that --tls-ca ("
        << options.tls_ca_file
        << ") signed kqd's certificate and that kqd serves TLS\n";
  } else if (absl::StrContains(message, "socket closed") &&
             !options.tls_cert_file.empty()) {
    err << "hint: kqd closed the connection: it may not trust the client "
           "certificate "
        << options.tls_cert_file
        << " (signed by another CA than its --client-ca, or expired)\n";
  }
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
  // The connection: each flag beats $KQ_SERVER / $KQ_TOKEN and the
  // context (cli/kqconfig.h, ResolveConnection).
  struct GlobalFlag {
    const char* name;
    const char* help;
    std::optional<std::string> ConnectionFlags::*field;
    std::string value;
    CLI::Option* option = nullptr;
  };
  GlobalFlag global_flags[] = {
      {"--server",
       "host:port of kqd (default: $KQ_SERVER, else the context's, else "
       "127.0.0.1:7070)",
       &ConnectionFlags::server},
      {"--context",
       "Context of the kq config file to use (default: its current-context)",
       &ConnectionFlags::context},
      {"--tls-ca", "PEM CA file that signed kqd's certificate; turns TLS on",
       &ConnectionFlags::tls_ca},
      {"--cert", "PEM client certificate file (mutual TLS, with --key)",
       &ConnectionFlags::cert},
      {"--key", "PEM private key file of --cert", &ConnectionFlags::key},
      {"--token",
       "Bearer token (a flag shows in ps: prefer --token-file or $KQ_TOKEN)",
       &ConnectionFlags::token},
      {"--token-file", "File holding a bearer token",
       &ConnectionFlags::token_file},
      {"--tls-server-name",
       "Name kqd's certificate carries, if not the server's host",
       &ConnectionFlags::tls_server_name},
  };
  for (GlobalFlag& flag : global_flags) {
    flag.option = app.add_option(flag.name, flag.value, flag.help);
  }

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
                  "cq, lq, rf, cohort, wpc, ac, prc, mkconf, mkc, workload, ns")
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

  ConfigOptions config_options;
  CLI::App* config = AddConfigCommand(app, config_options);

  // CLI11 reads "--flag=" as a flag without its value and takes the next
  // argument instead; kq reads it as kubectl does, an empty value
  // (`kq config set-context x --cert=` removes the certificate). Words
  // after "--" are `kq run`'s command, left alone.
  static const std::string kEmpty;
  std::deque<std::string> flag_names;  // stable addresses
  std::vector<const char*> argv;
  bool command_words = false;
  for (const std::string& arg : args) {
    command_words = command_words || arg == "--";
    if (!command_words && arg.size() > 3 && arg.starts_with("--") &&
        arg.find('=') == arg.size() - 1) {
      flag_names.push_back(arg.substr(0, arg.size() - 1));
      argv.push_back(flag_names.back().c_str());
      argv.push_back(kEmpty.c_str());
      continue;
    }
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
    if (e.get_exit_code() != 0 && config->parsed() &&
        ReportUnknownConfigVerb(*config, args, *env.err)) {
      return kExitUsage;
    }
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
  ConnectionFlags connection_flags;
  for (const GlobalFlag& flag : global_flags) {
    if (flag.option->count() > 0) connection_flags.*(flag.field) = flag.value;
  }
  if (config->parsed()) {
    FinishConfigOptions(*config, config_options);
    // Contexts store the path of a token file, never a token.
    if (connection_flags.token.has_value()) {
      return ReportUsage(
          absl::InvalidArgumentError("kq config stores no token: give "
                                     "set-context --token-file=FILE"),
          *env.err);
    }
    return RunConfig(config_options, env.config_path, *env.out, *env.err);
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
      connection_flags.server = simulate_server;
    }
  }
  absl::StatusOr<KqConfig> kq_config =
      env.config_path.empty() ? KqConfig() : LoadKqConfig(env.config_path);
  if (!kq_config.ok()) {
    *env.err << "error: " << kq_config.status().message() << "\n";
    return kExitError;
  }
  absl::StatusOr<Connection> connection =
      ResolveConnection(connection_flags,
                        {.server = env.env_server,
                         .token = env.env_token,
                         .default_server = env.default_server},
                        *kq_config, env.config_path);
  if (!connection.ok()) {
    *env.err << "error: " << connection.status().message() << "\n";
    return kExitError;
  }
  client::Client& client = env.connect(connection->options);
  if (absl::Status connected = client.Connect(env.connect_timeout);
      !connected.ok()) {
    // Credentials that cannot be used are not a connection problem.
    if (connected.code() != absl::StatusCode::kUnavailable &&
        connected.code() != absl::StatusCode::kDeadlineExceeded) {
      return ReportError(connected, *env.err);
    }
    ReportUnreachable(connection->options.target, connection->origin, connected,
                      *env.err, connection->context);
    PrintTlsHint(connection->options, connected, *env.err);
    return kExitError;
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
