#include "tests/cli/fake_client.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/message_differencer.h"
#include "kq/v1/admin_service.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli::testing {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The set member of ConfigObject's `kind` oneof, or nullptr.
const FieldDescriptor* KindField(const v1::ConfigObject& object) {
  const google::protobuf::OneofDescriptor* oneof =
      v1::ConfigObject::descriptor()->FindOneofByName("kind");
  return object.GetReflection()->GetOneofFieldDescriptor(object, oneof);
}

// "resource_flavor" -> "ResourceFlavor": the oneof members are Kueue's
// kinds in snake_case.
std::string KindName(const FieldDescriptor* field) {
  std::string out;
  bool upper = true;
  for (char c : field->name()) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return out;
}

v1::ObjectMeta* MutableMetadata(v1::ConfigObject& object) {
  const FieldDescriptor* field = KindField(object);
  if (field == nullptr) {
    return nullptr;
  }
  Message* inner = object.GetReflection()->MutableMessage(&object, field);
  const FieldDescriptor* metadata =
      inner->GetDescriptor()->FindFieldByName("metadata");
  return static_cast<v1::ObjectMeta*>(
      inner->GetReflection()->MutableMessage(inner, metadata));
}

const v1::ObjectMeta& Metadata(const v1::ConfigObject& object) {
  const FieldDescriptor* field = KindField(object);
  if (field == nullptr) {
    return v1::ObjectMeta::default_instance();
  }
  const Message& inner = object.GetReflection()->GetMessage(object, field);
  const FieldDescriptor* metadata =
      inner.GetDescriptor()->FindFieldByName("metadata");
  return static_cast<const v1::ObjectMeta&>(
      inner.GetReflection()->GetMessage(inner, metadata));
}

bool IsKnownKind(const std::string& kind) {
  for (const char* known :
       {"Namespace", "ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue",
        "WorkloadPriorityClass", "AdmissionCheck"}) {
    if (kind == known) {
      return true;
    }
  }
  return false;
}

bool IsConditionTrue(const v1::Workload& workload, const std::string& type) {
  for (const v1::Condition& condition : workload.status().conditions()) {
    if (condition.type() == type) {
      return condition.status() == "True";
    }
  }
  return false;
}

// Replaces (or adds) the condition of the same type.
void SetCondition(v1::Workload& workload, v1::Condition condition) {
  for (v1::Condition& existing :
       *workload.mutable_status()->mutable_conditions()) {
    if (existing.type() == condition.type()) {
      existing = std::move(condition);
      return;
    }
  }
  *workload.mutable_status()->add_conditions() = std::move(condition);
}

v1::Condition MakeCondition(const std::string& type, const std::string& status,
                            const std::string& reason,
                            const std::string& message, absl::Time now) {
  v1::Condition condition;
  condition.set_type(type);
  condition.set_status(status);
  condition.set_reason(reason);
  condition.set_message(message);
  condition.mutable_last_transition_time()->set_seconds(
      absl::ToUnixSeconds(now));
  return condition;
}

}  // namespace

FakeClient::FakeClient(absl::Time now) : now_(now) {}

void FakeClient::Stamp(v1::ObjectMeta& metadata) {
  ++revision_;
  metadata.set_uid(absl::StrCat("uid-", revision_));
  metadata.set_revision(revision_);
  if (!metadata.has_creation_timestamp()) {
    metadata.mutable_creation_timestamp()->set_seconds(
        absl::ToUnixSeconds(now_));
  }
}

void FakeClient::GenerateNameIfUnset(v1::ObjectMeta& metadata) {
  if (metadata.name().empty()) {
    metadata.set_name(absl::StrFormat("%s%05d", metadata.generate_name(),
                                      ++generated_names_));
  }
}

absl::StatusOr<FakeClient::ObjectKey> FakeClient::KeyOf(
    const v1::ConfigObject& object) const {
  const FieldDescriptor* field = KindField(object);
  if (field == nullptr) {
    return absl::InvalidArgumentError("configuration object has no kind");
  }
  const std::string kind = KindName(field);
  const v1::ObjectMeta& metadata = Metadata(object);
  if (metadata.name().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, ": metadata.name: required"));
  }
  const bool namespaced = kind == "LocalQueue";
  if (namespaced && metadata.namespace_().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kind, " \"", metadata.name(), "\": metadata.namespace: required"));
  }
  if (object.has_local_queue() &&
      object.local_queue().spec().cluster_queue().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "LocalQueue \"", metadata.name(), "\": spec.clusterQueue: required"));
  }
  return ObjectKey{kind, namespaced ? metadata.namespace_() : "",
                   metadata.name()};
}

absl::Status FakeClient::CheckWorkload(const v1::Workload& workload) const {
  const std::string& name = workload.metadata().name().empty()
                                ? workload.metadata().generate_name()
                                : workload.metadata().name();
  if (name.empty()) {
    return absl::InvalidArgumentError(
        "Workload: metadata.name or metadata.generateName: required");
  }
  if (workload.metadata().namespace_().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Workload \"", name, "\": metadata.namespace: required"));
  }
  if (workload.spec().queue_name().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Workload \"", name, "\": spec.queueName: required"));
  }
  if (workload.spec().pod_sets().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Workload \"", name, "\": spec.podSets: required"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ApplyResponse> FakeClient::Apply(
    const v1::ApplyRequest& request) {
  apply_requests_.push_back(request);
  // All or nothing: check everything before storing anything.
  std::vector<ObjectKey> keys;
  for (const v1::ConfigObject& object : request.objects()) {
    absl::StatusOr<ObjectKey> key = KeyOf(object);
    if (!key.ok()) {
      return key.status();
    }
    keys.push_back(*key);
  }
  for (const v1::Workload& workload : request.workloads()) {
    absl::Status status = CheckWorkload(workload);
    if (!status.ok()) {
      return status;
    }
  }

  v1::ApplyResponse response;
  for (int i = 0; i < request.objects_size(); ++i) {
    v1::ConfigObject object = request.objects(i);
    v1::ApplyResult& result = *response.add_results();
    auto it = objects_.find(keys[i]);
    if (it == objects_.end()) {
      Stamp(*MutableMetadata(object));
      result.set_action("created");
    } else {
      // Compare what the user controls: server-set metadata is carried
      // over from the stored object first.
      const v1::ObjectMeta& stored = Metadata(it->second);
      v1::ObjectMeta& incoming = *MutableMetadata(object);
      incoming.set_uid(stored.uid());
      incoming.set_revision(stored.revision());
      *incoming.mutable_creation_timestamp() = stored.creation_timestamp();
      if (google::protobuf::util::MessageDifferencer::Equals(object,
                                                             it->second)) {
        result.set_action("unchanged");
      } else {
        incoming.set_revision(++revision_);
        result.set_action("configured");
      }
    }
    objects_[keys[i]] = object;
    *result.mutable_object() = object;
  }
  for (const v1::Workload& requested : request.workloads()) {
    v1::ApplyResult& result = *response.add_results();
    v1::Workload workload = requested;
    GenerateNameIfUnset(*workload.mutable_metadata());
    WorkloadKey key{workload.metadata().namespace_(),
                    workload.metadata().name()};
    auto it = workloads_.find(key);
    if (it != workloads_.end()) {
      result.set_action("unchanged");
      *result.mutable_workload() = it->second;
      continue;
    }
    Stamp(*workload.mutable_metadata());
    workloads_[key] = workload;
    result.set_action("created");
    *result.mutable_workload() = workload;
  }
  return response;
}

absl::Status FakeClient::Delete(const std::string& kind,
                                const std::string& namespace_name,
                                const std::string& name) {
  deletes_.emplace_back(kind, namespace_name, name);
  if (!IsKnownKind(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown kind \"", kind, "\""));
  }
  auto it =
      objects_.find({kind, kind == "LocalQueue" ? namespace_name : "", name});
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat(kind, " \"", name, "\" not found"));
  }
  objects_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<v1::ConfigObject> FakeClient::GetObject(
    const std::string& kind, const std::string& namespace_name,
    const std::string& name) {
  if (!IsKnownKind(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown kind \"", kind, "\""));
  }
  auto it =
      objects_.find({kind, kind == "LocalQueue" ? namespace_name : "", name});
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat(kind, " \"", name, "\" not found"));
  }
  return it->second;
}

absl::StatusOr<v1::ListObjectsResponse> FakeClient::ListObjects(
    const std::string& kind, const std::string& namespace_name) {
  if (!IsKnownKind(kind)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown kind \"", kind, "\""));
  }
  v1::ListObjectsResponse response;
  for (const auto& [key, object] : objects_) {
    const auto& [object_kind, object_namespace, name] = key;
    if (object_kind != kind) {
      continue;
    }
    if (!namespace_name.empty() && kind == "LocalQueue" &&
        object_namespace != namespace_name) {
      continue;
    }
    *response.add_objects() = object;
  }
  response.set_revision(revision_);
  return response;
}

absl::StatusOr<v1::SubmitWorkloadResponse> FakeClient::SubmitWorkload(
    const v1::Workload& workload) {
  submitted_.push_back(workload);
  absl::Status status = CheckWorkload(workload);
  if (!status.ok()) {
    return status;
  }
  v1::Workload stored = workload;
  v1::ObjectMeta& metadata = *stored.mutable_metadata();
  GenerateNameIfUnset(metadata);
  WorkloadKey key{metadata.namespace_(), metadata.name()};
  if (workloads_.contains(key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("workload \"", metadata.name(), "\" already exists"));
  }
  Stamp(metadata);
  if (admit_on_submit_.has_value()) {
    const auto& [cluster_queue, flavor] = *admit_on_submit_;
    v1::Admission& admission = *stored.mutable_status()->mutable_admission();
    admission.set_cluster_queue(cluster_queue);
    for (const v1::PodSet& pod_set : stored.spec().pod_sets()) {
      v1::PodSetAssignment& assignment = *admission.add_pod_set_assignments();
      assignment.set_name(pod_set.name());
      assignment.set_count(pod_set.count());
      for (const auto& [resource, quantity] : pod_set.requests()) {
        (*assignment.mutable_flavors())[resource] = flavor;
      }
    }
    SetCondition(stored,
                 MakeCondition("QuotaReserved", "True", "QuotaReserved",
                               absl::StrCat("Quota reserved in ClusterQueue ",
                                            cluster_queue),
                               now_));
    SetCondition(stored, MakeCondition("Admitted", "True", "Admitted",
                                       "The workload is admitted", now_));
  }
  workloads_[key] = stored;
  v1::SubmitWorkloadResponse response;
  *response.mutable_workload() = stored;
  return response;
}

absl::StatusOr<v1::GetWorkloadResponse> FakeClient::GetWorkload(
    const std::string& namespace_name, const std::string& name) {
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat("workload \"", name, "\" not found"));
  }
  v1::GetWorkloadResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ListWorkloadsResponse> FakeClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  if (!request.queue_name().empty() && request.namespace_().empty()) {
    return absl::InvalidArgumentError("queue_name requires namespace");
  }
  v1::ListWorkloadsResponse response;
  for (const auto& [key, workload] : workloads_) {
    if (!request.namespace_().empty() && key.first != request.namespace_()) {
      continue;
    }
    if (!request.queue_name().empty() &&
        workload.spec().queue_name() != request.queue_name()) {
      continue;
    }
    if (!request.cluster_queue().empty() &&
        workload.status().admission().cluster_queue() !=
            request.cluster_queue()) {
      continue;
    }
    if (!request.include_finished() && IsConditionTrue(workload, "Finished")) {
      continue;
    }
    *response.add_workloads() = workload;
  }
  response.set_revision(revision_);
  return response;
}

absl::StatusOr<v1::Workload> FakeClient::CancelWorkload(
    const std::string& namespace_name, const std::string& name) {
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat("workload \"", name, "\" not found"));
  }
  v1::Workload& workload = it->second;
  if (IsConditionTrue(workload, "Finished")) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload \"", name, "\" already finished"));
  }
  // Leaving the queue releases any quota.
  workload.mutable_status()->clear_admission();
  SetCondition(workload, MakeCondition("Finished", "True", "Cancelled",
                                       "cancelled by the user", now_));
  workload.mutable_metadata()->set_revision(++revision_);
  return workload;
}

absl::StatusOr<v1::Workload> FakeClient::SetAdmissionCheckState(
    const v1::SetAdmissionCheckStateRequest& request) {
  const std::string& state = request.state();
  if (state != "Pending" && state != "Ready" && state != "Retry" &&
      state != "Rejected") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown admission check state \"", state, "\""));
  }
  auto it = workloads_.find({request.namespace_(), request.workload()});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat("workload \"", request.workload(), "\" not found"));
  }
  v1::Workload& workload = it->second;
  if (IsConditionTrue(workload, "Finished")) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload \"", request.workload(), "\" already finished"));
  }
  v1::AdmissionCheckState* check = nullptr;
  for (v1::AdmissionCheckState& c :
       *workload.mutable_status()->mutable_admission_checks()) {
    if (c.name() == request.check()) check = &c;
  }
  if (check == nullptr) {
    return absl::NotFoundError(absl::StrCat("workload \"", request.workload(),
                                            "\" has no admission check \"",
                                            request.check(), "\""));
  }
  if (check->state() != state) {
    check->mutable_last_transition_time()->set_seconds(
        absl::ToUnixSeconds(now_));
  }
  check->set_state(state);
  check->set_message(request.message());
  bool all_ready = true;
  for (const v1::AdmissionCheckState& c :
       workload.status().admission_checks()) {
    all_ready = all_ready && c.state() == "Ready";
  }
  if (all_ready && IsConditionTrue(workload, "QuotaReserved")) {
    SetCondition(workload, MakeCondition("Admitted", "True", "Admitted",
                                         "The workload is admitted", now_));
  }
  workload.mutable_metadata()->set_revision(++revision_);
  return workload;
}

absl::StatusOr<v1::Workload> FakeClient::FinishWorkload(
    const std::string& namespace_name, const std::string& name, bool succeeded,
    const std::string& message) {
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat("workload \"", name, "\" not found"));
  }
  v1::Workload& workload = it->second;
  if (IsConditionTrue(workload, "Finished") ||
      !IsConditionTrue(workload, "QuotaReserved")) {
    return absl::FailedPreconditionError(
        absl::StrCat("workload \"", name, "\" holds no quota reservation"));
  }
  SetCondition(workload, MakeCondition("Finished", "True",
                                       succeeded ? "Succeeded" : "Failed",
                                       message, now_));
  workload.mutable_metadata()->set_revision(++revision_);
  return workload;
}

absl::Status FakeClient::Watch(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event) {
  return absl::UnimplementedError("FakeClient does not stream events");
}

void FakeClient::AdmitOnSubmit(std::string cluster_queue, std::string flavor) {
  admit_on_submit_.emplace(std::move(cluster_queue), std::move(flavor));
}

void FakeClient::PutWorkload(v1::Workload workload) {
  if (!workload.metadata().has_creation_timestamp()) {
    workload.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
        absl::ToUnixSeconds(now_));
  }
  WorkloadKey key{workload.metadata().namespace_(), workload.metadata().name()};
  workloads_[key] = std::move(workload);
}

std::vector<v1::ConfigObject> FakeClient::Objects(
    const std::string& kind) const {
  std::vector<v1::ConfigObject> out;
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) == kind) {
      out.push_back(object);
    }
  }
  return out;
}

std::optional<v1::Workload> FakeClient::FindWorkload(
    const std::string& namespace_name, const std::string& name) const {
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return std::nullopt;
  }
  return it->second;
}

}  // namespace kq::cli::testing
