// `kq config`: the context commands (see config.h).

#include "cli/commands/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/kqconfig.h"
#include "cli/printers/tab_writer.h"
#include "cli/printers/table_printer.h"

namespace kq::cli {
namespace {

struct VerbName {
  ConfigOptions::Verb verb;
  const char* name;
};
constexpr VerbName kVerbs[] = {
    {ConfigOptions::Verb::kSetContext, "set-context"},
    {ConfigOptions::Verb::kUseContext, "use-context"},
    {ConfigOptions::Verb::kCurrentContext, "current-context"},
    {ConfigOptions::Verb::kGetContexts, "get-contexts"},
    {ConfigOptions::Verb::kDeleteContext, "delete-context"},
    {ConfigOptions::Verb::kView, "view"},
};

// set-context's flags: the option name, where the parse writes it and the
// optional it becomes.
struct SetFlag {
  const char* flag;
  std::string ConfigOptions::Parsed::*parsed;
  std::optional<std::string> ConfigOptions::*given;
  const char* help;
};
const SetFlag kSetFlags[] = {
    {"--server", &ConfigOptions::Parsed::server, &ConfigOptions::server,
     "host:port of kqd"},
    {"--tls-ca", &ConfigOptions::Parsed::tls_ca, &ConfigOptions::tls_ca,
     "PEM CA file that signed kqd's certificate (turns TLS on)"},
    {"--cert", &ConfigOptions::Parsed::cert, &ConfigOptions::cert,
     "PEM client certificate file (mutual TLS)"},
    {"--key", &ConfigOptions::Parsed::key, &ConfigOptions::key,
     "PEM private key file of --cert"},
    {"--token-file", &ConfigOptions::Parsed::token_file,
     &ConfigOptions::token_file, "file holding a bearer token"},
    {"--tls-server-name", &ConfigOptions::Parsed::tls_server_name,
     &ConfigOptions::tls_server_name,
     "name kqd's certificate carries, if not the server's host"},
};

int Fail(const absl::Status& status, std::ostream& err) {
  err << "error: " << status.message() << "\n";
  return kExitError;
}

// A path as stored: absolute (against the working directory) so that the
// context works from anywhere; empty stays empty.
std::string Absolute(const std::string& path) {
  if (path.empty()) return path;
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) return path;
  return absolute.lexically_normal().string();
}

absl::Status NoSuchContext(const std::string& name, const KqConfig& config,
                           const std::string& path) {
  return absl::InvalidArgumentError(
      absl::StrCat("no context exists with the name: \"", name, "\"",
                   config.contexts.empty()
                       ? absl::StrCat(" (there are no contexts in ", path, ")")
                       : absl::StrCat(" (the contexts in ", path, " are ",
                                      config.Names(), ")")));
}

std::string AuthOf(const KqContext& context) {
  const bool cert = !context.cert.empty();
  const bool token = !context.token_file.empty();
  if (cert && token) return "cert+token-file";
  if (cert) return "cert";
  if (token) return "token-file";
  return "";
}

int SetContext(const ConfigOptions& options, KqConfig& config,
               const std::string& path, std::ostream& out, std::ostream& err) {
  KqContext* context = config.Find(options.name);
  const bool created = context == nullptr;
  if (created) {
    config.contexts.push_back(KqContext{.name = options.name});
    context = &config.contexts.back();
  }
  auto set = [](const std::optional<std::string>& given, std::string& field,
                bool is_path) {
    if (given.has_value()) field = is_path ? Absolute(*given) : *given;
  };
  set(options.server, context->server, false);
  set(options.tls_ca, context->tls_ca, true);
  set(options.cert, context->cert, true);
  set(options.key, context->key, true);
  set(options.token_file, context->token_file, true);
  set(options.tls_server_name, context->tls_server_name, false);
  const KqContext stored = *context;
  if (absl::Status saved = SaveKqConfig(path, config); !saved.ok()) {
    return Fail(saved, err);
  }
  // Files that are not there yet are fine (they may be copied later), but
  // worth a word.
  for (const auto& [what, file] :
       {std::pair<const char*, const std::string*>{"tls-ca", &stored.tls_ca},
        {"cert", &stored.cert},
        {"key", &stored.key},
        {"token-file", &stored.token_file}}) {
    struct stat st;
    if (!file->empty() && stat(file->c_str(), &st) != 0) {
      err << "Warning: the " << what << " file " << *file
          << " does not exist\n";
    }
  }
  out << "Context \"" << options.name << "\" "
      << (created ? "created" : "modified") << ".\n";
  return kExitOk;
}

int GetContexts(const ConfigOptions& options, const KqConfig& config,
                const std::string& path, std::ostream& out, std::ostream& err) {
  std::vector<const KqContext*> shown;
  for (const KqContext& context : config.contexts) {
    if (options.name.empty() || context.name == options.name) {
      shown.push_back(&context);
    }
  }
  if (!options.name.empty() && shown.empty()) {
    return Fail(NoSuchContext(options.name, config, path), err);
  }
  if (options.output == "name") {
    for (const KqContext* context : shown) out << context->name << "\n";
    return kExitOk;
  }
  TabWriter table(kTableMinWidth, kTablePadding);
  table.AddLine({"CURRENT", "NAME", "SERVER", "TLS", "AUTH"});
  for (const KqContext* context : shown) {
    table.AddLine({context->name == config.current_context ? "*" : "",
                   context->name, context->server,
                   context->tls_ca.empty() ? "no" : "yes", AuthOf(*context)});
  }
  out << table.Render();
  return kExitOk;
}

}  // namespace

CLI::App* AddConfigCommand(CLI::App& app, ConfigOptions& options) {
  CLI::App* config = app.add_subcommand(
      "config",
      "Edit the kq config file: contexts naming a kqd and its credentials "
      "($KQCONFIG, else ~/.kq/config)");
  config->require_subcommand(1);
  CLI::App* set = config->add_subcommand(
      "set-context",
      "Create or update a context; flags not given keep their value, an "
      "empty one (--cert=) removes it");
  set->add_option("name", options.name, "Context name")->required();
  for (const SetFlag& flag : kSetFlags) {
    set->add_option(flag.flag, options.parsed.*(flag.parsed), flag.help);
  }
  CLI::App* use =
      config->add_subcommand("use-context", "Make a context the current one");
  use->add_option("name", options.name, "Context name")->required();
  config->add_subcommand("current-context", "Print the current context");
  CLI::App* get = config->add_subcommand(
      "get-contexts", "List the contexts; * marks the current one");
  get->add_option("name", options.name, "Only this context");
  get->add_option("-o,--output", options.output, "name: the names only");
  CLI::App* del = config->add_subcommand("delete-context", "Delete a context");
  del->add_option("name", options.name, "Context name")->required();
  config->add_subcommand("view", "Print the kq config file");
  return config;
}

void FinishConfigOptions(const CLI::App& config, ConfigOptions& options) {
  for (const VerbName& verb : kVerbs) {
    if (config.get_subcommand(verb.name)->parsed()) options.verb = verb.verb;
  }
  const CLI::App* set = config.get_subcommand("set-context");
  for (const SetFlag& flag : kSetFlags) {
    if (set->get_option(flag.flag)->count() > 0) {
      options.*(flag.given) = options.parsed.*(flag.parsed);
    }
  }
}

int RunConfig(const ConfigOptions& options, const std::string& path,
              std::ostream& out, std::ostream& err) {
  using Verb = ConfigOptions::Verb;
  if (options.verb == Verb::kGetContexts && !options.output.empty() &&
      options.output != "name") {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "unable to match a printer suitable for the "
                           "output format \"",
                           options.output, "\", allowed formats are: name")),
                       err);
  }
  if ((options.verb == Verb::kSetContext || options.verb == Verb::kUseContext ||
       options.verb == Verb::kDeleteContext) &&
      (options.name.empty() ||
       options.name.find_first_of(" \t\r\n") != std::string::npos)) {
    return ReportUsage(absl::InvalidArgumentError(
                           absl::StrCat("invalid context name \"", options.name,
                                        "\": a context name is one word")),
                       err);
  }
  if (path.empty()) {
    return Fail(absl::InvalidArgumentError(
                    "no kq config file: set KQCONFIG, or HOME for "
                    "~/.kq/config"),
                err);
  }
  absl::StatusOr<KqConfig> config = LoadKqConfig(path);
  if (!config.ok()) return Fail(config.status(), err);

  switch (options.verb) {
    case Verb::kSetContext:
      return SetContext(options, *config, path, out, err);
    case Verb::kUseContext:
      if (config->Find(options.name) == nullptr) {
        return Fail(NoSuchContext(options.name, *config, path), err);
      }
      config->current_context = options.name;
      if (absl::Status saved = SaveKqConfig(path, *config); !saved.ok()) {
        return Fail(saved, err);
      }
      out << "Switched to context \"" << options.name << "\".\n";
      return kExitOk;
    case Verb::kCurrentContext:
      if (config->current_context.empty()) {
        return Fail(absl::FailedPreconditionError(
                        absl::StrCat("current-context is not set in ", path)),
                    err);
      }
      out << config->current_context << "\n";
      return kExitOk;
    case Verb::kGetContexts:
      return GetContexts(options, *config, path, out, err);
    case Verb::kDeleteContext: {
      std::vector<KqContext>& contexts = config->contexts;
      auto it = std::find_if(
          contexts.begin(), contexts.end(),
          [&options](const KqContext& c) { return c.name == options.name; });
      if (it == contexts.end()) {
        return Fail(NoSuchContext(options.name, *config, path), err);
      }
      contexts.erase(it);
      const bool was_current = config->current_context == options.name;
      if (was_current) config->current_context.clear();
      if (absl::Status saved = SaveKqConfig(path, *config); !saved.ok()) {
        return Fail(saved, err);
      }
      if (was_current) {
        err << "warning: this removed your active context, use \"kq config "
               "use-context\" to select a different one\n";
      }
      out << "deleted context " << options.name << " from " << path << "\n";
      return kExitOk;
    }
    case Verb::kView:
      out << FormatKqConfig(*config);
      return kExitOk;
  }
  return kExitOk;
}

}  // namespace kq::cli
