#pragma once

// The kq contexts file, kubectl's kubeconfig for kqd: YAML naming, per
// context, the kqd to talk to and the credentials to talk with, and the
// context in use:
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
// A context stores paths to credential files, never a token itself. The
// kq CLI keeps one at ~/.kq/config (cli/kqconfig.h); a MultiKueue manager
// kqd reads one per worker (a MultiKueueCluster whose kubeConfig has
// locationType Path).
//
// Example:
//   absl::StatusOr<client::ClientOptions> options =
//       client::LoadContextFile("/etc/kq/workers/worker1.yaml", "");
//   if (!options.ok()) return options.status();
//   std::unique_ptr<client::Client> worker = client::NewGrpcClient(*options);

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include "kq/client/client.h"

namespace kq::client {

// One context: a kqd and how to reach it. Empty fields are unset. Value
// type.
struct Context {
  std::string name;
  // host:port of kqd (any gRPC target).
  std::string server;
  // PEM CA bundle that signed kqd's certificate; turns TLS on.
  std::string tls_ca;
  // PEM client certificate and key (mutual TLS).
  std::string cert;
  std::string key;
  // A file holding a bearer token.
  std::string token_file;
  // The name kqd's certificate carries, when not the host of `server`.
  std::string tls_server_name;

  bool operator==(const Context&) const = default;
};

// The whole file. Thread-compatible value.
struct ContextFile {
  // The context used when none is named; empty: none.
  std::string current_context;
  // In file order; names are unique.
  std::vector<Context> contexts;

  // The context called `name`, or nullptr.
  const Context* Find(absl::string_view name) const;
  Context* Find(absl::string_view name);
  // "a, b, c": the names of the contexts, for messages.
  std::string Names() const;

  bool operator==(const ContextFile&) const = default;
};

// Parses the text of a contexts file; `path` names it in messages. An
// empty text is an empty file. INVALID_ARGUMENT "<path>: <reason>" for text
// that is not YAML, a document that is not a mapping, an unknown field (top
// level or in a context, naming the known ones), a field that is not a
// string, a context without a name or two with one name, and an apiVersion
// or kind other than kq/v1 and Config.
absl::StatusOr<ContextFile> ParseContextFile(absl::string_view text,
                                             absl::string_view path);

// The YAML ParseContextFile reads back as `file`: apiVersion and kind,
// current-context, then the contexts with their set fields, in order.
std::string FormatContextFile(const ContextFile& file);

// Reads and parses the file at `path`. NOT_FOUND naming the file when it
// does not exist; INVALID_ARGUMENT naming it when it cannot be read, and
// ParseContextFile's errors.
absl::StatusOr<ContextFile> ReadContextFile(const std::string& path);

// The connection of one context of the contexts file at `path`: `context`,
// or when empty the file's current-context, or else its only context.
// Returns ClientOptions with target (the context's server), tls_ca_file,
// tls_cert_file, tls_key_file, token_file and tls_server_name set, the
// deadlines and retries left at their defaults. A relative credential path
// is taken relative to the directory of the file, as kubectl reads a
// kubeconfig, so the answer does not depend on the reader's working
// directory. Errors name the file (and the context and field):
//   NOT_FOUND        the file does not exist; `context` (or the
//                    current-context) names no context in it;
//   INVALID_ARGUMENT ReadContextFile's errors; no context named and none
//                    current while the file holds none or several; the
//                    context has no server; cert without key or key without
//                    cert; cert and key without tls-ca.
absl::StatusOr<ClientOptions> LoadContextFile(const std::string& path,
                                              const std::string& context);

}  // namespace kq::client
