#pragma once

// FederationService: the calls a MultiKueue manager kqd makes on this kqd
// as one of its workers (proto/kq/v1/federation_service.proto). Each call
// is one engine batch; the rules are admission::AdmissionState's copy
// calls.

#include "kq/v1/federation_service.grpc.pb.h"

#include "server/auth/grpc_access.h"
#include "server/engine/engine.h"

namespace kq::api {

// Thread-safe: blocking handlers; the engine serializes. Every call is
// authorized first, at the cluster scope, as `workloads/multikueue` in
// kueue.x-k8s.io with verb create (UpsertRemote), delete (DeleteRemote) or
// update (the rest): a manager holds every namespace's copies, so its
// identity needs a ClusterRole (the built-in kq-multikueue-manager-role).
class FederationServiceImpl final : public v1::FederationService::Service {
 public:
  FederationServiceImpl(engine::Engine& engine, auth::GrpcAccess& access)
      : engine_(engine), access_(access) {}

  grpc::Status UpsertRemote(grpc::ServerContext* context,
                            const v1::UpsertRemoteRequest* request,
                            v1::RemoteResponse* response) override;
  grpc::Status DeleteRemote(grpc::ServerContext* context,
                            const v1::RemoteRequest* request,
                            v1::RemoteResponse* response) override;
  grpc::Status BindRemote(grpc::ServerContext* context,
                          const v1::RemoteRequest* request,
                          v1::RemoteResponse* response) override;
  grpc::Status RenewRemote(grpc::ServerContext* context,
                           const v1::RemoteRequest* request,
                           v1::RemoteResponse* response) override;
  grpc::Status DeactivateRemote(grpc::ServerContext* context,
                                const v1::RemoteRequest* request,
                                v1::RemoteResponse* response) override;

 private:
  // Runs `calls` (authorized) and fills `response`.
  grpc::Status Run(std::vector<engine::RemoteCall> calls, v1::TemplateForm form,
                   v1::RemoteResponse* response);
  // Authorizes `verb`, then runs the items as `kind` calls.
  grpc::Status Items(grpc::ServerContext* context, const char* verb,
                     engine::RemoteCall::Kind kind,
                     const v1::RemoteRequest& request,
                     v1::RemoteResponse* response);

  engine::Engine& engine_;
  auth::GrpcAccess& access_;
};

}  // namespace kq::api
