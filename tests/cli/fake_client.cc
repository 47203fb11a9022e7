#include "tests/cli/fake_client.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
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
  for (const char* known : {"Namespace", "ResourceFlavor", "ClusterQueue",
                            "Cohort", "LocalQueue", "WorkloadPriorityClass",
                            "AdmissionCheck", "ProvisioningRequestConfig"}) {
    if (kind == known) {
      return true;
    }
  }
  return false;
}

const v1::Condition* FindConditionOf(
    const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
    const std::string& type) {
  for (const v1::Condition& condition : conditions) {
    if (condition.type() == type) {
      return &condition;
    }
  }
  return nullptr;
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
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
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
    const v1::SubmitWorkloadRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  return SubmitLocked(request.workload());
}

absl::StatusOr<v1::SubmitWorkloadResponse> FakeClient::SubmitLocked(
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
  if (!admit_on_submit_.has_value() && pend_on_submit_.has_value()) {
    SetCondition(stored, MakeCondition("QuotaReserved", "False", "Pending",
                                       *pend_on_submit_, now_));
  }
  workloads_[key] = stored;
  changed_.notify_all();
  v1::SubmitWorkloadResponse response;
  *response.mutable_workload() = stored;
  return response;
}

absl::StatusOr<v1::GetWorkloadResponse> FakeClient::GetWorkload(
    const v1::GetWorkloadRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workloads_.find({request.namespace_(), request.name()});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat("workload \"", request.name(), "\" not found"));
  }
  v1::GetWorkloadResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ListWorkloadsResponse> FakeClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
  cancels_.emplace_back(namespace_name, name);
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
  workload.mutable_status()->clear_runner();
  changed_.notify_all();
  SetCondition(workload, MakeCondition("Finished", "True", "Cancelled",
                                       "cancelled by the user", now_));
  workload.mutable_metadata()->set_revision(++revision_);
  return workload;
}

absl::StatusOr<v1::Workload> FakeClient::SetAdmissionCheckState(
    const v1::SetAdmissionCheckStateRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
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
  workload.mutable_status()->clear_runner();
  changed_.notify_all();
  workload.mutable_metadata()->set_revision(++revision_);
  return workload;
}

absl::Status FakeClient::Watch(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event) {
  return absl::UnimplementedError("FakeClient does not stream events");
}

void FakeClient::AdmitOnSubmit(std::string cluster_queue, std::string flavor) {
  std::lock_guard<std::mutex> lock(mu_);
  admit_on_submit_.emplace(std::move(cluster_queue), std::move(flavor));
}

void FakeClient::PendOnSubmit(std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  pend_on_submit_ = std::move(message);
}

void FakeClient::PutWorkload(v1::Workload workload) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!workload.metadata().has_creation_timestamp()) {
    workload.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
        absl::ToUnixSeconds(now_));
  }
  WorkloadKey key{workload.metadata().namespace_(), workload.metadata().name()};
  workloads_[key] = std::move(workload);
  changed_.notify_all();
}

std::vector<v1::ConfigObject> FakeClient::Objects(
    const std::string& kind) const {
  std::lock_guard<std::mutex> lock(mu_);
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
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return std::nullopt;
  }
  return it->second;
}

namespace {

bool HoldsQuota(const v1::Workload& workload) {
  return !workload.status().admission().cluster_queue().empty();
}

bool IsActive(const v1::Workload& workload) {
  return !workload.spec().has_active() || workload.spec().active();
}

std::string Describe(const std::string& namespace_name,
                     const std::string& name) {
  return absl::StrCat("workload ", namespace_name, "/", name);
}

void RemoveCondition(v1::Workload& workload, const std::string& type) {
  auto* conditions = workload.mutable_status()->mutable_conditions();
  for (int i = 0; i < conditions->size(); ++i) {
    if (conditions->Get(i).type() == type) {
      conditions->DeleteSubrange(i, 1);
      return;
    }
  }
}

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

void ToProto(absl::Duration d, google::protobuf::Duration* out) {
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

}  // namespace

void FakeClient::BumpLocked(v1::Workload& workload) {
  workload.mutable_metadata()->set_revision(++revision_);
  changed_.notify_all();
}

void FakeClient::ReleaseLocked(v1::Workload& workload) {
  workload.mutable_status()->clear_admission();
  workload.mutable_status()->clear_runner();
  workload.mutable_status()->clear_stop_deadline();
  const v1::Condition* evicted =
      FindConditionOf(workload.status().conditions(), "Evicted");
  const std::string reason = evicted != nullptr ? evicted->reason() : "";
  const std::string message = evicted != nullptr ? evicted->message() : "";
  SetCondition(workload,
               MakeCondition("QuotaReserved", "False", reason, message, now_));
  SetCondition(workload,
               MakeCondition("Admitted", "False", reason, message, now_));
  if (IsActive(workload)) {
    SetCondition(workload,
                 MakeCondition("Requeued", "True", reason, message, now_));
  } else {
    SetCondition(workload, MakeCondition("Requeued", "False", "Deactivated",
                                         message, now_));
  }
  BumpLocked(workload);
}

void FakeClient::EvictLocked(v1::Workload& workload, const std::string& reason,
                             const std::string& message) {
  SetCondition(workload,
               MakeCondition("Evicted", "True", reason, message, now_));
  if (!HoldsQuota(workload)) {
    BumpLocked(workload);
    return;
  }
  if (workload.status().runner().id().empty()) {
    ReleaseLocked(workload);
    return;
  }
  BumpLocked(workload);
}

std::optional<v1::AdmitResponse> FakeClient::DecideLocked(
    const v1::Workload& stored, const std::string& runner_id) {
  v1::AdmitResponse response;
  const auto& conditions = stored.status().conditions();
  if (IsConditionTrue(stored, "Finished")) {
    const v1::Condition* finished = FindConditionOf(conditions, "Finished");
    response.set_outcome(v1::AdmitResponse::FINISHED);
    response.set_reason(finished->reason());
    response.set_message(finished->message());
    *response.mutable_workload() = stored;
    return response;
  }
  if (HoldsQuota(stored) && IsConditionTrue(stored, "Admitted") &&
      !IsConditionTrue(stored, "Evicted")) {
    v1::Workload& workload =
        workloads_[{stored.metadata().namespace_(), stored.metadata().name()}];
    if (!runner_id.empty() && workload.status().runner().id().empty()) {
      workload.mutable_status()->mutable_runner()->set_id(runner_id);
    }
    response.set_outcome(v1::AdmitResponse::ADMITTED);
    response.set_reason("Admitted");
    *response.mutable_workload() = workload;
    for (const v1::PodSetAssignment& assignment :
         workload.status().admission().pod_set_assignments()) {
      v1::PodSetPlacement& placement = *response.add_placements();
      placement.set_pod_set(assignment.name());
      std::set<std::string> flavors;
      for (const auto& [resource, flavor] : assignment.flavors()) {
        flavors.insert(flavor);
      }
      for (const std::string& flavor : flavors) {
        v1::FlavorPlacement& out = *placement.add_flavors();
        out.set_flavor(flavor);
        auto labels = node_labels_.find(flavor);
        if (labels != node_labels_.end()) {
          out.mutable_node_labels()->insert(labels->second.begin(),
                                            labels->second.end());
        }
      }
    }
    return response;
  }
  if (!IsActive(stored) && !HoldsQuota(stored)) {
    const v1::Condition* evicted = FindConditionOf(conditions, "Evicted");
    response.set_outcome(v1::AdmitResponse::DEACTIVATED);
    response.set_reason("Deactivated");
    if (evicted != nullptr) {
      response.set_message(evicted->message());
    }
    *response.mutable_workload() = stored;
    return response;
  }
  return std::nullopt;
}

v1::AdmitResponse FakeClient::PendingLocked(
    const v1::Workload& workload) const {
  v1::AdmitResponse response;
  response.set_outcome(v1::AdmitResponse::PENDING);
  *response.mutable_workload() = workload;
  const v1::Condition* reserved =
      FindConditionOf(workload.status().conditions(), "QuotaReserved");
  if (reserved != nullptr && reserved->status() == "False") {
    response.set_reason(reserved->reason());
    response.set_message(reserved->message());
  }
  if (!HoldsQuota(workload) && IsActive(workload)) {
    int64_t position = 0;
    for (const auto& [key, other] : workloads_) {
      if (other.metadata().name() == workload.metadata().name() &&
          other.metadata().namespace_() == workload.metadata().namespace_()) {
        break;
      }
      if (other.spec().queue_name() == workload.spec().queue_name() &&
          !HoldsQuota(other) && IsActive(other) &&
          !IsConditionTrue(other, "Finished")) {
        ++position;
      }
    }
    response.set_position(position);
  }
  return response;
}

absl::StatusOr<v1::AdmitResponse> FakeClient::Admit(
    const v1::AdmitRequest& request) {
  std::unique_lock<std::mutex> lock(mu_);
  admit_requests_.push_back(request);
  WorkloadKey key{request.namespace_(), request.name()};
  if (request.has_workload()) {
    v1::Workload wanted = request.workload();
    GenerateNameIfUnset(*wanted.mutable_metadata());
    key = {wanted.metadata().namespace_(), wanted.metadata().name()};
    if (!workloads_.contains(key)) {
      absl::StatusOr<v1::SubmitWorkloadResponse> submitted =
          SubmitLocked(wanted);
      if (!submitted.ok()) {
        return submitted.status();
      }
    }
  }
  absl::Duration timeout = FromProto(request.timeout());
  if (timeout <= absl::ZeroDuration()) {
    timeout = absl::Seconds(1);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  for (;;) {
    auto it = workloads_.find(key);
    if (it == workloads_.end()) {
      return absl::NotFoundError(
          absl::StrCat(Describe(key.first, key.second), " not found"));
    }
    std::optional<v1::AdmitResponse> decided =
        DecideLocked(it->second, request.runner_id());
    if (decided.has_value()) {
      return *decided;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      it = workloads_.find(key);
      decided = DecideLocked(it->second, request.runner_id());
      if (decided.has_value()) {
        return *decided;
      }
      return PendingLocked(it->second);
    }
  }
}

absl::StatusOr<v1::AdmitResponse> FakeClient::WaitAdmitted(
    v1::AdmitRequest request, absl::Duration timeout,
    const std::function<void(const v1::AdmitResponse&)>& on_pending,
    absl::Duration poll) {
  const absl::Time deadline = timeout == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : absl::Now() + timeout;
  for (;;) {
    ToProto(
        std::max(std::min(poll, deadline - absl::Now()), absl::Milliseconds(1)),
        request.mutable_timeout());
    absl::StatusOr<v1::AdmitResponse> response = Admit(request);
    if (!response.ok() || response->outcome() != v1::AdmitResponse::PENDING) {
      return response;
    }
    // Submitted by the first call only.
    if (request.has_workload()) {
      request.set_namespace_(response->workload().metadata().namespace_());
      request.set_name(response->workload().metadata().name());
      request.clear_workload();
    }
    if (on_pending) {
      on_pending(*response);
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError("not admitted in time");
    }
  }
}

absl::StatusOr<v1::HeartbeatResponse> FakeClient::Heartbeat(
    const v1::HeartbeatRequest& request) {
  absl::StatusOr<v1::HeartbeatResponse> result;
  std::function<void(const v1::HeartbeatRequest&, const absl::Status&)> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    heartbeats_.push_back(request);
    hook = heartbeat_hook_;
    result = [&]() -> absl::StatusOr<v1::HeartbeatResponse> {
      const std::string who = Describe(request.namespace_(), request.name());
      if (request.runner_id().empty()) {
        return absl::InvalidArgumentError("runner_id: required");
      }
      auto it = workloads_.find({request.namespace_(), request.name()});
      if (it == workloads_.end()) {
        return absl::NotFoundError(absl::StrCat(who, " not found"));
      }
      v1::Workload& workload = it->second;
      if (IsConditionTrue(workload, "Finished")) {
        return absl::FailedPreconditionError(
            absl::StrCat(who, " already finished"));
      }
      const std::string& runner = workload.status().runner().id();
      if (!runner.empty() && runner != request.runner_id()) {
        return absl::FailedPreconditionError(
            absl::StrCat(who, " is run by runner \"", runner, "\""));
      }
      v1::HeartbeatResponse response;
      const bool evicting = IsConditionTrue(workload, "Evicted");
      if (!HoldsQuota(workload)) {
        if (request.stopped()) {
          *response.mutable_workload() = workload;
          return response;
        }
        return absl::FailedPreconditionError(
            absl::StrCat(who, " holds no quota: stop it"));
      }
      if (request.stopped()) {
        if (!evicting) {
          return absl::FailedPreconditionError(
              absl::StrCat(who,
                           " is not being evicted; report its end with "
                           "FinishWorkload"));
        }
        ReleaseLocked(workload);
        *response.mutable_workload() = workload;
        return response;
      }
      if (!evicting && !IsConditionTrue(workload, "Admitted")) {
        return absl::FailedPreconditionError(
            absl::StrCat(who, " is not admitted yet"));
      }
      v1::RunnerStatus& status = *workload.mutable_status()->mutable_runner();
      status.set_id(request.runner_id());
      status.mutable_lease_expire_time()->set_seconds(absl::ToUnixSeconds(
          now_ + (request.has_lease() ? FromProto(request.lease())
                                      : absl::Seconds(30))));
      response.set_stop(evicting);
      *response.mutable_workload() = workload;
      return response;
    }();
  }
  if (hook) {
    hook(request, result.status());
  }
  return result;
}

absl::StatusOr<v1::Workload> FakeClient::Preempt(
    const v1::PreemptRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  preempt_requests_.push_back(request);
  const std::string who = Describe(request.namespace_(), request.name());
  auto it = workloads_.find({request.namespace_(), request.name()});
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(who, " not found"));
  }
  v1::Workload& workload = it->second;
  if (IsConditionTrue(workload, "Finished")) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, " already finished"));
  }
  const std::string actor =
      request.actor().empty() ? "operator" : request.actor();
  const std::string why =
      request.message().empty() ? "" : absl::StrCat(": ", request.message());
  if (request.deactivate()) {
    if (!IsActive(workload)) {
      return absl::FailedPreconditionError(
          absl::StrCat(who, " is already deactivated"));
    }
    workload.mutable_spec()->set_active(false);
    EvictLocked(workload, "Deactivated",
                absl::StrCat("The workload is deactivated by ", actor, why));
    return workload;
  }
  if (!HoldsQuota(workload)) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, " holds no quota to preempt"));
  }
  if (IsConditionTrue(workload, "Evicted")) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, " is already being evicted"));
  }
  EvictLocked(workload, "Preempted", absl::StrCat("Preempted by ", actor, why));
  return workload;
}

absl::StatusOr<v1::Workload> FakeClient::SetReclaimablePods(
    const std::string& namespace_name, const std::string& name,
    const std::map<std::string, int32_t>& reclaimable_pods) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat(Describe(namespace_name, name), " not found"));
  }
  v1::WorkloadStatus* status = it->second.mutable_status();
  status->clear_reclaimable_pods();
  for (const auto& [pod_set, count] : reclaimable_pods) {
    v1::ReclaimablePod* pod = status->add_reclaimable_pods();
    pod->set_name(pod_set);
    pod->set_count(count);
  }
  return it->second;
}

absl::StatusOr<v1::Workload> FakeClient::SetWorkloadActive(
    const std::string& namespace_name, const std::string& name, bool active) {
  std::lock_guard<std::mutex> lock(mu_);
  active_changes_.emplace_back(namespace_name, name, active);
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return absl::NotFoundError(
        absl::StrCat(Describe(namespace_name, name), " not found"));
  }
  v1::Workload& workload = it->second;
  if (IsActive(workload) == active) {
    return workload;
  }
  workload.mutable_spec()->set_active(active);
  if (!active) {
    EvictLocked(workload, "Deactivated", "The workload is deactivated");
    return workload;
  }
  RemoveCondition(workload, "Evicted");
  SetCondition(workload, MakeCondition("Requeued", "True", "Reactivated",
                                       "The workload was reactivated", now_));
  BumpLocked(workload);
  return workload;
}

absl::StatusOr<v1::ConfigObject> FakeClient::SetStopPolicy(
    const v1::SetStopPolicyRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  stop_policy_requests_.push_back(request);
  const std::string& policy = request.stop_policy();
  if (policy != "None" && policy != "Hold" && policy != "HoldAndDrain" &&
      !policy.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("stop_policy: unsupported value \"", policy,
                     "\": must be None, Hold or HoldAndDrain"));
  }
  if (request.kind() != "ClusterQueue" && request.kind() != "LocalQueue") {
    return absl::InvalidArgumentError(absl::StrCat(
        "kind: stop policies apply to ClusterQueue and LocalQueue, not \"",
        request.kind(), "\""));
  }
  const bool local = request.kind() == "LocalQueue";
  auto it = objects_.find(
      {request.kind(), local ? request.namespace_() : "", request.name()});
  if (it == objects_.end()) {
    return absl::NotFoundError(
        absl::StrCat(request.kind(), " \"", request.name(), "\" not found"));
  }
  v1::ConfigObject& object = it->second;
  if (local) {
    object.mutable_local_queue()->mutable_spec()->set_stop_policy(policy);
  } else {
    object.mutable_cluster_queue()->mutable_spec()->set_stop_policy(policy);
  }
  MutableMetadata(object)->set_revision(++revision_);
  return object;
}

absl::StatusOr<v1::ExplainResponse> FakeClient::Explain(
    const std::string& namespace_name, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string who = Describe(namespace_name, name);
  auto scripted = explanations_.find({namespace_name, name});
  if (scripted != explanations_.end()) {
    return scripted->second;
  }
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    return absl::NotFoundError(absl::StrCat(who, " not found"));
  }
  const v1::Workload& workload = it->second;
  if (IsConditionTrue(workload, "Finished")) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, " already finished"));
  }
  v1::ExplainResponse response;
  *response.mutable_workload() = workload;
  response.set_state(HoldsQuota(workload) ? "QuotaReserved" : "Pending");
  if (IsConditionTrue(workload, "Admitted")) {
    response.set_state("Admitted");
  }
  response.set_cluster_queue(workload.status().admission().cluster_queue());
  const v1::Condition* reserved =
      FindConditionOf(workload.status().conditions(), "QuotaReserved");
  if (reserved != nullptr) {
    response.set_reason(reserved->reason());
    response.set_message(reserved->message());
  }
  return response;
}

absl::StatusOr<v1::SimulateResponse> FakeClient::Simulate(
    const v1::SimulateRequest& request) {
  std::function<absl::StatusOr<v1::SimulateResponse>(
      const v1::SimulateRequest&)>
      answer;
  {
    std::lock_guard<std::mutex> lock(mu_);
    simulate_requests_.push_back(request);
    answer = simulate_answer_;
  }
  if (!answer) {
    return absl::UnimplementedError("FakeClient: no Simulate answer set");
  }
  return answer(request);
}

absl::Status FakeClient::WatchResumable(
    const v1::WatchRequest& request,
    const std::function<bool(const v1::WatchEvent&)>& on_event,
    client::WatchProgress* progress) {
  std::vector<v1::WatchEvent> events;
  absl::Status end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    watch_requests_.push_back(request);
    events = watch_events_;
    end = watch_end_;
  }
  for (const v1::WatchEvent& event : events) {
    if (request.has_from_revision() &&
        event.revision() <= request.from_revision()) {
      continue;
    }
    std::string kind = "Workload";
    const v1::ObjectMeta* metadata = &event.workload().metadata();
    if (event.has_config_object()) {
      const FieldDescriptor* field = KindField(event.config_object());
      kind = field == nullptr ? "" : KindName(field);
      metadata = &Metadata(event.config_object());
    }
    if (!request.kinds().empty() &&
        std::find(request.kinds().begin(), request.kinds().end(), kind) ==
            request.kinds().end()) {
      continue;
    }
    if (!request.namespace_().empty() &&
        metadata->namespace_() != request.namespace_()) {
      continue;
    }
    if (!request.queue_name().empty() &&
        (!event.has_workload() ||
         event.workload().spec().queue_name() != request.queue_name())) {
      continue;
    }
    if (progress != nullptr) {
      progress->revision = event.revision();
    }
    if (!on_event(event)) {
      return absl::OkStatus();
    }
  }
  return end;
}

void FakeClient::AdmitPending(const std::string& namespace_name,
                              const std::string& name,
                              const std::string& cluster_queue,
                              const std::string& flavor) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    ADD_FAILURE() << "AdmitPending: no workload " << namespace_name << "/"
                  << name;
    return;
  }
  v1::Workload& workload = it->second;
  v1::Admission& admission = *workload.mutable_status()->mutable_admission();
  admission.Clear();
  admission.set_cluster_queue(cluster_queue);
  for (const v1::PodSet& pod_set : workload.spec().pod_sets()) {
    v1::PodSetAssignment& assignment = *admission.add_pod_set_assignments();
    assignment.set_name(pod_set.name());
    assignment.set_count(pod_set.count());
    for (const auto& [resource, quantity] : pod_set.requests()) {
      (*assignment.mutable_flavors())[resource] = flavor;
    }
  }
  RemoveCondition(workload, "Evicted");
  RemoveCondition(workload, "Requeued");
  SetCondition(workload,
               MakeCondition("QuotaReserved", "True", "QuotaReserved",
                             absl::StrCat("Quota reserved in ClusterQueue ",
                                          cluster_queue),
                             now_));
  SetCondition(workload, MakeCondition("Admitted", "True", "Admitted",
                                       "The workload is admitted", now_));
  BumpLocked(workload);
}

void FakeClient::Evict(const std::string& namespace_name,
                       const std::string& name, const std::string& reason,
                       const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workloads_.find({namespace_name, name});
  if (it == workloads_.end()) {
    ADD_FAILURE() << "Evict: no workload " << namespace_name << "/" << name;
    return;
  }
  EvictLocked(it->second, reason, message);
}

void FakeClient::SetFlavorNodeLabels(
    const std::string& flavor, std::map<std::string, std::string> labels) {
  std::lock_guard<std::mutex> lock(mu_);
  node_labels_[flavor] = std::move(labels);
}

void FakeClient::SetExplanation(const std::string& namespace_name,
                                const std::string& name,
                                absl::StatusOr<v1::ExplainResponse> response) {
  std::lock_guard<std::mutex> lock(mu_);
  explanations_.insert_or_assign({namespace_name, name}, std::move(response));
}

void FakeClient::SetSimulateAnswer(
    std::function<
        absl::StatusOr<v1::SimulateResponse>(const v1::SimulateRequest&)>
        answer) {
  std::lock_guard<std::mutex> lock(mu_);
  simulate_answer_ = std::move(answer);
}

void FakeClient::AddWatchEvents(std::vector<v1::WatchEvent> events,
                                absl::Status end) {
  std::lock_guard<std::mutex> lock(mu_);
  watch_events_.insert(watch_events_.end(), events.begin(), events.end());
  watch_end_ = std::move(end);
}

void FakeClient::OnHeartbeat(
    std::function<void(const v1::HeartbeatRequest&, const absl::Status&)>
        hook) {
  std::lock_guard<std::mutex> lock(mu_);
  heartbeat_hook_ = std::move(hook);
}

std::vector<v1::HeartbeatRequest> FakeClient::heartbeats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return heartbeats_;
}

std::vector<v1::AdmitRequest> FakeClient::admit_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admit_requests_;
}

std::vector<v1::PreemptRequest> FakeClient::preempt_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return preempt_requests_;
}

std::vector<std::tuple<std::string, std::string, bool>>
FakeClient::active_changes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_changes_;
}

std::vector<v1::SetStopPolicyRequest> FakeClient::stop_policy_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_policy_requests_;
}

std::vector<v1::WatchRequest> FakeClient::watch_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return watch_requests_;
}

std::vector<v1::SimulateRequest> FakeClient::simulate_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return simulate_requests_;
}

std::vector<std::pair<std::string, std::string>> FakeClient::cancels() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancels_;
}

}  // namespace kq::cli::testing
