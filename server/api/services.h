#pragma once

// The gRPC edge: each handler converts the request, makes one engine call,
// converts the result back and maps the status. No admission logic here.

#include <functional>
#include <string>
#include <vector>

#include "kq/v1/admin_service.grpc.pb.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "server/api/reply_queue.h"
#include "server/api/watch_encodings.h"
#include "server/auth/grpc_access.h"
#include "server/engine/engine.h"

namespace kq::api {

// What an Admit call waits for, from its request and the call's deadline
// (absl::InfiniteFuture() without one). INVALID_ARGUMENT for a bad request.
absl::StatusOr<engine::AdmitWait> AdmitWaitOf(const v1::AdmitRequest& request,
                                              absl::Time call_deadline);
// The response of an Admit call that got its outcome, the workload's pod
// templates in `form`.
void FillAdmitResponse(const engine::AdmitOutcome& outcome,
                       v1::TemplateForm form, v1::AdmitResponse* response);

// Which queue a PendingWorkloads request names, and the page, checked:
// INVALID_ARGUMENT naming the field when it names no queue, both a
// ClusterQueue and a LocalQueue, a LocalQueue without its namespace (or
// the reverse), or a bad offset or limit.
absl::Status ValidatePendingWorkloadsRequest(
    const v1::PendingWorkloadsRequest& request);

// Thread-safe: gRPC calls handlers concurrently; the engine serializes.
// Every handler authorizes its call through `access` first, before it
// validates the request or looks anything up (authorization.h says which
// request each call is).
class AdminServiceImpl final : public v1::AdminService::Service {
 public:
  AdminServiceImpl(engine::Engine& engine, auth::GrpcAccess& access)
      : engine_(engine), access_(access) {}

  grpc::Status Apply(grpc::ServerContext* context,
                     const v1::ApplyRequest* request,
                     v1::ApplyResponse* response) override;
  grpc::Status Delete(grpc::ServerContext* context,
                      const v1::DeleteRequest* request,
                      v1::DeleteResponse* response) override;
  grpc::Status GetObject(grpc::ServerContext* context,
                         const v1::GetObjectRequest* request,
                         v1::GetObjectResponse* response) override;
  grpc::Status ListObjects(grpc::ServerContext* context,
                           const v1::ListObjectsRequest* request,
                           v1::ListObjectsResponse* response) override;
  grpc::Status SetAdmissionCheckState(
      grpc::ServerContext* context,
      const v1::SetAdmissionCheckStateRequest* request,
      v1::SetAdmissionCheckStateResponse* response) override;
  grpc::Status Preempt(grpc::ServerContext* context,
                       const v1::PreemptRequest* request,
                       v1::PreemptResponse* response) override;
  grpc::Status SetWorkloadActive(
      grpc::ServerContext* context, const v1::SetWorkloadActiveRequest* request,
      v1::SetWorkloadActiveResponse* response) override;
  grpc::Status SetStopPolicy(grpc::ServerContext* context,
                             const v1::SetStopPolicyRequest* request,
                             v1::SetStopPolicyResponse* response) override;
  grpc::Status SetNominatedClusters(
      grpc::ServerContext* context,
      const v1::SetNominatedClustersRequest* request,
      v1::SetNominatedClustersResponse* response) override;

 private:
  // Apply's check: per object, create when it is new, update when it
  // exists (looked up only when the caller may do one and not the other).
  absl::Status AuthorizeApply(const grpc::ServerContextBase& context,
                              const auth::Principal& principal,
                              const v1::ApplyRequest& request);

  engine::Engine& engine_;
  auth::GrpcAccess& access_;
};

// Thread-safe, as AdminServiceImpl. Admit is served asynchronously by
// AdmitCalls (a waiting call holds no thread). The calls launchers and
// runners make most (SubmitWorkload, FinishWorkload, CancelWorkload,
// Heartbeat) are callback handlers: the engine answers them after its
// commit and `replies_` finishes them, so a call in flight holds no thread
// either. The rest are blocking handlers.
class QueueServiceImpl final
    : public v1::QueueService::WithAsyncMethod_Admit<
          v1::QueueService::WithCallbackMethod_SubmitWorkload<
              v1::QueueService::WithCallbackMethod_FinishWorkload<
                  v1::QueueService::WithCallbackMethod_CancelWorkload<
                      v1::QueueService::WithCallbackMethod_Heartbeat<
                          v1::QueueService::Service>>>>> {
 public:
  QueueServiceImpl(engine::Engine& engine, auth::GrpcAccess& access)
      : engine_(engine), access_(access) {}

  // Admit's check (AdmitCalls serves the call): get, and create when the
  // request carries a workload, whose submitter it records.
  absl::StatusOr<auth::Principal> AuthorizeAdmit(
      const grpc::ServerContextBase& context, const v1::AdmitRequest& request);
  bool access_enabled() const { return access_.access().enabled(); }

  // What a MultiKueue manager's workers hold of a workload, for Explain
  // (the federation controller answers; unset, Explain says nothing of
  // copies). Set before serving.
  using CopyReporter = std::function<std::vector<v1::MultiKueueCopyState>(
      const NamespacedName& key)>;
  void set_copy_reporter(CopyReporter copies) { copies_ = std::move(copies); }

  grpc::ServerUnaryReactor* SubmitWorkload(
      grpc::CallbackServerContext* context,
      const v1::SubmitWorkloadRequest* request,
      v1::SubmitWorkloadResponse* response) override;
  grpc::Status GetWorkload(grpc::ServerContext* context,
                           const v1::GetWorkloadRequest* request,
                           v1::GetWorkloadResponse* response) override;
  grpc::Status ListWorkloads(grpc::ServerContext* context,
                             const v1::ListWorkloadsRequest* request,
                             v1::ListWorkloadsResponse* response) override;
  grpc::ServerUnaryReactor* CancelWorkload(
      grpc::CallbackServerContext* context,
      const v1::CancelWorkloadRequest* request,
      v1::CancelWorkloadResponse* response) override;
  grpc::ServerUnaryReactor* FinishWorkload(
      grpc::CallbackServerContext* context,
      const v1::FinishWorkloadRequest* request,
      v1::FinishWorkloadResponse* response) override;
  grpc::Status Watch(grpc::ServerContext* context,
                     const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::WatchEvent>* writer) override;
  grpc::Status WatchBatches(
      grpc::ServerContext* context, const v1::WatchRequest* request,
      grpc::ServerWriter<v1::WatchBatch>* writer) override;
  // Where ServeWatch's events go (defined in queue_service.cc).
  class WatchSink;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const v1::HeartbeatRequest* request,
                                      v1::HeartbeatResponse* response) override;
  grpc::Status SetReclaimablePods(
      grpc::ServerContext* context,
      const v1::SetReclaimablePodsRequest* request,
      v1::SetReclaimablePodsResponse* response) override;
  grpc::Status Explain(grpc::ServerContext* context,
                       const v1::ExplainRequest* request,
                       v1::ExplainResponse* response) override;
  grpc::Status Simulate(grpc::ServerContext* context,
                        const v1::SimulateRequest* request,
                        v1::SimulateResponse* response) override;
  grpc::Status PendingWorkloads(
      grpc::ServerContext* context, const v1::PendingWorkloadsRequest* request,
      v1::PendingWorkloadsResponse* response) override;

 private:
  // The `done` a callback handler gives the engine: on `replies_`'s thread
  // it finishes the call with the engine's error, or fills the response
  // from the engine's answer and finishes it OK. Defined in services.cc.
  template <typename T>
  std::function<void(absl::StatusOr<T>)> Answer(
      grpc::ServerUnaryReactor* reactor,
      std::function<void(const T&)> fill_response);

  // The runner calls' check: `run`, or the owner rule (the caller
  // submitted the workload) when --owner-may-run.
  absl::Status AuthorizeRun(const grpc::ServerContextBase& context,
                            const std::string& namespace_name,
                            const std::string& name);

  // Explain's and Simulate's victims in namespaces the caller may not read
  // keep their reason only.
  // Watch and WatchBatches: authorizes, then streams into `sink`.
  grpc::Status ServeWatch(grpc::ServerContext* context,
                          const v1::WatchRequest& request, WatchSink& sink);

  void HideVictimsOutOfSight(
      const auth::Principal& principal,
      google::protobuf::RepeatedPtrField<v1::PreemptionVictim>* victims) const;

  engine::Engine& engine_;
  auth::GrpcAccess& access_;
  CopyReporter copies_;
  ReplyQueue replies_;
  WatchEncodings encodings_;
};

}  // namespace kq::api
