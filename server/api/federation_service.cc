#include "server/api/federation_service.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "server/api/authorization.h"
#include "server/api/status_convert.h"
#include "server/codec/codec.h"

namespace kq::api {

namespace {

// Items per call: a manager coalesces its calls, but one call must not
// hold the engine thread for long.
constexpr int kMaxItems = 10000;

admission::RemoteRef RefOf(const v1::RemoteKey& key) {
  return admission::RemoteRef{{key.namespace_(), key.name()},
                              key.origin(),
                              key.origin_uid(),
                              key.epoch()};
}

absl::Duration LeaseOf(const v1::RemoteRequest& request) {
  const absl::Duration lease = codec::FromProto(request.lease());
  return lease > absl::ZeroDuration() ? lease : absl::Seconds(30);
}

auth::Attributes CopiesRequest(const char* verb) {
  auth::Attributes request = WorkloadRequest(verb, "");
  request.subresource = "multikueue";
  return request;
}

absl::Status CheckSize(int items) {
  if (items == 0) return absl::InvalidArgumentError("items: required");
  if (items > kMaxItems) {
    return absl::InvalidArgumentError(
        absl::StrCat("items: at most ", kMaxItems, " per call, got ", items));
  }
  return absl::OkStatus();
}

}  // namespace

grpc::Status FederationServiceImpl::Run(std::vector<engine::RemoteCall> calls,
                                        v1::TemplateForm form,
                                        v1::RemoteResponse* response) {
  absl::StatusOr<engine::RemoteResults> results =
      engine_.RemoteCalls(std::move(calls));
  if (!results.ok()) return ToGrpcStatus(results.status());
  for (const engine::RemoteResult& result : results->results) {
    v1::RemoteItemResult* out = response->add_results();
    out->set_code(static_cast<int>(result.status.code()));
    out->set_message(std::string(result.status.message()));
    out->set_workload_revision(result.revision);
    if (result.workload.has_value()) {
      *out->mutable_workload() = codec::ToProto(*result.workload, form);
    }
    out->set_stop(result.stop);
    out->set_existed(result.existed);
  }
  response->set_revision(results->revision);
  return grpc::Status::OK;
}

grpc::Status FederationServiceImpl::UpsertRemote(
    grpc::ServerContext* context, const v1::UpsertRemoteRequest* request,
    v1::RemoteResponse* response) {
  absl::StatusOr<auth::Principal> principal =
      access_.Check(*context, CopiesRequest("create"));
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  if (absl::Status s = CheckSize(request->items_size()); !s.ok()) {
    return ToGrpcStatus(s);
  }
  std::vector<engine::RemoteCall> calls;
  calls.reserve(request->items_size());
  for (int i = 0; i < request->items_size(); ++i) {
    const v1::UpsertRemoteItem& item = request->items(i);
    absl::StatusOr<Workload> copy = codec::FromClientProto(item.workload());
    if (!copy.ok()) {
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat("items[", i, "].workload: ", copy.status().message())));
    }
    engine::RemoteCall call;
    call.kind = engine::RemoteCall::Kind::kUpsert;
    call.ref = RefOf(item.key());
    call.copy = *std::move(copy);
    call.omit_workload = request->omit_workloads();
    calls.push_back(std::move(call));
  }
  return Run(std::move(calls), request->template_form(), response);
}

grpc::Status FederationServiceImpl::Items(grpc::ServerContext* context,
                                          const char* verb,
                                          engine::RemoteCall::Kind kind,
                                          const v1::RemoteRequest& request,
                                          v1::RemoteResponse* response) {
  absl::StatusOr<auth::Principal> principal =
      access_.Check(*context, CopiesRequest(verb));
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  if (absl::Status s = CheckSize(request.items_size()); !s.ok()) {
    return ToGrpcStatus(s);
  }
  std::vector<engine::RemoteCall> calls;
  calls.reserve(request.items_size());
  for (const v1::RemoteItem& item : request.items()) {
    engine::RemoteCall call;
    call.kind = kind;
    call.ref = RefOf(item.key());
    call.lease = LeaseOf(request);
    call.stopped = item.stopped();
    call.fence = request.fence();
    call.message = item.message();
    call.omit_workload = request.omit_workloads();
    calls.push_back(std::move(call));
  }
  return Run(std::move(calls), v1::TEMPLATE_FORM_STRUCT, response);
}

grpc::Status FederationServiceImpl::DeleteRemote(
    grpc::ServerContext* context, const v1::RemoteRequest* request,
    v1::RemoteResponse* response) {
  return Items(context, "delete", engine::RemoteCall::Kind::kDelete, *request,
               response);
}

grpc::Status FederationServiceImpl::BindRemote(grpc::ServerContext* context,
                                               const v1::RemoteRequest* request,
                                               v1::RemoteResponse* response) {
  return Items(context, "update", engine::RemoteCall::Kind::kBind, *request,
               response);
}

grpc::Status FederationServiceImpl::RenewRemote(
    grpc::ServerContext* context, const v1::RemoteRequest* request,
    v1::RemoteResponse* response) {
  return Items(context, "update", engine::RemoteCall::Kind::kRenew, *request,
               response);
}

grpc::Status FederationServiceImpl::DeactivateRemote(
    grpc::ServerContext* context, const v1::RemoteRequest* request,
    v1::RemoteResponse* response) {
  return Items(context, "update", engine::RemoteCall::Kind::kDeactivate,
               *request, response);
}

}  // namespace kq::api
