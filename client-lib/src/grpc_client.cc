// GrpcClient: kq::client::Client over generated gRPC stubs. Every call is a
// plain blocking unary call with a per-call deadline; the only translation
// is grpc::Status -> absl::Status, done in FromGrpcStatus.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/status.h"
#include "kq/v1/admin_service.grpc.pb.h"
#include "kq/v1/queue_service.grpc.pb.h"

#include "kq/client/client.h"

namespace kq::client {
namespace {

// Maps a gRPC status to the absl::Status with the same canonical code and
// message. Both enumerations use the canonical google.rpc.Code numbering, so
// the cast is exact; the server side does the inverse in ToGrpcStatus.
absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) {
    return absl::OkStatus();
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

// Runs one unary call `method(context, request, response)` with the client's
// deadline and returns the response or the call's status.
template <typename Response, typename Request, typename Method>
absl::StatusOr<Response> Unary(absl::Duration deadline, const Request& request,
                               Method method) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  Response response;
  absl::Status status = FromGrpcStatus(method(&context, request, &response));
  if (!status.ok()) {
    return status;
  }
  return response;
}

// The gRPC implementation of Client. Thread-safe: the stubs and channel are
// thread-safe and each call uses its own ClientContext.
class GrpcClient : public Client {
 public:
  explicit GrpcClient(const ClientOptions& options)
      : deadline_(options.deadline),
        channel_(grpc::CreateChannel(options.target,
                                     grpc::InsecureChannelCredentials())),
        admin_(v1::AdminService::NewStub(channel_)),
        queue_(v1::QueueService::NewStub(channel_)) {}

  absl::StatusOr<v1::ApplyResponse> Apply(
      const v1::ApplyRequest& request) override {
    return Unary<v1::ApplyResponse>(
        deadline_, request, [this](auto* context, auto& req, auto* resp) {
          return admin_->Apply(context, req, resp);
        });
  }

  absl::Status Delete(const std::string& kind,
                      const std::string& namespace_name,
                      const std::string& name) override {
    v1::DeleteRequest request;
    request.set_kind(kind);
    request.set_namespace_(namespace_name);
    request.set_name(name);
    return Unary<v1::DeleteResponse>(
               deadline_, request,
               [this](auto* context, auto& req, auto* resp) {
                 return admin_->Delete(context, req, resp);
               })
        .status();
  }

  absl::StatusOr<v1::ConfigObject> GetObject(const std::string& kind,
                                             const std::string& namespace_name,
                                             const std::string& name) override {
    v1::GetObjectRequest request;
    request.set_kind(kind);
    request.set_namespace_(namespace_name);
    request.set_name(name);
    absl::StatusOr<v1::GetObjectResponse> response =
        Unary<v1::GetObjectResponse>(
            deadline_, request, [this](auto* context, auto& req, auto* resp) {
              return admin_->GetObject(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_object());
  }

  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const std::string& kind, const std::string& namespace_name) override {
    v1::ListObjectsRequest request;
    request.set_kind(kind);
    request.set_namespace_(namespace_name);
    return Unary<v1::ListObjectsResponse>(
        deadline_, request, [this](auto* context, auto& req, auto* resp) {
          return admin_->ListObjects(context, req, resp);
        });
  }

  absl::StatusOr<v1::SubmitWorkloadResponse> SubmitWorkload(
      const v1::Workload& workload) override {
    v1::SubmitWorkloadRequest request;
    *request.mutable_workload() = workload;
    return Unary<v1::SubmitWorkloadResponse>(
        deadline_, request, [this](auto* context, auto& req, auto* resp) {
          return queue_->SubmitWorkload(context, req, resp);
        });
  }

  absl::StatusOr<v1::GetWorkloadResponse> GetWorkload(
      const std::string& namespace_name, const std::string& name) override {
    v1::GetWorkloadRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    return Unary<v1::GetWorkloadResponse>(
        deadline_, request, [this](auto* context, auto& req, auto* resp) {
          return queue_->GetWorkload(context, req, resp);
        });
  }

  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) override {
    return Unary<v1::ListWorkloadsResponse>(
        deadline_, request, [this](auto* context, auto& req, auto* resp) {
          return queue_->ListWorkloads(context, req, resp);
        });
  }

  absl::StatusOr<v1::Workload> CancelWorkload(
      const std::string& namespace_name, const std::string& name) override {
    v1::CancelWorkloadRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    absl::StatusOr<v1::CancelWorkloadResponse> response =
        Unary<v1::CancelWorkloadResponse>(
            deadline_, request, [this](auto* context, auto& req, auto* resp) {
              return queue_->CancelWorkload(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::Workload> SetAdmissionCheckState(
      const v1::SetAdmissionCheckStateRequest& request) override {
    absl::StatusOr<v1::SetAdmissionCheckStateResponse> response =
        Unary<v1::SetAdmissionCheckStateResponse>(
            deadline_, request, [this](auto* context, auto& req, auto* resp) {
              return admin_->SetAdmissionCheckState(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::StatusOr<v1::Workload> FinishWorkload(
      const std::string& namespace_name, const std::string& name,
      bool succeeded, const std::string& message) override {
    v1::FinishWorkloadRequest request;
    request.set_namespace_(namespace_name);
    request.set_name(name);
    request.set_succeeded(succeeded);
    request.set_message(message);
    absl::StatusOr<v1::FinishWorkloadResponse> response =
        Unary<v1::FinishWorkloadResponse>(
            deadline_, request, [this](auto* context, auto& req, auto* resp) {
              return queue_->FinishWorkload(context, req, resp);
            });
    if (!response.ok()) {
      return response.status();
    }
    return std::move(*response->mutable_workload());
  }

  absl::Status Watch(
      const v1::WatchRequest& request,
      const std::function<bool(const v1::WatchEvent&)>& on_event) override {
    // No deadline: a watch is meant to stay open until the caller stops it.
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
        queue_->Watch(&context, request);
    v1::WatchEvent event;
    while (reader->Read(&event)) {
      if (!on_event(event)) {
        // The caller is done: cancel the stream, then drain Finish() so the
        // call is cleaned up. Its CANCELLED status is expected, not an error.
        context.TryCancel();
        reader->Finish().IgnoreError();
        return absl::OkStatus();
      }
    }
    return FromGrpcStatus(reader->Finish());
  }

 private:
  const absl::Duration deadline_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
  std::unique_ptr<v1::QueueService::Stub> queue_;
};

}  // namespace

std::unique_ptr<Client> NewGrpcClient(const ClientOptions& options) {
  return std::make_unique<GrpcClient>(options);
}

}  // namespace kq::client
