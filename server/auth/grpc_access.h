#pragma once

// Access on the gRPC port. gRPC C++ gives a server no way to refuse a call
// before its handler (interceptors cannot reject one; an
// AuthMetadataProcessor cannot see the method and aborts under insecure
// credentials), so every kq handler starts with Check, and one
// interceptor per call writes the call's audit event once its status is
// known, adding the event's ID to the trailing metadata (kq-audit-id).

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_interceptor.h"

#include "server/auth/access.h"
#include "server/auth/audit_log.h"

namespace kq::auth {

// The trailing metadata key naming the call's audit event.
inline constexpr char kAuditIdKey[] = "kq-audit-id";

class GrpcAccess {
 public:
  // `access` and `audit` (null: no audit log) must outlive this, and this
  // the server.
  GrpcAccess(Access& access, AuditLog* audit);
  ~GrpcAccess();

  // For grpc::ServerBuilder's interceptors; null without an audit log.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
  NewAuditInterceptorFactory();

  // Authenticates the call and authorizes `request`: the caller, or the
  // status to answer (UNAUTHENTICATED, PERMISSION_DENIED).
  absl::StatusOr<Principal> Check(const grpc::ServerContextBase& context,
                                  const Attributes& request);
  // The two halves, for calls that authorize several requests (Apply's
  // objects, Watch's kinds).
  absl::StatusOr<Principal> Authenticate(
      const grpc::ServerContextBase& context);
  absl::Status Authorize(const grpc::ServerContextBase& context,
                         const Principal& principal, const Attributes& request);
  // Whether `principal` may make `request`, without recording a decision
  // (Watch's filtering of kinds it was not asked for).
  bool Allows(const Principal& principal, const Attributes& request) const;
  // Records that the call was allowed for another reason (the owner rule).
  void RecordAllowed(const grpc::ServerContextBase& context,
                     const Attributes& request, std::string reason);

  Access& access() { return access_; }

 private:
  struct Call;
  class Interceptor;
  class Factory;

  // The audit record of the call, or null without an audit log.
  std::shared_ptr<Call> CallOf(const grpc::ServerContextBase& context);
  void Record(const grpc::ServerContextBase& context, const Attributes& request,
              const Decision& decision);

  Access& access_;
  AuditLog* audit_;
  absl::Mutex mu_;
  absl::flat_hash_map<const grpc::ServerContextBase*, std::shared_ptr<Call>>
      calls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kq::auth
