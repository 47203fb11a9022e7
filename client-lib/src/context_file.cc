#include "kq/client/context_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

#include "manifest/yaml.h"

namespace kq::client {
namespace {

using nlohmann::json;

constexpr absl::string_view kApiVersion = "kq/v1";
constexpr absl::string_view kKind = "Config";

// A context's fields as the file spells them, in the order they are
// written.
struct Field {
  absl::string_view key;
  std::string Context::*member;
};
constexpr Field kContextFields[] = {
    {"server", &Context::server},
    {"tls-ca", &Context::tls_ca},
    {"cert", &Context::cert},
    {"key", &Context::key},
    {"token-file", &Context::token_file},
    {"tls-server-name", &Context::tls_server_name},
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

absl::StatusOr<Context> ParseContext(const json& item, size_t index,
                                     absl::string_view path) {
  if (!item.is_object()) {
    return Invalid(path, absl::StrCat("contexts[", index,
                                      "] must be a mapping with a name"));
  }
  Context context;
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

// `file` relative to the directory of `base`, unless absolute or empty.
std::string Beside(const std::string& base, const std::string& file) {
  if (file.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(base).parent_path() / file).string();
}

}  // namespace

const Context* ContextFile::Find(absl::string_view name) const {
  for (const Context& context : contexts) {
    if (context.name == name) return &context;
  }
  return nullptr;
}

Context* ContextFile::Find(absl::string_view name) {
  for (Context& context : contexts) {
    if (context.name == name) return &context;
  }
  return nullptr;
}

std::string ContextFile::Names() const {
  std::vector<absl::string_view> names;
  for (const Context& context : contexts) names.push_back(context.name);
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<ContextFile> ParseContextFile(absl::string_view text,
                                             absl::string_view path) {
  absl::StatusOr<std::vector<absl::StatusOr<json>>> documents =
      manifest::internal::LoadDocuments(text);
  if (!documents.ok()) return Invalid(path, documents.status().message());
  ContextFile file;
  if (documents->empty()) return file;
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
      file.current_context = *std::move(text);
    } else if (key == "contexts") {
      if (value.is_null()) continue;
      if (!value.is_array()) {
        return Invalid(path, "\"contexts\" must be a list");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        absl::StatusOr<Context> context = ParseContext(value[i], i, path);
        if (!context.ok()) return context.status();
        if (file.Find(context->name) != nullptr) {
          return Invalid(path, absl::StrCat("two contexts are named \"",
                                            context->name, "\""));
        }
        file.contexts.push_back(*std::move(context));
      }
    } else {
      return Invalid(path, absl::StrCat("unknown field \"", key,
                                        "\" (known: apiVersion, kind, "
                                        "current-context, contexts)"));
    }
  }
  return file;
}

std::string FormatContextFile(const ContextFile& file) {
  std::string out = absl::StrCat("apiVersion: ", kApiVersion, "\nkind: ", kKind,
                                 "\ncurrent-context: ");
  AppendScalar(file.current_context, out);
  out += "\ncontexts:";
  if (file.contexts.empty()) out += " []";
  out += "\n";
  for (const Context& context : file.contexts) {
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

absl::StatusOr<ContextFile> ReadContextFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("kq config file ", path, " does not exist"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the kq config file ", path, ": ", strerror(error)));
  }
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot read the kq config file ", path, ": ", strerror(error)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return ParseContextFile(text, path);
}

absl::StatusOr<ClientOptions> LoadContextFile(const std::string& path,
                                              const std::string& context) {
  absl::StatusOr<ContextFile> file = ReadContextFile(path);
  if (!file.ok()) return file.status();
  const std::string known =
      file->contexts.empty() ? std::string("it holds none")
                             : absl::StrCat("its contexts are ", file->Names());
  const Context* chosen = nullptr;
  if (!context.empty()) {
    chosen = file->Find(context);
    if (chosen == nullptr) {
      return absl::NotFoundError(absl::StrCat(path, ": context \"", context,
                                              "\" not found (", known, ")"));
    }
  } else if (!file->current_context.empty()) {
    chosen = file->Find(file->current_context);
    if (chosen == nullptr) {
      return absl::NotFoundError(
          absl::StrCat(path, ": current-context \"", file->current_context,
                       "\" names no context (", known, ")"));
    }
  } else if (file->contexts.size() == 1) {
    chosen = &file->contexts.front();
  } else {
    return Invalid(path,
                   file->contexts.empty()
                       ? std::string("holds no contexts")
                       : absl::StrCat("has no current-context and ",
                                      file->contexts.size(), " contexts (",
                                      file->Names(), "); name the one to use"));
  }
  const std::string where = absl::StrCat("context \"", chosen->name, "\": ");
  if (chosen->server.empty()) {
    return Invalid(path, absl::StrCat(where, "server: Required value"));
  }
  if (chosen->cert.empty() != chosen->key.empty()) {
    return Invalid(
        path, absl::StrCat(where, chosen->cert.empty() ? "key" : "cert",
                           ": needs ", chosen->cert.empty() ? "cert" : "key",
                           " too (mutual TLS takes both)"));
  }
  if (!chosen->cert.empty() && chosen->tls_ca.empty()) {
    return Invalid(path, absl::StrCat(where,
                                      "cert: needs tls-ca (a client "
                                      "certificate is sent only over TLS)"));
  }
  ClientOptions options;
  options.target = chosen->server;
  options.tls_ca_file = Beside(path, chosen->tls_ca);
  options.tls_cert_file = Beside(path, chosen->cert);
  options.tls_key_file = Beside(path, chosen->key);
  options.token_file = Beside(path, chosen->token_file);
  options.tls_server_name = chosen->tls_server_name;
  return options;
}

}  // namespace kq::client
