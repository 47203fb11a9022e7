#include "cli/kqconfig.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cli/command.h"
#include "nlohmann/json.hpp"

#include "kq/client/client.h"
#include "manifest/yaml.h"

namespace kq::cli {
namespace {

using nlohmann::json;

constexpr absl::string_view kApiVersion = "kq/v1";
constexpr absl::string_view kKind = "Config";

// A context's fields as the file spells them, in the order they are
// written.
struct Field {
  absl::string_view key;
  std::string KqContext::*member;
};
constexpr Field kContextFields[] = {
    {"server", &KqContext::server},
    {"tls-ca", &KqContext::tls_ca},
    {"cert", &KqContext::cert},
    {"key", &KqContext::key},
    {"token-file", &KqContext::token_file},
    {"tls-server-name", &KqContext::tls_server_name},
};

absl::Status Invalid(absl::string_view path, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", reason));
}

std::string KnownContextFields() {
  std::vector<std::string> keys = {"name"};
  for (const Field& field : kContextFields) keys.emplace_back(field.key);
  return absl::StrJoin(keys, ", ");
}

absl::StatusOr<std::string> StringField(const json& value,
                                        absl::string_view where,
                                        absl::string_view key,
                                        absl::string_view path) {
  if (value.is_null()) return std::string();
  if (!value.is_string()) {
    return Invalid(path, absl::StrCat(where, "\"", key,
                                      "\" must be a string, "
                                      "got ",
                                      value.dump()));
  }
  return value.get<std::string>();
}

absl::StatusOr<KqContext> ParseContext(const json& item, size_t index,
                                       absl::string_view path) {
  if (!item.is_object()) {
    return Invalid(path, absl::StrCat("contexts[", index,
                                      "] must be a mapping with a name"));
  }
  KqContext context;
  if (auto name = item.find("name"); name != item.end()) {
    absl::StatusOr<std::string> value = StringField(
        *name, absl::StrCat("contexts[", index, "]: "), "name", path);
    if (!value.ok()) return value.status();
    context.name = *std::move(value);
  }
  if (context.name.empty()) {
    return Invalid(path, absl::StrCat("contexts[", index, "] has no name"));
  }
  const std::string where = absl::StrCat("context \"", context.name, "\": ");
  for (const auto& [key, value] : item.items()) {
    if (key == "name") continue;
    const Field* field = nullptr;
    for (const Field& f : kContextFields) {
      if (f.key == key) field = &f;
    }
    if (field == nullptr) {
      return Invalid(path,
                     absl::StrCat(where, "unknown field \"", key,
                                  "\" (known: ", KnownContextFields(), ")"));
    }
    absl::StatusOr<std::string> text = StringField(value, where, key, path);
    if (!text.ok()) return text.status();
    context.*(field->member) = *std::move(text);
  }
  return context;
}

void AppendScalar(absl::string_view text, std::string& out) {
  if (manifest::internal::YamlNeedsQuotes(text)) {
    out += json(std::string(text)).dump();
  } else {
    out.append(text.data(), text.size());
  }
}

absl::Status Errno(absl::string_view what, const std::string& path, int error) {
  return absl::InvalidArgumentError(
      absl::StrCat("cannot ", what, " ", path, ": ", strerror(error)));
}

}  // namespace

const KqContext* KqConfig::Find(absl::string_view name) const {
  for (const KqContext& context : contexts) {
    if (context.name == name) return &context;
  }
  return nullptr;
}

KqContext* KqConfig::Find(absl::string_view name) {
  for (KqContext& context : contexts) {
    if (context.name == name) return &context;
  }
  return nullptr;
}

std::string KqConfig::Names() const {
  std::vector<absl::string_view> names;
  for (const KqContext& context : contexts) names.push_back(context.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<KqConfig> ParseKqConfig(absl::string_view text,
                                       absl::string_view path) {
  absl::StatusOr<std::vector<absl::StatusOr<json>>> documents =
      manifest::internal::LoadDocuments(text);
  if (!documents.ok()) return Invalid(path, documents.status().message());
  KqConfig config;
  if (documents->empty()) return config;
  if (documents->size() > 1) {
    return Invalid(path, "holds more than one YAML document");
  }
  const absl::StatusOr<json>& document = documents->front();
  if (!document.ok()) return Invalid(path, document.status().message());
  if (!document->is_object()) {
    return Invalid(path,
                   "must be a mapping (apiVersion, kind, "
                   "current-context, contexts)");
  }
  for (const auto& [key, value] : document->items()) {
    if (key == "apiVersion" || key == "kind") {
      absl::StatusOr<std::string> text = StringField(value, "", key, path);
      if (!text.ok()) return text.status();
      const absl::string_view want = key == "kind" ? kKind : kApiVersion;
      if (!text->empty() && *text != want) {
        return Invalid(path, absl::StrCat(key, " is \"", *text, "\", want \"",
                                          want, "\""));
      }
    } else if (key == "current-context") {
      absl::StatusOr<std::string> text = StringField(value, "", key, path);
      if (!text.ok()) return text.status();
      config.current_context = *std::move(text);
    } else if (key == "contexts") {
      if (value.is_null()) continue;
      if (!value.is_array()) {
        return Invalid(path, "\"contexts\" must be a list");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        absl::StatusOr<KqContext> context = ParseContext(value[i], i, path);
        if (!context.ok()) return context.status();
        if (config.Find(context->name) != nullptr) {
          return Invalid(path, absl::StrCat("two contexts are named \"",
                                            context->name, "\""));
        }
        config.contexts.push_back(*std::move(context));
      }
    } else {
      return Invalid(path, absl::StrCat("unknown field \"", key,
                                        "\" (known: apiVersion, kind, "
                                        "current-context, contexts)"));
    }
  }
  return config;
}

std::string FormatKqConfig(const KqConfig& config) {
  std::string out = absl::StrCat("apiVersion: ", kApiVersion, "\nkind: ", kKind,
                                 "\ncurrent-context: ");
  AppendScalar(config.current_context, out);
  out += "\ncontexts:";
  if (config.contexts.empty()) out += " []";
  out += "\n";
  for (const KqContext& context : config.contexts) {
    out += "- name: ";
    AppendScalar(context.name, out);
    out += "\n";
    for (const Field& field : kContextFields) {
      const std::string& value = context.*(field.member);
      if (value.empty()) continue;
      absl::StrAppend(&out, "  ", field.key, ": ");
      AppendScalar(value, out);
      out += "\n";
    }
  }
  return out;
}

absl::StatusOr<KqConfig> LoadKqConfig(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return KqConfig();
    return Errno("read the kq config file", path, errno);
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return Errno("read the kq config file", path, error);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return ParseKqConfig(text, path);
}

absl::Status SaveKqConfig(const std::string& path, const KqConfig& config) {
  const std::filesystem::path file(path);
  const std::filesystem::path dir =
      file.has_parent_path() ? file.parent_path() : ".";
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    // Only the directories that are missing, each private to the user.
    std::filesystem::create_directories(dir, error);
    if (error) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot make the directory ", dir.string(), ": ", error.message()));
    }
    chmod(dir.c_str(), 0700);
  }
  // In the same directory, so that rename(2) replaces the file in one step.
  std::string temp = (dir / ("." + file.filename().string() + ".XXXXXX"));
  const int fd = mkstemp(temp.data());  // mode 0600
  if (fd < 0) return Errno("write the kq config file", path, errno);
  const std::string text = FormatKqConfig(config);
  auto fail = [&](int err) {
    close(fd);
    unlink(temp.c_str());
    return Errno("write the kq config file", path, err);
  };
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    written += static_cast<size_t>(n);
  }
  if (fchmod(fd, 0600) != 0 || fsync(fd) != 0) return fail(errno);
  if (close(fd) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return Errno("write the kq config file", path, err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return Errno("write the kq config file", path, err);
  }
  return absl::OkStatus();
}

std::string KqConfigPath(const char* kqconfig, const char* home) {
  if (kqconfig != nullptr && *kqconfig != '\0') return kqconfig;
  if (home != nullptr && *home != '\0') {
    return (std::filesystem::path(home) / ".kq" / "config").string();
  }
  return "";
}

absl::StatusOr<Connection> ResolveConnection(
    const ConnectionFlags& flags, const ConnectionEnvironment& environment,
    const KqConfig& config, const std::string& config_path) {
  const std::string file =
      config_path.empty() ? std::string("the kq config file") : config_path;
  auto known = [&config, &file] {
    return config.contexts.empty()
               ? absl::StrCat("there are no contexts in ", file,
                              " (make one with kq config set-context)")
               : absl::StrCat("the contexts in ", file, " are ",
                              config.Names());
  };
  // 1. The context: --context's, else the current one.
  const KqContext* context = nullptr;
  if (flags.context.has_value() && !flags.context->empty()) {
    context = config.Find(*flags.context);
    if (context == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "context \"", *flags.context, "\" not found: ", known()));
    }
  } else if (!flags.context.has_value() && !config.current_context.empty()) {
    context = config.Find(config.current_context);
    if (context == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the current context \"", config.current_context,
                       "\" of ", file, " does not exist: ", known(),
                       " (pick one with kq config "
                       "use-context, or pass --context)"));
    }
  }
  const KqContext none;
  const KqContext& from = context != nullptr ? *context : none;
  Connection connection;
  connection.context = from.name;
  client::ClientOptions& options = connection.options;

  // 2. The server.
  if (flags.server.has_value() && !flags.server->empty()) {
    options.target = *flags.server;
    connection.origin = ServerOrigin::kFlag;
  } else if (flags.context.has_value() && !from.server.empty()) {
    options.target = from.server;
    connection.origin = ServerOrigin::kContext;
  } else if (!environment.server.empty()) {
    options.target = environment.server;
    connection.origin = ServerOrigin::kEnvironment;
  } else if (!from.server.empty()) {
    options.target = from.server;
    connection.origin = ServerOrigin::kContext;
  } else {
    options.target = environment.default_server;
    connection.origin = ServerOrigin::kDefault;
  }

  // 3. TLS: each file from its flag, else from the context.
  options.tls_ca_file = flags.tls_ca.value_or(from.tls_ca);
  options.tls_cert_file = flags.cert.value_or(from.cert);
  options.tls_key_file = flags.key.value_or(from.key);
  options.tls_server_name =
      flags.tls_server_name.value_or(from.tls_server_name);

  // 4. The bearer token: one source, the first there is.
  if (flags.token.has_value()) {
    options.token = *flags.token;
  } else if (flags.token_file.has_value()) {
    options.token_file = *flags.token_file;
  } else if (!environment.token.empty()) {
    options.token = environment.token;
  } else {
    options.token_file = from.token_file;
  }
  return connection;
}

}  // namespace kq::cli
