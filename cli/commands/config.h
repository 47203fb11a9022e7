#pragma once

// `kq config`: kubectl's context commands over the kq config file
// (cli/kqconfig.h). They read and write the file only; none talks to kqd.
//
//   kq config set-context NAME [--server=] [--tls-ca=] [--cert=] [--key=]
//                              [--token-file=] [--tls-server-name=]
//   kq config use-context NAME
//   kq config current-context
//   kq config get-contexts [NAME] [-o name]
//   kq config delete-context NAME
//   kq config view

#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace kq::cli {

struct ConfigOptions {
  enum class Verb {
    kSetContext,
    kUseContext,
    kCurrentContext,
    kGetContexts,
    kDeleteContext,
    kView,
  };
  Verb verb = Verb::kView;
  // The context the verb is about (get-contexts: optional filter).
  std::string name;
  // set-context: the fields given; nullopt keeps the stored value, an empty
  // value removes it. Relative paths are stored absolute.
  std::optional<std::string> server;
  std::optional<std::string> tls_ca;
  std::optional<std::string> cert;
  std::optional<std::string> key;
  std::optional<std::string> token_file;
  std::optional<std::string> tls_server_name;
  // get-contexts: "" (a table) or "name".
  std::string output;
  // Where the parse writes set-context's flag values, before
  // FinishConfigOptions makes them the optionals above.
  struct Parsed {
    std::string server, tls_ca, cert, key, token_file, tls_server_name;
  } parsed;
};

// Registers `config` and its subcommands on `app`; the values land in
// `options` once `app` has parsed (FinishConfigOptions completes them).
// Returns the `config` command.
CLI::App* AddConfigCommand(CLI::App& app, ConfigOptions& options);

// Completes `options` after a parse: the verb that was given and which
// set-context flags were. Call only when the `config` command parsed.
void FinishConfigOptions(const CLI::App& config, ConfigOptions& options);

// Runs the verb on the file at `path` (empty: there is none, which is an
// error). Output as kubectl's:
//   set-context      Context "NAME" created. | Context "NAME" modified.
//   use-context      Switched to context "NAME".
//   current-context  NAME
//   get-contexts     CURRENT   NAME   SERVER   TLS   AUTH (`*` marks the
//                    current one; AUTH: cert, token-file, both, or empty)
//   delete-context   deleted context NAME from PATH
//   view             the file as it would be written
// Returns kExitOk; kExitError with "error: ..." on `err` for an unknown
// context (naming the known ones), an unset current context
// (current-context), or a file that cannot be read, parsed or written;
// kExitUsage for an invalid name or -o.
int RunConfig(const ConfigOptions& options, const std::string& path,
              std::ostream& out, std::ostream& err);

}  // namespace kq::cli
