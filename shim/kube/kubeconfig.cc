// Loading a Config from a kubeconfig file or from the in-cluster service
// account, following client-go's clientcmd and rest.InClusterConfig.

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

#include "base/status_macros.h"
#include "shim/kube/client.h"

namespace kq::shim::kube {
namespace {

// Reads a kubeconfig's fields, naming each in its errors by its path in the
// file, e.g. `clusters[name="c"].cluster.server`.
class KubeconfigReader {
 public:
  KubeconfigReader(std::string path, YAML::Node root)
      : path_(std::move(path)), root_(std::move(root)) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path_, ec);
    dir_ = (ec ? std::filesystem::path(path_) : absolute).parent_path();
  }

  absl::StatusOr<Config> Read(const std::string& wanted_context) {
    if (!root_.IsMap()) return Invalid("", "not a YAML mapping");
    Config config;

    // 1. The context: the one asked for, else current-context.
    std::string context_name = wanted_context;
    if (context_name.empty()) {
      KQ_ASSIGN_OR_RETURN(context_name,
                          Scalar(root_, "current-context", "current-context"));
      if (context_name.empty()) {
        return Invalid("current-context", "not set and no context was given");
      }
    }
    KQ_ASSIGN_OR_RETURN(std::optional<YAML::Node> found_context,
                        Named("contexts", "context", context_name));
    if (!found_context.has_value()) {
      return Invalid(wanted_context.empty() ? "current-context" : "contexts",
                     absl::StrCat("context \"", context_name, "\" not found"));
    }
    const YAML::Node context = *found_context;
    const std::string context_path =
        absl::StrCat("contexts[name=\"", context_name, "\"].context");

    // 2. Its cluster: where the server is and how to trust it.
    KQ_ASSIGN_OR_RETURN(
        std::string cluster_name,
        Scalar(context, "cluster", absl::StrCat(context_path, ".cluster")));
    if (cluster_name.empty()) {
      return Invalid(absl::StrCat(context_path, ".cluster"), "missing");
    }
    KQ_ASSIGN_OR_RETURN(std::optional<YAML::Node> found_cluster,
                        Named("clusters", "cluster", cluster_name));
    if (!found_cluster.has_value()) {
      return Invalid(absl::StrCat(context_path, ".cluster"),
                     absl::StrCat("cluster \"", cluster_name, "\" not found"));
    }
    const YAML::Node cluster = *found_cluster;
    const std::string cluster_path =
        absl::StrCat("clusters[name=\"", cluster_name, "\"].cluster");
    KQ_ASSIGN_OR_RETURN(
        config.server,
        Scalar(cluster, "server", absl::StrCat(cluster_path, ".server")));
    if (config.server.empty()) {
      return Invalid(absl::StrCat(cluster_path, ".server"), "missing");
    }
    if (!absl::StartsWith(config.server, "https://") &&
        !absl::StartsWith(config.server, "http://")) {
      return Invalid(absl::StrCat(cluster_path, ".server"),
                     absl::StrCat("\"", config.server, "\" is not a URL"));
    }
    KQ_ASSIGN_OR_RETURN(
        config.certificate_authority_data,
        Base64(cluster, "certificate-authority-data", cluster_path));
    KQ_ASSIGN_OR_RETURN(config.certificate_authority_file,
                        File(cluster, "certificate-authority", cluster_path));
    KQ_ASSIGN_OR_RETURN(
        config.insecure_skip_tls_verify,
        Bool(cluster, "insecure-skip-tls-verify", cluster_path));

    // 3. Its user: how to authenticate (none when the context names none).
    KQ_ASSIGN_OR_RETURN(
        std::string user_name,
        Scalar(context, "user", absl::StrCat(context_path, ".user")));
    if (!user_name.empty()) {
      KQ_ASSIGN_OR_RETURN(std::optional<YAML::Node> user,
                          Named("users", "user", user_name));
      if (!user.has_value()) {
        return Invalid(absl::StrCat(context_path, ".user"),
                       absl::StrCat("user \"", user_name, "\" not found"));
      }
      KQ_RETURN_IF_ERROR(ReadUser(*user, user_name, config));
    }

    // 4. The namespace.
    KQ_ASSIGN_OR_RETURN(
        std::string ns,
        Scalar(context, "namespace", absl::StrCat(context_path, ".namespace")));
    config.default_namespace = ns.empty() ? "default" : ns;
    return config;
  }

 private:
  absl::Status ReadUser(const YAML::Node& user, const std::string& name,
                        Config& config) {
    const std::string user_path =
        absl::StrCat("users[name=\"", name, "\"].user");
    // Credential plugins run programs and refresh tokens; the shim
    // authenticates with a service account or a static credential only.
    for (const char* field : {"exec", "auth-provider"}) {
      if (user[field].IsDefined() && !user[field].IsNull()) {
        return absl::UnimplementedError(absl::StrCat(
            Prefix(), user_path, ".", field,
            ": credential plugins are not supported; use a token, a "
            "tokenFile or a client certificate"));
      }
    }
    for (const char* field : {"username", "password"}) {
      if (user[field].IsDefined() && !user[field].IsNull()) {
        return absl::UnimplementedError(
            absl::StrCat(Prefix(), user_path, ".", field,
                         ": basic authentication is not supported"));
      }
    }
    KQ_ASSIGN_OR_RETURN(
        config.bearer_token,
        Scalar(user, "token", absl::StrCat(user_path, ".token")));
    KQ_ASSIGN_OR_RETURN(config.bearer_token_file,
                        File(user, "tokenFile", user_path));
    KQ_ASSIGN_OR_RETURN(config.client_certificate_data,
                        Base64(user, "client-certificate-data", user_path));
    KQ_ASSIGN_OR_RETURN(config.client_certificate_file,
                        File(user, "client-certificate", user_path));
    KQ_ASSIGN_OR_RETURN(config.client_key_data,
                        Base64(user, "client-key-data", user_path));
    KQ_ASSIGN_OR_RETURN(config.client_key_file,
                        File(user, "client-key", user_path));
    const bool has_cert = !config.client_certificate_data.empty() ||
                          !config.client_certificate_file.empty();
    const bool has_key =
        !config.client_key_data.empty() || !config.client_key_file.empty();
    if (has_cert && !has_key) {
      return Invalid(absl::StrCat(user_path, ".client-key"),
                     "missing (client-certificate is set)");
    }
    if (has_key && !has_cert) {
      return Invalid(absl::StrCat(user_path, ".client-certificate"),
                     "missing (client-key is set)");
    }
    return absl::OkStatus();
  }

  std::string Prefix() const {
    return absl::StrCat("kubeconfig ", path_, ": ");
  }

  absl::Status Invalid(const std::string& field,
                       const std::string& message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(), field, field.empty() ? "" : ": ", message));
  }

  // The string at `key` of `map`, "" when absent or null.
  absl::StatusOr<std::string> Scalar(const YAML::Node& map,
                                     const std::string& key,
                                     const std::string& field) const {
    if (!map.IsMap()) return std::string();
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) return std::string();
    if (!node.IsScalar()) return Invalid(field, "not a string");
    return node.Scalar();
  }

  absl::StatusOr<bool> Bool(const YAML::Node& map, const std::string& key,
                            const std::string& parent) const {
    const std::string field = absl::StrCat(parent, ".", key);
    if (!map.IsMap()) return false;
    const YAML::Node node = map[key];
    if (!node.IsDefined() || node.IsNull()) return false;
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      return Invalid(field, "not a boolean");
    }
    return value;
  }

  // Decoded PEM from a *-data field.
  absl::StatusOr<std::string> Base64(const YAML::Node& map,
                                     const std::string& key,
                                     const std::string& parent) const {
    const std::string field = absl::StrCat(parent, ".", key);
    KQ_ASSIGN_OR_RETURN(std::string encoded, Scalar(map, key, field));
    if (encoded.empty()) return encoded;
    encoded.erase(
        std::remove_if(encoded.begin(), encoded.end(),
                       [](unsigned char c) { return absl::ascii_isspace(c); }),
        encoded.end());
    std::string decoded;
    if (!absl::Base64Unescape(encoded, &decoded) || decoded.empty()) {
      return Invalid(field, "not valid base64");
    }
    return decoded;
  }

  // A file path, made absolute against the kubeconfig's directory.
  absl::StatusOr<std::string> File(const YAML::Node& map,
                                   const std::string& key,
                                   const std::string& parent) const {
    KQ_ASSIGN_OR_RETURN(std::string file,
                        Scalar(map, key, absl::StrCat(parent, ".", key)));
    if (file.empty() || std::filesystem::path(file).is_absolute()) {
      return file;
    }
    return (dir_ / file).lexically_normal().string();
  }

  // The `inner` mapping of the entry of list `list` named `name`, or
  // nullopt when there is none. (A default YAML::Node is a defined null, so
  // absence needs its own value.)
  absl::StatusOr<std::optional<YAML::Node>> Named(
      const std::string& list, const std::string& inner,
      const std::string& name) const {
    const YAML::Node entries = root_[list];
    if (!entries.IsDefined() || entries.IsNull()) return std::nullopt;
    if (!entries.IsSequence()) return Invalid(list, "not a list");
    for (size_t i = 0; i < entries.size(); ++i) {
      const YAML::Node entry = entries[i];
      const std::string entry_path = absl::StrCat(list, "[", i, "]");
      if (!entry.IsMap()) return Invalid(entry_path, "not a mapping");
      KQ_ASSIGN_OR_RETURN(
          std::string entry_name,
          Scalar(entry, "name", absl::StrCat(entry_path, ".name")));
      if (entry_name != name) continue;
      const YAML::Node value = entry[inner];
      const std::string value_path =
          absl::StrCat(list, "[name=\"", name, "\"].", inner);
      if (!value.IsDefined() || value.IsNull()) {
        // An entry with an empty body is an empty mapping, as client-go
        // decodes it.
        return std::optional<YAML::Node>(YAML::Node(YAML::NodeType::Map));
      }
      if (!value.IsMap()) return Invalid(value_path, "not a mapping");
      return std::optional<YAML::Node>(value);
    }
    return std::nullopt;
  }

  const std::string path_;
  const YAML::Node root_;
  std::filesystem::path dir_;
};

}  // namespace

absl::StatusOr<Config> LoadKubeconfig(const std::string& path,
                                      const std::string& context) {
  std::ifstream in(path);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat("kubeconfig ", path, ": cannot be read"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  // yaml-cpp reports errors by throwing; they stop here.
  try {
    return KubeconfigReader(path, YAML::Load(text.str())).Read(context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", path, ": ", e.what()));
  }
}

absl::StatusOr<Config> LoadInClusterConfig(const std::string& secret_dir) {
  const char* host = getenv("KUBERNETES_SERVICE_HOST");
  const char* port = getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be set");
  }
  std::string server_host = host;
  if (absl::StrContains(server_host, ':') &&
      !absl::StartsWith(server_host, "[")) {
    server_host = absl::StrCat("[", server_host, "]");
  }
  Config config;
  config.server = absl::StrCat("https://", server_host, ":", port);

  const std::filesystem::path dir(secret_dir);
  const std::string token_file = (dir / "token").string();
  if (!std::ifstream(token_file)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "in-cluster configuration: cannot read the token ", token_file));
  }
  config.bearer_token_file = token_file;
  // Without ca.crt, client-go goes on with the system's CAs; so does kq.
  const std::string ca_file = (dir / "ca.crt").string();
  if (std::ifstream(ca_file)) config.certificate_authority_file = ca_file;
  std::ifstream namespace_file(dir / "namespace");
  if (namespace_file) {
    std::ostringstream ns;
    ns << namespace_file.rdbuf();
    const std::string trimmed(absl::StripAsciiWhitespace(ns.str()));
    if (!trimmed.empty()) config.default_namespace = trimmed;
  }
  return config;
}

}  // namespace kq::shim::kube
