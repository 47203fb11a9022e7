#pragma once

// Kueue's on-demand visibility API over HTTP, answered as Kueue's
// aggregated API server answers it (pkg/visibility, group
// visibility.kueue.x-k8s.io, version v1beta2):
//
//   GET
//   /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/{name}/pendingworkloads
//   GET
//   /apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/{ns}/localqueues/{name}/pendingworkloads
//
// with the query parameters `offset` (default 0) and `limit` (default
// 1000, at most 100000). A success is a PendingWorkloadsSummary, field for
// field and in Kueue's field order; a failure is a Kubernetes Status
// (kind Status, apiVersion v1) with Kubernetes' reason and code: 404
// NotFound for an unknown queue, 400 BadRequest naming the parameter for a
// bad offset or limit (details.causes[0].field), 405 MethodNotAllowed, 503
// ServiceUnavailable while kqd stops. Bodies are JSON (Content-Type
// application/json).
//
// This module serves no port: kqd's HTTP server hands it the requests
// under kPathPrefix. Each call makes one engine read and blocks until the
// engine answers (a few milliseconds: the read runs with the engine's next
// batch). Thread-safe, as the engine is.
//
// Example (an HTTP handler):
//   if (absl::StartsWith(path, visibility::kPathPrefix)) {
//     visibility::HttpAnswer answer =
//         visibility::Serve(engine, method, path, query);
//     reply(answer.status, "application/json", answer.body);
//   }

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

#include "server/admission/pending_workloads.h"
#include "server/engine/engine.h"

namespace kq::visibility {

// Kueue's API group, and the path prefix of its version.
inline constexpr char kGroup[] = "visibility.kueue.x-k8s.io";
inline constexpr char kGroupVersion[] = "visibility.kueue.x-k8s.io/v1beta2";
inline constexpr char kPathPrefix[] =
    "/apis/visibility.kueue.x-k8s.io/v1beta2/";

// An HTTP response: status code and JSON body.
struct HttpAnswer {
  int status = 200;
  std::string body;
};

// Decoded query parameters (name -> first value, as Kubernetes reads a
// repeated parameter). Parameters other than offset and limit are ignored,
// as Kubernetes ignores them.
using Query = std::map<std::string, std::string>;

// GET clusterqueues/{cluster_queue}/pendingworkloads.
HttpAnswer ClusterQueuePendingWorkloads(engine::Engine& engine,
                                        const std::string& cluster_queue,
                                        const Query& query);

// GET namespaces/{namespace_name}/localqueues/{name}/pendingworkloads.
HttpAnswer LocalQueuePendingWorkloads(engine::Engine& engine,
                                      const std::string& namespace_name,
                                      const std::string& name,
                                      const Query& query);

// Routes a request for `path` (decoded, without the query string) under
// kPathPrefix to the functions above. Other paths under the prefix are 404
// NotFound, and methods other than GET on the two resources 405
// MethodNotAllowed (Kueue's resources are read-only), each as a Status.
HttpAnswer Serve(engine::Engine& engine, absl::string_view method,
                 absl::string_view path, const Query& query);

// ---- Rendering (no engine) ----------------------------------------------

// The PendingWorkloadsSummary of `items`, as Kueue's JSON:
//   {"kind":"PendingWorkloadsSummary",
//    "apiVersion":"visibility.kueue.x-k8s.io/v1beta2",
//    "metadata":{"creationTimestamp":null},
//    "items":[{"metadata":{"name","namespace","creationTimestamp"},
//              "priority","localQueueName","positionInClusterQueue",
//              "positionInLocalQueue"}, ...]}
// Kueue's item metadata also carries the workload's ownerReferences, which
// kq's workloads do not have: they are left out, as Kueue leaves out an
// empty list.
std::string PendingWorkloadsSummaryJson(
    const std::vector<admission::PendingWorkload>& items);

// A Kubernetes Status for `status` (not OK) about a request for the
// pending workloads of `resource` ("clusterqueue" or "localqueue") named
// `name`: NotFound says `clusterqueue.visibility.kueue.x-k8s.io "name" not
// found` with details {name, group, kind}, as Kueue's
// errors.NewNotFound(visibility.Resource(resource), name); InvalidArgument
// is 400 BadRequest; Unavailable 503; DeadlineExceeded 504 Timeout; any
// other code 500 InternalError.
HttpAnswer StatusAnswer(const absl::Status& status, absl::string_view resource,
                        absl::string_view name);

}  // namespace kq::visibility
