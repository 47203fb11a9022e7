#include "shim/kube/client.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "base/status_macros.h"
#include "shim/kube/transport.h"

namespace kq::shim::kube {
namespace {

// A JSON value that may be absent or of another type, read without
// exceptions (nlohmann's value() throws on non-objects).
std::string StringAt(const json& object, absl::string_view key) {
  if (!object.is_object()) return "";
  auto it = object.find(std::string(key));
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

const json& ObjectAt(const json& object, absl::string_view key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(std::string(key));
  return it == object.end() ? kNull : *it;
}

// Serialization never throws: invalid UTF-8 is replaced, not an exception.
std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<json> ParseBody(const HttpRequest& request,
                               const HttpResponse& response) {
  json value = json::parse(response.body, nullptr, false);
  if (value.is_discarded()) {
    return absl::InternalError(absl::StrCat(
        request.method, " ", request.path,
        ": the response is not JSON: ", response.body.substr(0, 200)));
  }
  return value;
}

std::string GroupVersion(const Resource& resource) {
  return resource.group.empty()
             ? resource.version
             : absl::StrCat(resource.group, "/", resource.version);
}

// Appends "&name=value" (or "?name=value" for the first parameter).
void AddQuery(std::string& path, absl::string_view name,
              absl::string_view value) {
  absl::StrAppend(&path, absl::StrContains(path, '?') ? "&" : "?", name, "=",
                  QueryEscape(value));
}

}  // namespace

std::string WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
  }
  return "";
}

namespace {

class CurlClient final : public Client {
 public:
  CurlClient(std::unique_ptr<HttpTransport> transport,
             std::string default_namespace)
      : transport_(std::move(transport)),
        default_namespace_(std::move(default_namespace)) {}

  absl::StatusOr<std::string> ServerVersion() override {
    HttpRequest request{.method = "GET", .path = "/version"};
    KQ_ASSIGN_OR_RETURN(HttpResponse response, transport_->Send(request));
    KQ_ASSIGN_OR_RETURN(json info, ParseBody(request, response));
    std::string version = StringAt(info, "gitVersion");
    if (version.empty()) {
      return absl::InternalError("GET /version: no gitVersion in the answer");
    }
    return version;
  }

  absl::StatusOr<json> Get(const Resource& resource, const std::string& ns,
                           const std::string& name) override {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("get ", resource.plural, ": empty name"));
    }
    HttpRequest request{
        .method = "GET",
        .path = ResourcePath(resource, NamespaceFor(resource, ns), name)};
    KQ_ASSIGN_OR_RETURN(HttpResponse response, transport_->Send(request));
    return ParseBody(request, response);
  }

  absl::StatusOr<ListResult> List(const Resource& resource,
                                  const std::string& ns,
                                  const ListOptions& options) override {
    absl::StatusOr<ListResult> result = ListPages(resource, ns, options);
    if (result.status().code() == absl::StatusCode::kOutOfRange &&
        options.limit > 0) {
      // The continue token expired between pages (410): like client-go's
      // pager, fall back to one full list, which is a consistent snapshot.
      ListOptions full = options;
      full.limit = 0;
      return ListPages(resource, ns, full);
    }
    return result;
  }

  absl::Status Watch(
      const Resource& resource, const std::string& ns,
      const WatchOptions& options,
      const std::function<bool(const WatchEvent&)>& on_event) override {
    HttpRequest request{.method = "GET", .path = ResourcePath(resource, ns)};
    AddQuery(request.path, "watch", "true");
    if (!options.resource_version.empty()) {
      AddQuery(request.path, "resourceVersion", options.resource_version);
    }
    if (options.allow_watch_bookmarks) {
      AddQuery(request.path, "allowWatchBookmarks", "true");
    }
    if (!options.label_selector.empty()) {
      AddQuery(request.path, "labelSelector", options.label_selector);
    }
    if (!options.field_selector.empty()) {
      AddQuery(request.path, "fieldSelector", options.field_selector);
    }
    const int64_t timeout_seconds =
        std::max<int64_t>(1, absl::ToInt64Seconds(options.timeout));
    AddQuery(request.path, "timeoutSeconds", absl::StrCat(timeout_seconds));

    std::string pending;  // a line not complete yet
    absl::Status outcome;
    bool cancelled = false;
    // Handles one line of the stream; false ends the watch.
    auto handle_line = [&](absl::string_view line) -> bool {
      line = absl::StripAsciiWhitespace(line);
      if (line.empty()) return true;
      if (options.stop != nullptr && options.stop->load()) {
        cancelled = true;
        return false;
      }
      json event = json::parse(line.begin(), line.end(), nullptr, false);
      const std::string type = StringAt(event, "type");
      const json& object = ObjectAt(event, "object");
      if (event.is_discarded() || type.empty() || !object.is_object()) {
        outcome = absl::InternalError(
            absl::StrCat("watch ", PathOnly(request.path),
                         ": malformed event: ", line.substr(0, 200)));
        return false;
      }
      WatchEvent parsed;
      if (type == "ADDED") {
        parsed.type = WatchEventType::kAdded;
      } else if (type == "MODIFIED") {
        parsed.type = WatchEventType::kModified;
      } else if (type == "DELETED") {
        parsed.type = WatchEventType::kDeleted;
      } else if (type == "BOOKMARK") {
        parsed.type = WatchEventType::kBookmark;
      } else if (type == "ERROR") {
        // The object is a Status; 410 Expired means the resourceVersion
        // fell out of the server's watch window.
        int code = 500;
        if (auto it = object.find("code");
            it != object.end() && it->is_number_integer()) {
          code = it->get<int>();
        }
        outcome = StatusFromHttp(request, code, Dump(object));
        return false;
      } else {
        outcome = absl::InternalError(
            absl::StrCat("watch ", PathOnly(request.path),
                         ": unknown event type \"", type, "\""));
        return false;
      }
      parsed.object = object;
      return on_event(parsed);
    };

    absl::Status streamed = transport_->Stream(
        request, options.timeout + absl::Seconds(30), options.stop,
        [&](absl::string_view data) {
          pending.append(data.data(), data.size());
          size_t start = 0;
          for (size_t end;
               (end = pending.find('\n', start)) != std::string::npos;
               start = end + 1) {
            if (!handle_line(
                    absl::string_view(pending).substr(start, end - start))) {
              pending.clear();
              return false;
            }
          }
          pending.erase(0, start);
          return true;
        });
    if (!outcome.ok()) return outcome;
    if (cancelled) return absl::CancelledError("stopped");
    if (!streamed.ok()) return streamed;
    // A last event the server did not end with a newline.
    if (!pending.empty()) {
      std::string last = std::move(pending);
      handle_line(last);
      if (!outcome.ok()) return outcome;
      if (cancelled) return absl::CancelledError("stopped");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<json> Create(const Resource& resource, const std::string& ns,
                              const json& object) override {
    HttpRequest request{
        .method = "POST",
        .path = ResourcePath(resource, NamespaceFor(resource, ns, &object)),
        .body = Dump(object)};
    KQ_ASSIGN_OR_RETURN(HttpResponse response, transport_->Send(request));
    return ParseBody(request, response);
  }

  absl::StatusOr<json> Update(const Resource& resource, const std::string& ns,
                              const json& object) override {
    const std::string name = StringAt(ObjectAt(object, "metadata"), "name");
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "update ", resource.plural, ": the object has no metadata.name"));
    }
    HttpRequest request{
        .method = "PUT",
        .path =
            ResourcePath(resource, NamespaceFor(resource, ns, &object), name),
        .body = Dump(object)};
    KQ_ASSIGN_OR_RETURN(HttpResponse response, transport_->Send(request));
    return ParseBody(request, response);
  }

  absl::StatusOr<json> Patch(const Resource& resource, const std::string& ns,
                             const std::string& name, PatchType type,
                             const json& patch) override {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("patch ", resource.plural, ": empty name"));
    }
    HttpRequest request{
        .method = "PATCH",
        .path = ResourcePath(resource, NamespaceFor(resource, ns), name),
        .body = Dump(patch)};
    switch (type) {
      case PatchType::kJsonPatch:
        request.content_type = "application/json-patch+json";
        break;
      case PatchType::kMergePatch:
        request.content_type = "application/merge-patch+json";
        break;
      case PatchType::kStrategicMerge:
        request.content_type = "application/strategic-merge-patch+json";
        break;
    }
    KQ_ASSIGN_OR_RETURN(HttpResponse response, transport_->Send(request));
    return ParseBody(request, response);
  }

  absl::Status Delete(const Resource& resource, const std::string& ns,
                      const std::string& name,
                      const std::string& uid) override {
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("delete ", resource.plural, ": empty name"));
    }
    json options = {{"apiVersion", "v1"},
                    {"kind", "DeleteOptions"},
                    {"propagationPolicy", "Background"}};
    if (!uid.empty()) options["preconditions"] = {{"uid", uid}};
    HttpRequest request{
        .method = "DELETE",
        .path = ResourcePath(resource, NamespaceFor(resource, ns), name),
        .body = Dump(options)};
    return transport_->Send(request).status();
  }

 private:
  // Single-object calls need a namespace: the one given, else the object's
  // own, else the configuration's default.
  std::string NamespaceFor(const Resource& resource, const std::string& ns,
                           const json* object = nullptr) const {
    if (!resource.namespaced) return "";
    if (!ns.empty()) return ns;
    if (object != nullptr) {
      std::string own = StringAt(ObjectAt(*object, "metadata"), "namespace");
      if (!own.empty()) return own;
    }
    return default_namespace_;
  }

  static std::string PathOnly(absl::string_view path) {
    return std::string(path.substr(0, path.find('?')));
  }

  absl::StatusOr<ListResult> ListPages(const Resource& resource,
                                       const std::string& ns,
                                       const ListOptions& options) {
    ListResult result;
    std::string continue_token;
    do {
      HttpRequest request{.method = "GET", .path = ResourcePath(resource, ns)};
      if (!options.label_selector.empty()) {
        AddQuery(request.path, "labelSelector", options.label_selector);
      }
      if (!options.field_selector.empty()) {
        AddQuery(request.path, "fieldSelector", options.field_selector);
      }
      if (options.limit > 0) {
        AddQuery(request.path, "limit", absl::StrCat(options.limit));
      }
      if (!continue_token.empty()) {
        AddQuery(request.path, "continue", continue_token);
      }
      KQ_ASSIGN_OR_RETURN(HttpResponse response, transport_->Send(request));
      KQ_ASSIGN_OR_RETURN(json list, ParseBody(request, response));
      const json& metadata = ObjectAt(list, "metadata");
      // Every page of one list carries the snapshot's resourceVersion.
      result.resource_version = StringAt(metadata, "resourceVersion");
      continue_token = StringAt(metadata, "continue");
      // Items of a list leave out apiVersion and kind; restore them so
      // each object stands alone (RecordEvent needs them).
      std::string kind = StringAt(list, "kind");
      if (absl::EndsWith(kind, "List")) kind.resize(kind.size() - 4);
      const json& items = ObjectAt(list, "items");
      if (!items.is_array() && !items.is_null()) {
        return absl::InternalError(
            absl::StrCat("GET ", PathOnly(request.path),
                         ": the list's items are not an array"));
      }
      if (items.is_array()) {
        for (const json& item : items) {
          json object = item;
          if (object.is_object()) {
            if (!object.contains("apiVersion")) {
              object["apiVersion"] = GroupVersion(resource);
            }
            if (!object.contains("kind") && !kind.empty()) {
              object["kind"] = kind;
            }
          }
          result.items.push_back(std::move(object));
        }
      }
    } while (!continue_token.empty());
    return result;
  }

  std::unique_ptr<HttpTransport> transport_;
  const std::string default_namespace_;
};

}  // namespace

std::string ResourcePath(const Resource& resource, const std::string& ns,
                         const std::string& name) {
  std::string path =
      resource.group.empty()
          ? absl::StrCat("/api/", resource.version)
          : absl::StrCat("/apis/", resource.group, "/", resource.version);
  if (resource.namespaced && !ns.empty()) {
    absl::StrAppend(&path, "/namespaces/", ns);
  }
  absl::StrAppend(&path, "/", resource.plural);
  if (!name.empty()) absl::StrAppend(&path, "/", name);
  return path;
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(Config config,
                                                       ClientOptions options) {
  KQ_ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> transport,
                      HttpTransport::Create(config, options));
  std::string ns = config.default_namespace.empty() ? std::string("default")
                                                    : config.default_namespace;
  return std::unique_ptr<Client>(
      new CurlClient(std::move(transport), std::move(ns)));
}

std::string ResourceVersionOf(const json& object) {
  if (!object.is_object()) return "";
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  auto rv = metadata->find("resourceVersion");
  if (rv == metadata->end() || !rv->is_string()) return "";
  return rv->get<std::string>();
}

bool NotOlder(const json& incoming, const json& cached) {
  int64_t in = 0, have = 0;
  if (absl::SimpleAtoi(ResourceVersionOf(incoming), &in) &&
      absl::SimpleAtoi(ResourceVersionOf(cached), &have)) {
    return in >= have;
  }
  return true;
}

}  // namespace kq::shim::kube
