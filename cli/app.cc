#include "cli/app.h"

#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/command.h"
#include "cli/commands/commands.h"

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
                  "cq, lq, rf, cohort, wpc, ac, workload, ns")
      ->required();
  get->add_option("name", get_options.name, "Object name");
  AddNamespaceOption(get, ns);
  get->add_flag("-A,--all-namespaces", get_options.all_namespaces,
                "List namespaced objects of every namespace");
  get->add_option("-o,--output", get_options.output, "wide|json|yaml|name");

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
  CLI::App* simulate = app.add_subcommand(
      "simulate",
      "Run Kueue's admission rules offline on a scenario (no server)");
  simulate->add_option("-f,--filename", scenario_files, "Scenario file, or -")
      ->required();
  simulate->add_option("--passes", simulate_options.passes,
                       "Scheduling passes to run (default: until nothing "
                       "changes)");
  simulate->add_option("-o,--output", simulate_options.output,
                       "wide|json|yaml");
  AddNamespaceOption(simulate, ns);

  std::vector<const char*> argv;
  for (const std::string& arg : args) {
    argv.push_back(arg.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    // --help is a "successful" parse error with exit code 0.
    const int code = app.exit(e, *env.out, *env.err);
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (version->parsed()) {
    return RunVersion(*env.out);
  }
  if (simulate->parsed()) {
    simulate_options.namespace_name = ns;
    for (const std::string& file : scenario_files) {
      ManifestSource source;
      if (!ReadSource(file, env, source)) {
        return kExitError;
      }
      simulate_options.sources.push_back(std::move(source));
    }
    return RunSimulate(simulate_options, *env.out, *env.err);
  }
  CommandContext ctx{.client = env.connect(server),
                     .out = *env.out,
                     .err = *env.err,
                     .now = env.now};
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
