#pragma once

// The audit log (--audit-log): one JSON object a line, the fields of
// Kubernetes' audit Event (audit.k8s.io/v1, level Metadata: who, what,
// which object, the answer and the authorization decision, never a body,
// token or key). Calls hand events to a bounded queue and never wait: a
// thread of its own formats and writes them, so the engine thread and the
// gRPC threads never block on the disk. When the queue is full the event
// is dropped and counted (kq_audit_events_dropped_total); Kubernetes'
// batch backend does the same.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#include "server/auth/auth_metrics.h"
#include "server/auth/principal.h"
#include "server/auth/rbac.h"

namespace spdlog::sinks {
class sink;
}

namespace kq::auth {

struct AuditEvent {
  std::string audit_id;
  absl::Time received;
  absl::Time completed;
  // Who: empty user name when authentication failed.
  std::optional<Principal> principal;
  std::string source_ip;
  std::string user_agent;
  // The full gRPC method ("/kq.v1.QueueService/CancelWorkload") or the
  // HTTP method and path ("GET /metrics").
  std::string method;
  std::string verb;
  std::string api_group;
  std::string resource;
  std::string subresource;
  std::string namespace_name;
  std::string name;
  // The answer: a gRPC status code, or an HTTP status for the HTTP port.
  int code = 0;
  std::string message;
  // allow or forbid, and why (the binding, or the refusal).
  bool allowed = false;
  std::string reason;
};

// Names `request` in `event`: its verb and objectRef (no API group for a
// non-resource path).
void DescribeRequest(const Attributes& request, AuditEvent& event);

// The event as one line of JSON (no newline).
std::string AuditEventJson(const AuditEvent& event);

// A random version 4 UUID.
std::string NewAuditId();

struct AuditLogOptions {
  // A file, or "-" for standard output.
  std::string path;
  // Rotate at this size, keeping this many old files (kube-apiserver's
  // --audit-log-maxsize in megabytes and --audit-log-maxbackup).
  int max_size_mb = 100;
  int max_backups = 5;
  // Events waiting to be written before new ones are dropped.
  size_t queue_capacity = 100000;
};

class AuditLog {
 public:
  // Opens (creates) the file. `metrics` may be null and must outlive this.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(
      const AuditLogOptions& options, AuthMetrics* metrics);
  // Writes what is queued, then closes.
  ~AuditLog();

  // Never blocks on the writer.
  void Record(AuditEvent event);
  // Blocks until every event recorded before the call is written (tests,
  // shutdown).
  void Flush();
  uint64_t dropped() const;

 private:
  AuditLog(const AuditLogOptions& options,
           std::shared_ptr<spdlog::sinks::sink> sink, AuthMetrics* metrics);
  void Run();

  const AuditLogOptions options_;
  std::shared_ptr<spdlog::sinks::sink> sink_;
  AuthMetrics* metrics_;
  mutable absl::Mutex mu_;
  std::deque<AuditEvent> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t recorded_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int flushes_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread writer_;
};

}  // namespace kq::auth
