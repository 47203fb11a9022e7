#include "server/api/services.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"

#include "server/api/proto_convert.h"
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

const v1::ObjectMeta& MetaOf(const v1::ConfigObject& o) {
  switch (o.kind_case()) {
    case v1::ConfigObject::kNamespace:
      return o.namespace_().metadata();
    case v1::ConfigObject::kResourceFlavor:
      return o.resource_flavor().metadata();
    case v1::ConfigObject::kClusterQueue:
      return o.cluster_queue().metadata();
    case v1::ConfigObject::kCohort:
      return o.cohort().metadata();
    case v1::ConfigObject::kLocalQueue:
      return o.local_queue().metadata();
    case v1::ConfigObject::kWorkloadPriorityClass:
      return o.workload_priority_class().metadata();
    case v1::ConfigObject::kAdmissionCheck:
      return o.admission_check().metadata();
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return v1::ObjectMeta::default_instance();
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

void FillWorkload(
    const engine::WorkloadView& view, v1::Workload* workload,
    google::protobuf::RepeatedPtrField<v1::PodSetPlacement>* placements) {
  *workload = codec::ToProto(view.workload);
  FillPlacements(view, placements);
}

bool WatchMatches(const v1::WatchRequest& filter, const store::Event& event) {
  const ObjectMeta* meta;
  const char* kind;
  const Workload* wl = std::get_if<Workload>(&event.object);
  if (wl != nullptr) {
    meta = &wl->meta;
    kind = "Workload";
  } else {
    const ConfigObject& o = std::get<ConfigObject>(event.object);
    meta = &kq::MetaOf(o);
    kind = KindName(KindOf(o));
  }
  if (!filter.kinds().empty() &&
      std::find(filter.kinds().begin(), filter.kinds().end(), kind) ==
          filter.kinds().end()) {
    return false;
  }
  if (!filter.namespace_().empty() &&
      meta->namespace_name != filter.namespace_()) {
    return false;
  }
  if (!filter.queue_name().empty() &&
      (wl == nullptr || wl->queue_name != filter.queue_name())) {
    return false;
  }
  if (!filter.workload_name().empty() &&
      (wl == nullptr || wl->meta.name != filter.workload_name())) {
    return false;
  }
  return true;
}

}  // namespace

grpc::Status AdminServiceImpl::Apply(grpc::ServerContext*,
                                     const v1::ApplyRequest* request,
                                     v1::ApplyResponse* response) {
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
          absl::StrCat(ItemName("objects", i, kind, MetaOf(proto)), ": ",
                       object.status().message())));
    }
    objects.push_back(*std::move(object));
  }
  std::vector<Workload> workloads;
  for (int i = 0; i < request->workloads_size(); ++i) {
    absl::StatusOr<Workload> wl = codec::FromProto(request->workloads(i));
    if (!wl.ok()) {
      return ToGrpcStatus(absl::InvalidArgumentError(
          absl::StrCat(ItemName("workloads", i, "Workload",
                                request->workloads(i).metadata()),
                       ": ", wl.status().message())));
    }
    workloads.push_back(*std::move(wl));
  }
  absl::StatusOr<std::vector<engine::ApplyResult>> results =
      engine_.Apply(std::move(objects), std::move(workloads));
  if (!results.ok()) return ToGrpcStatus(results.status());
  for (const engine::ApplyResult& r : *results) {
    v1::ApplyResult* out = response->add_results();
    out->set_action(r.action);
    if (const auto* wl = std::get_if<Workload>(&r.object)) {
      *out->mutable_workload() = codec::ToProto(*wl);
    } else {
      *out->mutable_object() = codec::ToProto(std::get<ConfigObject>(r.object));
    }
    for (const std::string& w : r.warnings) out->add_warnings(w);
  }
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::Delete(grpc::ServerContext*,
                                      const v1::DeleteRequest* request,
                                      v1::DeleteResponse*) {
  absl::StatusOr<ObjectKey> key =
      ParseKey(request->kind(), request->namespace_(), request->name());
  if (!key.ok()) return ToGrpcStatus(key.status());
  return ToGrpcStatus(engine_.Delete(*key));
}

grpc::Status AdminServiceImpl::GetObject(grpc::ServerContext*,
                                         const v1::GetObjectRequest* request,
                                         v1::GetObjectResponse* response) {
  absl::StatusOr<ObjectKey> key =
      ParseKey(request->kind(), request->namespace_(), request->name());
  if (!key.ok()) return ToGrpcStatus(key.status());
  absl::StatusOr<engine::ObjectView> view = engine_.GetObject(*key);
  if (!view.ok()) return ToGrpcStatus(view.status());
  *response->mutable_object() = ToProto(*view);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::ListObjects(
    grpc::ServerContext*, const v1::ListObjectsRequest* request,
    v1::ListObjectsResponse* response) {
  ObjectKind kind;
  if (!ParseKind(request->kind(), &kind) || kind == ObjectKind::kWorkload) {
    return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
        "kind: unknown configuration kind \"", request->kind(), "\"")));
  }
  absl::StatusOr<engine::Listed<engine::ObjectView>> listed =
      engine_.ListObjects(kind, request->namespace_());
  if (!listed.ok()) return ToGrpcStatus(listed.status());
  for (const engine::ObjectView& view : listed->items) {
    *response->add_objects() = ToProto(view);
  }
  response->set_revision(listed->revision);
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::SetAdmissionCheckState(
    grpc::ServerContext*, const v1::SetAdmissionCheckStateRequest* request,
    v1::SetAdmissionCheckStateResponse* response) {
  std::optional<int32_t> requeue_after;
  if (request->has_requeue_after_seconds()) {
    requeue_after = request->requeue_after_seconds();
  }
  absl::StatusOr<Workload> wl = engine_.SetAdmissionCheckState(
      {request->namespace_(), request->workload()}, request->check(),
      request->state(), request->message(), requeue_after);
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::SubmitWorkload(
    grpc::ServerContext*, const v1::SubmitWorkloadRequest* request,
    v1::SubmitWorkloadResponse* response) {
  absl::StatusOr<Workload> wl = codec::FromProto(request->workload());
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  absl::StatusOr<engine::WorkloadView> view = engine_.Submit(*std::move(wl));
  if (!view.ok()) return ToGrpcStatus(view.status());
  FillWorkload(*view, response->mutable_workload(),
               response->mutable_placements());
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::GetWorkload(
    grpc::ServerContext*, const v1::GetWorkloadRequest* request,
    v1::GetWorkloadResponse* response) {
  absl::StatusOr<engine::WorkloadView> view =
      engine_.GetWorkload({request->namespace_(), request->name()});
  if (!view.ok()) return ToGrpcStatus(view.status());
  FillWorkload(*view, response->mutable_workload(),
               response->mutable_placements());
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::ListWorkloads(
    grpc::ServerContext*, const v1::ListWorkloadsRequest* request,
    v1::ListWorkloadsResponse* response) {
  engine::WorkloadFilter filter{request->namespace_(), request->queue_name(),
                                request->cluster_queue(),
                                request->include_finished()};
  absl::StatusOr<engine::Listed<Workload>> listed =
      engine_.ListWorkloads(filter);
  if (!listed.ok()) return ToGrpcStatus(listed.status());
  for (const Workload& wl : listed->items) {
    *response->add_workloads() = codec::ToProto(wl);
  }
  response->set_revision(listed->revision);
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::CancelWorkload(
    grpc::ServerContext*, const v1::CancelWorkloadRequest* request,
    v1::CancelWorkloadResponse* response) {
  absl::StatusOr<Workload> wl =
      engine_.Cancel({request->namespace_(), request->name()});
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::FinishWorkload(
    grpc::ServerContext*, const v1::FinishWorkloadRequest* request,
    v1::FinishWorkloadResponse* response) {
  absl::StatusOr<Workload> wl =
      engine_.Finish({request->namespace_(), request->name()},
                     request->succeeded(), request->message());
  if (!wl.ok()) return ToGrpcStatus(wl.status());
  *response->mutable_workload() = codec::ToProto(*wl);
  return grpc::Status::OK;
}

grpc::Status QueueServiceImpl::Watch(
    grpc::ServerContext* context, const v1::WatchRequest* request,
    grpc::ServerWriter<v1::WatchEvent>* writer) {
  engine::EventLog& log = engine_.event_log();
  int64_t after =
      request->has_from_revision() ? request->from_revision() : log.revision();
  while (!context->IsCancelled()) {
    absl::StatusOr<std::vector<store::Event>> events =
        log.Read(after, 1000, absl::Seconds(1));
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const store::Event& event : *events) {
      after = event.revision;
      if (!WatchMatches(*request, event)) continue;
      if (!writer->Write(ToProto(event))) return grpc::Status::OK;
    }
  }
  return grpc::Status::OK;
}

}  // namespace kq::api
