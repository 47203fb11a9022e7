#include "shim/webhook/job_webhook.h"

#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace kq::shim::webhook {
namespace {

const json* Find(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string StringAt(const json& object, const char* key) {
  const json* value = Find(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>()
                                                : std::string();
}

const json* Metadata(const json& object) { return Find(object, "metadata"); }

std::string Namespace(const json& object) {
  const json* metadata = Metadata(object);
  return metadata == nullptr ? "" : StringAt(*metadata, "namespace");
}

std::string Uid(const json& object) {
  const json* metadata = Metadata(object);
  return metadata == nullptr ? "" : StringAt(*metadata, "uid");
}

std::string Label(const json& object, const char* key) {
  const json* metadata = Metadata(object);
  const json* labels =
      metadata == nullptr ? nullptr : Find(*metadata, "labels");
  return labels == nullptr ? "" : StringAt(*labels, key);
}

// Kueue QueueNameForObject: the queue-name label only.
std::string QueueName(const json& object) { return Label(object, kQueueLabel); }

void SetLabel(json& object, const char* key, const char* value) {
  json& metadata = object["metadata"];
  if (!metadata.is_object()) metadata = json::object();
  json& labels = metadata["labels"];
  if (!labels.is_object()) labels = json::object();
  labels[key] = value;
}

struct OwnerReference {
  OwnerKind kind;
  std::string name;
  std::string uid;
};

// metav1.GetControllerOf: the first owner reference with controller=true.
std::optional<OwnerReference> ControllerOf(const json& object) {
  const json* metadata = Metadata(object);
  const json* refs =
      metadata == nullptr ? nullptr : Find(*metadata, "ownerReferences");
  if (refs == nullptr || !refs->is_array()) return std::nullopt;
  for (const json& ref : *refs) {
    const json* controller = Find(ref, "controller");
    if (controller == nullptr || !controller->is_boolean() ||
        !controller->get<bool>()) {
      continue;
    }
    return OwnerReference{
        .kind = {StringAt(ref, "apiVersion"), StringAt(ref, "kind")},
        .name = StringAt(ref, "name"),
        .uid = StringAt(ref, "uid")};
  }
  return std::nullopt;
}

bool Contains(const std::vector<OwnerKind>& kinds, const OwnerKind& kind) {
  for (const OwnerKind& k : kinds) {
    if (k == kind) return true;
  }
  return false;
}

// Kueue IntegrationManager.getJobTypeForOwner != nil.
bool IsEnabledIntegration(const OwnerKind& kind,
                          const JobWebhookOptions& options) {
  return Contains(options.enabled_integrations, kind);
}

// Kueue IntegrationManager.isKnownOwner: every registered integration,
// enabled or not, and ReplicaSet as the interim owner between a Pod and its
// Deployment.
bool IsKnownOwner(const OwnerKind& kind, const JobWebhookOptions& options) {
  return IsEnabledIntegration(kind, options) ||
         Contains(options.known_integrations, kind) ||
         (kind.api_version == "apps/v1" && kind.kind == "ReplicaSet");
}

// Kueue IntegrationManager.IsOwnerManagedByKueueForObject.
bool IsOwnerManagedByKueue(const json& object,
                           const JobWebhookOptions& options) {
  std::optional<OwnerReference> owner = ControllerOf(object);
  return owner.has_value() && IsEnabledIntegration(owner->kind, options);
}

// Kueue namespaceMatchesSelector; an unset callback is the nil selector.
absl::StatusOr<bool> NamespaceManaged(const std::string& ns,
                                      const JobWebhookOptions& options) {
  if (!options.namespace_managed) return true;
  absl::StatusOr<bool> managed = options.namespace_managed(ns);
  if (!managed.ok()) {
    return absl::Status(
        managed.status().code(),
        absl::StrCat("failed to get namespace: ", managed.status().message()));
  }
  return *managed;
}

bool IsSuspended(const json& job) {
  const json* spec = Find(job, "spec");
  const json* suspend = spec == nullptr ? nullptr : Find(*spec, "suspend");
  return suspend != nullptr && suspend->is_boolean() && suspend->get<bool>();
}

bool IsBeingDeleted(const json& object) {
  const json* metadata = Metadata(object);
  return metadata != nullptr &&
         !StringAt(*metadata, "deletionTimestamp").empty();
}

// The fields of a Job that Kueue reads must have the types the Go decoder
// requires; anything else is left to the API server's own validation.
absl::Status CheckJobShape(const json& job) {
  auto wrong = [](absl::string_view field, absl::string_view want) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot decode the Job: ", field, " must be ", want));
  };
  auto is = [](const json* value, auto predicate) {
    return value == nullptr || predicate(*value);
  };
  auto is_string = [](const json& v) { return v.is_string(); };
  auto is_object = [](const json& v) { return v.is_object(); };
  if (!job.is_object()) return wrong("the object", "a JSON object");
  const json* api_version = Find(job, "apiVersion");
  if (!is(api_version, is_string)) return wrong("apiVersion", "a string");
  if (api_version != nullptr && *api_version != "batch/v1") {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot decode the Job: apiVersion ",
                     api_version->get<std::string>(), " is not batch/v1"));
  }
  const json* kind = Find(job, "kind");
  if (!is(kind, is_string)) return wrong("kind", "a string");
  if (kind != nullptr && *kind != "Job") {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot decode the Job: kind ", kind->get<std::string>(),
                     " is not Job"));
  }
  const json* metadata = Find(job, "metadata");
  if (!is(metadata, is_object)) return wrong("metadata", "an object");
  if (metadata != nullptr) {
    for (const char* field :
         {"name", "generateName", "namespace", "uid", "deletionTimestamp"}) {
      if (!is(Find(*metadata, field), is_string)) {
        return wrong(absl::StrCat("metadata.", field), "a string");
      }
    }
    const json* labels = Find(*metadata, "labels");
    if (!is(labels, is_object)) return wrong("metadata.labels", "an object");
    if (labels != nullptr) {
      for (const auto& [key, value] : labels->items()) {
        if (!value.is_string()) {
          return wrong(absl::StrCat("metadata.labels[", key, "]"), "a string");
        }
      }
    }
    const json* refs = Find(*metadata, "ownerReferences");
    if (refs != nullptr && !refs->is_array()) {
      return wrong("metadata.ownerReferences", "an array");
    }
    if (refs != nullptr) {
      for (const json& ref : *refs) {
        if (!ref.is_object()) {
          return wrong("metadata.ownerReferences[]", "an object");
        }
        for (const char* field : {"apiVersion", "kind", "name", "uid"}) {
          if (!is(Find(ref, field), is_string)) {
            return wrong(absl::StrCat("metadata.ownerReferences[].", field),
                         "a string");
          }
        }
        if (!is(Find(ref, "controller"),
                [](const json& v) { return v.is_boolean(); })) {
          return wrong("metadata.ownerReferences[].controller", "a boolean");
        }
      }
    }
  }
  const json* spec = Find(job, "spec");
  if (!is(spec, is_object)) return wrong("spec", "an object");
  if (spec != nullptr && !is(Find(*spec, "suspend"),
                             [](const json& v) { return v.is_boolean(); })) {
    return wrong("spec.suspend", "a boolean");
  }
  return absl::OkStatus();
}

std::string Describe(const OwnerKind& kind, const std::string& ns,
                     const std::string& name) {
  return absl::StrCat(kind.api_version, " ", kind.kind, " ", ns, "/", name);
}

// The AdmissionResponse for a failed defaulting, shaped as
// controller-runtime's: an API error keeps its code, anything else is
// Denied (403 Forbidden).
json DeniedResponse(const absl::Status& status) {
  int code = 403;
  const char* reason = "Forbidden";
  if (absl::IsNotFound(status)) {
    code = 404;
    reason = "NotFound";
  } else if (absl::IsUnavailable(status)) {
    code = 503;
    reason = "ServiceUnavailable";
  }
  return {{"allowed", false},
          {"status",
           {{"code", code},
            {"reason", reason},
            {"message", std::string(status.message())}}}};
}

// controller-runtime admission.Errored(400, err).
json BadRequestResponse(absl::string_view message) {
  return {{"allowed", false},
          {"status", {{"code", 400}, {"message", std::string(message)}}}};
}

}  // namespace

absl::StatusOr<std::optional<json>> FindAncestorJobManagedByKueue(
    const json& job, const JobWebhookOptions& options) {
  const std::string ns = Namespace(job);
  std::set<std::string> seen;
  std::optional<json> top_level_job;
  json current = job;
  while (true) {
    if (!seen.insert(Uid(current)).second) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cyclic ownership: ", Uid(current), " is its own ancestor"));
    }
    std::optional<OwnerReference> owner = ControllerOf(current);
    if (!owner.has_value() || !IsKnownOwner(owner->kind, options)) {
      return top_level_job;
    }
    const bool managed = IsEnabledIntegration(owner->kind, options);
    if (!options.get_owner) {
      return absl::FailedPreconditionError(
          absl::StrCat("workload owner not found: no owner lookup for ",
                       Describe(owner->kind, ns, owner->name)));
    }
    absl::StatusOr<json> parent =
        options.get_owner(owner->kind, ns, owner->name);
    if (!parent.ok()) {
      return absl::Status(parent.status().code(),
                          absl::StrCat("workload owner not found: ",
                                       Describe(owner->kind, ns, owner->name),
                                       ": ", parent.status().message()));
    }
    // A reference whose uid is not the object's is stale (or forged): the
    // walk ends here rather than trusting it.
    if (Uid(*parent) != owner->uid) return top_level_job;
    if (managed && (options.manage_jobs_without_queue_name ||
                    !QueueName(*parent).empty())) {
      top_level_job = *parent;
    }
    current = *std::move(parent);
    if (static_cast<int>(seen.size()) > kManagedOwnersChainLimit) {
      return absl::FailedPreconditionError(
          absl::StrCat("managed owner chain limit reached: more than ",
                       kManagedOwnersChainLimit, " ancestors"));
    }
  }
}

absl::StatusOr<bool> WorkloadShouldBeSuspended(const json& job,
                                               const JobWebhookOptions& options,
                                               bool deleting_object_tolerance) {
  // An object being deleted may have lost its ancestors already (garbage
  // collection); suspending it would achieve nothing.
  if (deleting_object_tolerance &&
      options.skip_ancestor_check_for_deleted_workloads &&
      IsBeingDeleted(job)) {
    return false;
  }
  // A Job whose ancestor Kueue manages is admitted through that ancestor.
  absl::StatusOr<std::optional<json>> ancestor =
      FindAncestorJobManagedByKueue(job, options);
  if (!ancestor.ok()) return ancestor.status();
  if (ancestor->has_value()) return false;

  if (!QueueName(job).empty()) return true;
  if (options.manage_jobs_without_queue_name) {
    return NamespaceManaged(Namespace(job), options);
  }
  return false;
}

absl::StatusOr<json> DefaultJob(const json& job,
                                const JobWebhookOptions& options) {
  if (absl::Status shape = CheckJobShape(job); !shape.ok()) return shape;
  json defaulted = job;
  const std::string ns = Namespace(job);

  // 1. Kueue ApplyDefaultLocalQueue. The namespace is consulted only when
  // the label is about to be set.
  // Kueue's order: a Job that names its queue never waits for the lookup.
  if (QueueName(defaulted).empty() && options.default_local_queue_exists &&
      options.default_local_queue_exists(ns) &&
      !IsOwnerManagedByKueue(defaulted, options)) {
    absl::StatusOr<bool> managed = NamespaceManaged(ns, options);
    if (!managed.ok()) return managed.status();
    if (*managed) SetLabel(defaulted, kQueueLabel, kDefaultLocalQueueName);
  }

  // 2. Kueue ApplyDefaultWorkloadPriorityClass. A failed lookup skips the
  // defaulting instead of refusing the Job.
  if (options.workload_priority_class_defaulting &&
      Label(defaulted, kWorkloadPriorityClassLabel).empty() &&
      !IsOwnerManagedByKueue(defaulted, options) &&
      options.default_workload_priority_class_exists) {
    absl::StatusOr<bool> exists =
        options.default_workload_priority_class_exists();
    if (exists.ok() && *exists) {
      SetLabel(defaulted, kWorkloadPriorityClassLabel,
               kDefaultWorkloadPriorityClassName);
    }
  }

  // 3. Kueue ApplyDefaultForSuspend, after the queue label may have been
  // defaulted.
  absl::StatusOr<bool> suspend = WorkloadShouldBeSuspended(
      defaulted, options, /*deleting_object_tolerance=*/true);
  if (!suspend.ok()) return suspend.status();
  if (*suspend && !IsSuspended(defaulted)) {
    json& spec = defaulted["spec"];
    if (!spec.is_object()) spec = json::object();
    spec["suspend"] = true;
  }
  return defaulted;
}

absl::StatusOr<json> MutateJob(const json& admission_review,
                               const JobWebhookOptions& options) {
  if (!admission_review.is_object()) {
    return absl::InvalidArgumentError(
        "the admission review is not a JSON object");
  }
  std::string api_version = "admission.k8s.io/v1";
  if (const json* value = Find(admission_review, "apiVersion")) {
    if (!value->is_string() || (*value != "admission.k8s.io/v1" &&
                                *value != "admission.k8s.io/v1beta1")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "apiVersion ", value->dump(), " is not admission.k8s.io/v1"));
    }
    api_version = value->get<std::string>();
  }
  if (const json* kind = Find(admission_review, "kind");
      kind != nullptr && *kind != "AdmissionReview") {
    return absl::InvalidArgumentError(
        absl::StrCat("kind ", kind->dump(), " is not AdmissionReview"));
  }
  const json* request = Find(admission_review, "request");
  if (request == nullptr || !request->is_object()) {
    return absl::InvalidArgumentError(
        "the admission review has no request object");
  }
  const json* uid = Find(*request, "uid");
  if (uid != nullptr && !uid->is_string()) {
    return absl::InvalidArgumentError("request.uid is not a string");
  }

  json response;
  const json* object = Find(*request, "object");
  if (StringAt(*request, "operation") == "DELETE") {
    // controller-runtime's defaulter skips deletions.
    response = {{"allowed", true}, {"status", {{"code", 200}}}};
  } else if (object == nullptr) {
    response = BadRequestResponse("there is no content to decode");
  } else if (absl::Status shape = CheckJobShape(*object); !shape.ok()) {
    response = BadRequestResponse(shape.message());
  } else {
    // The API server puts the request's namespace on the object; fill it
    // in for the lookups if a caller did not, without patching it.
    json original = *object;
    const std::string request_ns = StringAt(*request, "namespace");
    if (Namespace(original).empty() && !request_ns.empty()) {
      json& metadata = original["metadata"];
      if (!metadata.is_object()) metadata = json::object();
      metadata["namespace"] = request_ns;
    }
    absl::StatusOr<json> defaulted = DefaultJob(original, options);
    if (!defaulted.ok()) {
      response = DeniedResponse(defaulted.status());
    } else {
      json patch = json::diff(original, *defaulted);
      response = {{"allowed", true}};
      if (!patch.empty()) {
        response["patchType"] = "JSONPatch";
        response["patch"] = absl::Base64Escape(
            patch.dump(-1, ' ', false, json::error_handler_t::replace));
      }
    }
  }
  response["uid"] = uid == nullptr ? "" : uid->get<std::string>();
  return json{{"apiVersion", api_version},
              {"kind", "AdmissionReview"},
              {"response", std::move(response)}};
}

}  // namespace kq::shim::webhook
