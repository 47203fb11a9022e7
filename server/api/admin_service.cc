// AdminService (kq/v1/admin_service.proto): configuration objects and the
// operator's actions on workloads, each one engine call.

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "proto/util/config_object.h"
#include "server/api/authorization.h"
#include "server/api/proto_convert.h"
#include "server/api/services.h"
#include "server/api/status_convert.h"
#include "server/codec/codec.h"

namespace kq::api {
namespace {

// "objects[2] (ClusterQueue \"x\")" for error messages about a request item.
std::string ItemName(const std::string& field, int index,
                     const std::string& kind, const v1::ObjectMeta& meta) {
  std::string name = meta.name().empty() ? meta.generate_name() : meta.name();
  if (!meta.namespace_().empty()) name = meta.namespace_() + "/" + name;
  return absl::StrCat(field, "[", index, "] (", kind, " \"", name, "\")");
}

absl::StatusOr<ObjectKey> ParseKey(const std::string& kind_text,
                                   const std::string& namespace_name,
                                   const std::string& name) {
  ObjectKind kind;
  if (!ParseKind(kind_text, &kind) || kind == ObjectKind::kWorkload) {
    return absl::InvalidArgumentError(
        absl::StrCat("kind: unknown configuration kind \"", kind_text, "\""));
  }
  if (name.empty()) return absl::InvalidArgumentError("name: is required");
  if (IsNamespaced(kind) && namespace_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("namespace: is required for ", KindName(kind)));
  }
  return ObjectKey{kind, IsNamespaced(kind) ? namespace_name : "", name};
}

// The kind a request names, or INVALID_ARGUMENT: needed before the call
// can be authorized, and revealing nothing.
absl::StatusOr<ObjectKind> ConfigKind(const std::string& kind_text) {
  ObjectKind kind;
  if (!ParseKind(kind_text, &kind) || kind == ObjectKind::kWorkload) {
    return absl::InvalidArgumentError(
        absl::StrCat("kind: unknown configuration kind \"", kind_text, "\""));
  }
  return kind;
}

}  // namespace

absl::Status AdminServiceImpl::AuthorizeApply(
    const grpc::ServerContextBase& context, const auth::Principal& principal,
    const v1::ApplyRequest& request) {
  for (const v1::ConfigObject& proto : request.objects()) {
    ObjectKind kind;
    if (proto.kind_case() == v1::ConfigObject::KIND_NOT_SET ||
        !ParseKind(proto.GetDescriptor()
                       ->FindFieldByNumber(proto.kind_case())
                       ->message_type()
                       ->name(),
                   &kind)) {
      continue;  // decoding refuses it, naming the item
    }
    const v1::ObjectMeta& meta = proto_util::MetaOf(proto);
    auth::Attributes create =
        ObjectRequest("create", kind, meta.namespace_(), meta.name());
    auth::Attributes update = create;
    update.verb = "update";
    const bool may_create = access_.Allows(principal, create);
    const bool may_update = access_.Allows(principal, update);
    const auth::Attributes* asked = &create;
    if (may_create != may_update && !meta.name().empty()) {
      // Whether it exists decides. Only a caller with rights on the
      // object's own scope gets here, and learns no more than a create's
      // AlreadyExists would tell them.
      const ObjectKey key{kind, IsNamespaced(kind) ? meta.namespace_() : "",
                          meta.name()};
      asked = engine_.GetObject(key).ok() ? &update : &create;
    }
    KQ_RETURN_IF_ERROR(access_.Authorize(context, principal, *asked));
  }
  for (const v1::Workload& wl : request.workloads()) {
    // An existing workload is left unchanged by Apply: always a create.
    KQ_RETURN_IF_ERROR(
        access_.Authorize(context, principal,
                          WorkloadRequest("create", wl.metadata().namespace_(),
                                          wl.metadata().name())));
  }
  return absl::OkStatus();
}

grpc::Status AdminServiceImpl::Apply(grpc::ServerContext* context,
                                     const v1::ApplyRequest* request,
                                     v1::ApplyResponse* response) {
  absl::StatusOr<auth::Principal> principal = access_.Authenticate(*context);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  if (absl::Status s = AuthorizeApply(*context, *principal, *request);
      !s.ok()) {
    return ToGrpcStatus(s);
  }
  std::vector<ConfigObject> objects;
  for (int i = 0; i < request->objects_size(); ++i) {
    const v1::ConfigObject& proto = request->objects(i);
    absl::StatusOr<ConfigObject> object = codec::FromProto(proto);
    if (!object.ok()) {
      std::string kind = "object";
      if (proto.kind_case() != v1::ConfigObject::KIND_NOT_SET) {
        kind = proto.GetDescriptor()
                   ->FindFieldByNumber(proto.kind_case())
                   ->message_type()
                   ->name();
      }
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat(ItemName("objects", i, kind, proto_util::MetaOf(proto)),
                       ": ", object.status().message())));
    }
    objects.push_back(*std::move(object));
  }
  std::vector<Workload> workloads;
  for (int i = 0; i < request->workloads_size(); ++i) {
    absl::StatusOr<Workload> wl = codec::FromClientProto(request->workloads(i));
    if (!wl.ok()) {
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat(ItemName("workloads", i, "Workload",
                                request->workloads(i).metadata()),
                       ": ", wl.status().message())));
    }
    StampSubmitter(*principal, access_.access().enabled(), *wl);
    workloads.push_back(*std::move(wl));
  }
  absl::StatusOr<std::vector<engine::ApplyResult>> results =
      engine_.Apply(std::move(objects), std::move(workloads));
  if (!results.ok()) return ToGrpcStatus(results.status());
  for (const engine::ApplyResult& r : *results) {
    v1::ApplyResult* out = response->add_results();
    out->set_action(r.action);
    if (const auto* wl = std::get_if<Workload>(&r.object)) {
      *out->mutable_workload() = codec::ToProto(*wl, request->template_form());
    } else {
      *out->mutable_object() = codec::ToProto(std::get<ConfigObject>(r.object));
    }
    for (const std::string& w : r.warnings) out->add_warnings(w);
  }
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::Delete(grpc::ServerContext* context,
                                      const v1::DeleteRequest* request,
                                      v1::DeleteResponse*) {
  absl::StatusOr<ObjectKind> kind = ConfigKind(request->kind());
  if (!kind.ok()) return ToGrpcStatus(kind.status());
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context, ObjectRequest("delete", *kind, request->namespace_(),
                                  request->name()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<ObjectKey> key =
      ParseKey(request->kind(), request->namespace_(), request->name());
  if (!key.ok()) return ToGrpcStatus(key.status());
  return ToGrpcStatus(engine_.Delete(*key));
}

grpc::Status AdminServiceImpl::GetObject(grpc::ServerContext* context,
                                         const v1::GetObjectRequest* request,
                                         v1::GetObjectResponse* response) {
  absl::StatusOr<ObjectKind> kind = ConfigKind(request->kind());
  if (!kind.ok()) return ToGrpcStatus(kind.status());
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context,
          ObjectRequest("get", *kind, request->namespace_(), request->name()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<ObjectKey> key =
      ParseKey(request->kind(), request->namespace_(), request->name());
  if (!key.ok()) return ToGrpcStatus(key.status());
  absl::StatusOr<engine::ObjectView> view = engine_.GetObject(*key);
  if (!view.ok()) return ToGrpcStatus(view.status());
  *response->mutable_object() = ToProto(*view);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::ListObjects(
    grpc::ServerContext* context, const v1::ListObjectsRequest* request,
    v1::ListObjectsResponse* response) {
  absl::StatusOr<ObjectKind> kind = ConfigKind(request->kind());
  if (!kind.ok()) return ToGrpcStatus(kind.status());
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context, ObjectRequest("list", *kind, request->namespace_(), ""));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<engine::Listed<engine::ObjectView>> listed =
      engine_.ListObjects(*kind, request->namespace_());
  if (!listed.ok()) return ToGrpcStatus(listed.status());
  for (const engine::ObjectView& view : listed->items) {
    *response->add_objects() = ToProto(view);
  }
  response->set_revision(listed->revision);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::SetAdmissionCheckState(
    grpc::ServerContext* context,
    const v1::SetAdmissionCheckStateRequest* request,
    v1::SetAdmissionCheckStateResponse* response) {
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context, WorkloadRequest("checkstate", request->namespace_(),
                                    request->workload()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  std::optional<int32_t> requeue_after;
  if (request->has_requeue_after_seconds()) {
    requeue_after = request->requeue_after_seconds();
  }
  std::vector<PodSetUpdate> pod_set_updates;
  for (const v1::PodSetUpdate& update : request->pod_set_updates()) {
    pod_set_updates.push_back(codec::FromProto(update));
  }
  absl::StatusOr<Workload> wl = engine_.SetAdmissionCheckState(
      {request->namespace_(), request->workload()}, request->check(),
      request->state(), request->message(), requeue_after,
      std::move(pod_set_updates));
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::Preempt(grpc::ServerContext* context,
                                       const v1::PreemptRequest* request,
                                       v1::PreemptResponse* response) {
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context,
          WorkloadRequest("preempt", request->namespace_(), request->name()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<Workload> wl = engine_.Preempt(
      {request->namespace_(), request->name()}, request->message(),
      request->actor(), request->deactivate());
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::SetWorkloadActive(
    grpc::ServerContext* context, const v1::SetWorkloadActiveRequest* request,
    v1::SetWorkloadActiveResponse* response) {
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context,
          WorkloadRequest("setactive", request->namespace_(), request->name()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<Workload> wl = engine_.SetWorkloadActive(
      {request->namespace_(), request->name()}, request->active());
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::SetNominatedClusters(
    grpc::ServerContext* context,
    const v1::SetNominatedClustersRequest* request,
    v1::SetNominatedClustersResponse* response) {
  // Kueue's external dispatcher patches workloads/status.
  auth::Attributes patch =
      WorkloadRequest("patch", request->namespace_(), request->name());
  patch.subresource = "status";
  if (absl::StatusOr<auth::Principal> p = access_.Check(*context, patch);
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<Workload> wl = engine_.SetNominatedClusters(
      {request->namespace_(), request->name()},
      {request->cluster_names().begin(), request->cluster_names().end()});
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::SetStopPolicy(
    grpc::ServerContext* context, const v1::SetStopPolicyRequest* request,
    v1::SetStopPolicyResponse* response) {
  absl::StatusOr<ObjectKind> kind = ConfigKind(request->kind());
  if (!kind.ok()) return ToGrpcStatus(kind.status());
  if (absl::StatusOr<auth::Principal> p = access_.Check(
          *context,
          ObjectRequest("stop", *kind, request->namespace_(), request->name()));
      !p.ok()) {
    return ToGrpcStatus(p.status());
  }
  absl::StatusOr<ObjectKey> key =
      ParseKey(request->kind(), request->namespace_(), request->name());
  if (!key.ok()) return ToGrpcStatus(key.status());
  StopPolicy policy;
  const std::string& text = request->stop_policy();
  if (text == "None" || text.empty()) {
    policy = StopPolicy::kNone;
  } else if (text == "Hold") {
    policy = StopPolicy::kHold;
  } else if (text == "HoldAndDrain") {
    policy = StopPolicy::kHoldAndDrain;
  } else {
    return ToGrpcStatus(absl::InvalidArgumentError(
        absl::StrCat("stop_policy: unsupported value \"", text,
                     "\": must be None, Hold or HoldAndDrain")));
  }
  absl::StatusOr<engine::ObjectView> view = engine_.SetStopPolicy(*key, policy);
  if (!view.ok()) return ToGrpcStatus(view.status());
  *response->mutable_object() = ToProto(*view);
  return grpc::Status::OK;
}

}  // namespace kq::api
