#pragma once

// The CLI's kq contexts file, kubectl's kubeconfig for kqd: ~/.kq/config
// (or $KQCONFIG), YAML naming, per context, the kqd to talk to and the
// credentials to talk with, and the context in use:
//
//   apiVersion: kq/v1
//   kind: Config
//   current-context: prod
//   contexts:
//   - name: prod
//     server: kqd.example.com:7070
//     tls-ca: /home/alice/.kq/prod-ca.crt
//     cert: /home/alice/.kq/alice.crt
//     key: /home/alice/.kq/alice.key
//   - name: ci
//     server: kqd.example.com:7070
//     tls-ca: /home/alice/.kq/prod-ca.crt
//     token-file: /var/run/secrets/kq/token
//
// A context stores paths to credential files, never a token itself.
// `kq config set-context` and friends (cli/commands/config.cc) edit it;
// every command that talks to kqd picks its connection with
// ResolveConnection.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/command.h"

#include "kq/client/client.h"
#include "kq/client/context_file.h"

namespace kq::cli {

// The contexts file's types and reader are client-lib's
// (kq/client/context_file.h), shared with kqd, which reads one per
// MultiKueue worker; the CLI adds finding, editing and saving its own.
using KqContext = client::Context;
using KqConfig = client::ContextFile;

// client::ParseContextFile.
absl::StatusOr<KqConfig> ParseKqConfig(absl::string_view text,
                                       absl::string_view path);

// client::FormatContextFile.
std::string FormatKqConfig(const KqConfig& config);

// Reads and parses the file at `path`. A file that does not exist is an
// empty config. INVALID_ARGUMENT naming the file when it cannot be read,
// and ParseKqConfig's errors.
absl::StatusOr<KqConfig> LoadKqConfig(const std::string& path);

// Writes `config` to `path` atomically (a temporary file in the same
// directory, fsync'd, then renamed over it) with mode 0600, making the
// directory (mode 0700) when it is missing. INVALID_ARGUMENT naming the
// path and the reason on failure; `path` is then unchanged.
absl::Status SaveKqConfig(const std::string& path, const KqConfig& config);

// Where the contexts file is: $KQCONFIG when set and not empty, else
// $HOME/.kq/config, else empty (no file: no contexts). The arguments are
// the variables' values, null when unset.
std::string KqConfigPath(const char* kqconfig, const char* home);

// What the command line says about the connection; nullopt: not given. An
// empty value given explicitly (--tls-ca=) clears what a context sets.
struct ConnectionFlags {
  std::optional<std::string> server;
  std::optional<std::string> context;
  std::optional<std::string> tls_ca;
  std::optional<std::string> cert;
  std::optional<std::string> key;
  std::optional<std::string> token;
  std::optional<std::string> token_file;
  std::optional<std::string> tls_server_name;
};

// What the environment says: $KQ_SERVER and $KQ_TOKEN (empty: unset), and
// the built-in default server.
struct ConnectionEnvironment {
  std::string server;
  std::string token;
  std::string default_server = "127.0.0.1:7070";
};

// The connection a command makes, and where its address came from.
struct Connection {
  client::ClientOptions options;
  ServerOrigin origin = ServerOrigin::kDefault;
  // The context used (--context, else the current context); empty: none.
  std::string context;
};

// Picks the connection: flags first, then $KQ_SERVER (the server only),
// then the context (--context's, else the current context of `config`),
// then the defaults. The context named by --context is chosen on the
// command line, so its server also beats $KQ_SERVER. Per credential:
// --tls-ca, --cert, --key and --tls-server-name beat the context's; the
// token is --token, else --token-file, else $KQ_TOKEN, else the context's
// token-file. INVALID_ARGUMENT naming the file `config_path` and the known
// contexts when --context or current-context names no context. The
// options' deadlines and retries are ClientOptions' defaults.
absl::StatusOr<Connection> ResolveConnection(
    const ConnectionFlags& flags, const ConnectionEnvironment& environment,
    const KqConfig& config, const std::string& config_path);

}  // namespace kq::cli
