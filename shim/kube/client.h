#pragma once

// A small client of the Kubernetes REST API, for the resources the shim
// uses (batch/v1 Jobs, v1 Events and PodTemplates, autoscaling.x-k8s.io/v1
// ProvisioningRequests). Objects are plain JSON as the API server sends
// them; the shim reads and writes only the fields it owns.
//
// Errors map HTTP statuses to absl codes so callers can tell them apart:
//   404 NotFound               -> NOT_FOUND
//   409 AlreadyExists (create) -> ALREADY_EXISTS
//   409 Conflict (stale resourceVersion on update) -> ABORTED
//   410 Gone (expired resourceVersion, also as a watch ERROR event)
//                              -> OUT_OF_RANGE
//   400 / 422 Invalid          -> INVALID_ARGUMENT
//   401                        -> UNAUTHENTICATED
//   403                        -> PERMISSION_DENIED
//   429, 5xx, connection/TLS failures, after the retries -> UNAVAILABLE
//   (a server certificate the configured CA does not verify is UNAVAILABLE
//   at once, without retries: another attempt cannot fix it)
//   405 -> UNIMPLEMENTED, 412 -> FAILED_PRECONDITION, 406/413/415 ->
//   INVALID_ARGUMENT, any other status -> UNKNOWN
// Messages carry the method, the path and the API server's Status message
// and reason, e.g. `PUT /apis/batch/v1/namespaces/ns/jobs/a: Operation
// cannot be fulfilled ... (HTTP 409 Conflict)`.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace kq::shim::kube {

using json = nlohmann::json;

// How to reach and authenticate to the API server.
struct Config {
  // "https://host:port" (http:// is accepted for tests).
  std::string server;
  // PEM CA bundle that signs the server's certificate: a file or the data.
  std::string certificate_authority_file;
  std::string certificate_authority_data;
  // Client certificate authentication (PEM), file or data.
  std::string client_certificate_file;
  std::string client_certificate_data;
  std::string client_key_file;
  std::string client_key_data;
  // Bearer token, or a file holding it (re-read on every request, as
  // projected service-account tokens rotate).
  std::string bearer_token;
  std::string bearer_token_file;
  bool insecure_skip_tls_verify = false;
  // The context's namespace ("default" when unset).
  std::string default_namespace = "default";
};

// In-cluster configuration: KUBERNETES_SERVICE_HOST/PORT and the service
// account's token, ca.crt and namespace under `secret_dir`, as client-go's
// rest.InClusterConfig: the server is https://HOST:PORT (an IPv6 HOST
// bracketed), the token is read from `secret_dir`/token on every request,
// ca.crt is used when present (the system's CAs otherwise) and the
// namespace file sets default_namespace when present. FAILED_PRECONDITION
// when the variables are unset (not in a cluster) or the token file is
// unreadable.
absl::StatusOr<Config> LoadInClusterConfig(
    const std::string& secret_dir =
        "/var/run/secrets/kubernetes.io/serviceaccount");

// A kubeconfig file (YAML): `context` or the file's current-context; its
// cluster (server, certificate-authority[-data],
// insecure-skip-tls-verify), user (token, tokenFile, client-certificate
// [-data], client-key[-data]) and namespace. Relative file paths are
// resolved against the kubeconfig's directory; inline data wins over a
// file, and a token over a tokenFile. INVALID_ARGUMENT naming the field
// for anything missing or malformed, e.g. `contexts[name="x"].context.
// cluster: cluster "y" not found`; exec, auth-provider and basic-auth
// (username/password) users are refused with UNIMPLEMENTED; an unreadable
// file is FAILED_PRECONDITION.
absl::StatusOr<Config> LoadKubeconfig(const std::string& path,
                                      const std::string& context = "");

// One resource type of the API, e.g. {"batch", "v1", "jobs", true}.
struct Resource {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;
  bool namespaced = true;
};

inline const Resource kJobs{"batch", "v1", "jobs", true};
inline const Resource kPods{"", "v1", "pods", true};
inline const Resource kEvents{"", "v1", "events", true};
inline const Resource kPodTemplates{"", "v1", "podtemplates", true};
inline const Resource kProvisioningRequests{"autoscaling.x-k8s.io", "v1",
                                            "provisioningrequests", true};

// "/apis/batch/v1/namespaces/ns/jobs[/name]" (core: "/api/v1/...").
// Empty namespace on a namespaced resource means all namespaces.
std::string ResourcePath(const Resource& resource, const std::string& ns,
                         const std::string& name = "");

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  // Page size; 0 asks for everything at once. List follows `continue`
  // tokens itself and returns every item.
  int64_t limit = 500;
};

struct ListResult {
  std::vector<json> items;
  // The list's metadata.resourceVersion: watch from here.
  std::string resource_version;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };

struct WatchEvent {
  WatchEventType type;
  json object;
};

// "ADDED", "MODIFIED", "DELETED" or "BOOKMARK", as on the wire (for logs).
std::string WatchEventTypeName(WatchEventType type);

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  // Start after this resourceVersion (from a List or the last event).
  std::string resource_version;
  bool allow_watch_bookmarks = true;
  // The server ends the stream after this long (timeoutSeconds); Watch
  // then returns OK and the caller watches again from the last version.
  absl::Duration timeout = absl::Minutes(5);
  // Checked while the stream is idle or between events; when it becomes
  // true, Watch returns CANCELLED within about 100 ms.
  const std::atomic<bool>* stop = nullptr;
};

enum class PatchType {
  kJsonPatch,       // application/json-patch+json (RFC 6902)
  kMergePatch,      // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json
};

struct ClientOptions {
  // Per-request timeout (not for Watch, which uses WatchOptions::timeout).
  absl::Duration request_timeout = absl::Seconds(30);
  // Retries of 429/5xx/connection failures with exponential backoff
  // (jittered), for every verb: writes are made safe to repeat by their
  // resourceVersion preconditions, patches or names.
  int max_attempts = 5;
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  std::string user_agent = "kq-k8s-shim";
};

// Thread-safe: each call uses its own connection handle (connections are
// pooled and reused).
//
// Single-object calls (Get, Create, Update, Patch, Delete) on a namespaced
// resource with an empty `ns` use the object's metadata.namespace (Create,
// Update) or else Config::default_namespace; List and Watch with an empty
// `ns` span all namespaces.
class Client {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Create(
      Config config, ClientOptions options = {});
  virtual ~Client() = default;

  // GET /version: the server's gitVersion ("v1.30.0").
  virtual absl::StatusOr<std::string> ServerVersion() = 0;

  // INVALID_ARGUMENT for an empty name.
  virtual absl::StatusOr<json> Get(const Resource& resource,
                                   const std::string& ns,
                                   const std::string& name) = 0;
  // Items get the apiVersion and kind that list responses leave out. A
  // continue token that expires between pages (410) falls back to one
  // unpaginated list, as client-go's pager does.
  virtual absl::StatusOr<ListResult> List(const Resource& resource,
                                          const std::string& ns,
                                          const ListOptions& options = {}) = 0;
  // Streams events (chunked JSON, one object per line) to `on_event` until
  // the server ends the stream (OK), `on_event` returns false (OK), stop
  // is set (CANCELLED), or an error (410 -> OUT_OF_RANGE: list again).
  // BOOKMARK events carry only metadata.resourceVersion.
  // Failures before the stream starts are retried like other calls; a
  // connection that breaks mid-stream is UNAVAILABLE (watch again from the
  // last resourceVersion seen). Malformed events are INTERNAL.
  virtual absl::Status Watch(
      const Resource& resource, const std::string& ns,
      const WatchOptions& options,
      const std::function<bool(const WatchEvent&)>& on_event) = 0;
  virtual absl::StatusOr<json> Create(const Resource& resource,
                                      const std::string& ns,
                                      const json& object) = 0;
  // PUT: `object` carries metadata.resourceVersion, so a stale write fails
  // with ABORTED instead of overwriting.
  virtual absl::StatusOr<json> Update(const Resource& resource,
                                      const std::string& ns,
                                      const json& object) = 0;
  virtual absl::StatusOr<json> Patch(const Resource& resource,
                                     const std::string& ns,
                                     const std::string& name, PatchType type,
                                     const json& patch) = 0;
  // DELETE with propagationPolicy=Background; with `uid`, a precondition
  // so only that incarnation of the name is deleted. NOT_FOUND if absent.
  virtual absl::Status Delete(const Resource& resource, const std::string& ns,
                              const std::string& name,
                              const std::string& uid = "") = 0;
};

// metadata.resourceVersion of an API object, "" when absent.
std::string ResourceVersionOf(const json& object);

// Whether `incoming` may replace `cached` in an informer's cache:
// resourceVersions are opaque, but when both are numbers (etcd revisions)
// an older one is a stale event.
bool NotOlder(const json& incoming, const json& cached);

// Records a core/v1 Event about `involved` (any object with apiVersion,
// kind and metadata), as `kubectl describe` shows it: type "Normal" or
// "Warning", a CamelCase reason and a message. Source component
// "kq-k8s-shim". Best effort is the caller's choice: the status says
// whether it was stored.
absl::Status RecordEvent(Client& client, const json& involved,
                         const std::string& type, const std::string& reason,
                         const std::string& message);

}  // namespace kq::shim::kube
