#pragma once

// Kueue's mutating admission webhook for batch/v1 Jobs (Kueue
// pkg/controller/jobs/job/job_webhook.go JobWebhook.Default, with the
// jobframework defaulting helpers in defaults.go and utils.go), as pure
// functions over the JSON objects the API server sends. Lookups that Kueue
// makes through its cached client (the Job's owners, the Namespace's labels,
// whether a default LocalQueue or WorkloadPriorityClass exists) are
// callbacks in JobWebhookOptions, so the caller decides where they come from
// (the shim's informers, kqd) and tests pass plain maps.
//
// What Default does to a Job, in Kueue's order:
//   1. Default LocalQueue: a Job without the queue-name label, in a managed
//      namespace that has a LocalQueue named "default", and not controlled by
//      an owner of an enabled integration, gets queue-name=default.
//   2. Default WorkloadPriorityClass: a Job without the priority-class label,
//      not controlled by an owner of an enabled integration, gets
//      priority-class=default when that WorkloadPriorityClass exists.
//   3. Suspend: a Job that should be managed (queue-name label, or any Job in
//      a managed namespace with manage_jobs_without_queue_name) and whose
//      controlling ancestors are not themselves managed by Kueue gets
//      spec.suspend=true.
// Not ported (kq has neither feature): ManagedBy defaulting to MultiKueue
// (kq is single-cluster, so no ClusterQueue has a MultiKueue check), and the
// elastic-job scheduling gate (kq has no workload slices, and a gate nobody
// removes would strand the pods).
//
// Thread-safety: every function is thread-safe as long as the callbacks in
// the options are.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace kq::shim::webhook {

using json = nlohmann::json;

// Kueue pkg/controller/constants.
inline constexpr char kQueueLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kWorkloadPriorityClassLabel[] =
    "kueue.x-k8s.io/priority-class";
inline constexpr char kDefaultLocalQueueName[] = "default";
inline constexpr char kDefaultWorkloadPriorityClassName[] = "default";
// Kueue jobframework managedOwnersChainLimit: how many ancestors the owner
// walk visits before giving up.
inline constexpr int kManagedOwnersChainLimit = 10;

// An object type as an ownerReference names it, e.g. {"batch/v1", "Job"}.
struct OwnerKind {
  std::string api_version;
  std::string kind;

  friend bool operator==(const OwnerKind&, const OwnerKind&) = default;
};

// Reads the object `name` of type `kind` in namespace `ns` (at least its
// metadata: uid, labels, ownerReferences). Returns NOT_FOUND when it does not
// exist; any other error is passed on.
using OwnerGetter = std::function<absl::StatusOr<json>(
    const OwnerKind& kind, const std::string& ns, const std::string& name)>;

struct JobWebhookOptions {
  // Kueue's manageJobsWithoutQueueName: suspend every Job in a managed
  // namespace, with or without the queue-name label.
  bool manage_jobs_without_queue_name = false;

  // Kueue's managedJobsNamespaceSelector, evaluated by the caller: whether
  // Jobs in `ns` are managed. Unset means every namespace (Kueue's nil
  // selector). An error fails the admission request, as in Kueue.
  std::function<absl::StatusOr<bool>(const std::string& ns)> namespace_managed;

  // Kueue's queues.DefaultLocalQueueExist: whether `ns` has a LocalQueue
  // named "default". Unset means never (no LocalQueue defaulting).
  std::function<bool(const std::string& ns)> default_local_queue_exists;

  // Kueue's WorkloadPriorityClassDefaulting feature gate (beta, on by
  // default) and the lookup of the WorkloadPriorityClass named "default".
  // Unset lookup means it does not exist. A lookup error is logged by the
  // caller's callback if it wishes and skips the defaulting, as in Kueue.
  bool workload_priority_class_defaulting = true;
  std::function<absl::StatusOr<bool>()> default_workload_priority_class_exists;

  // Kueue's enabled integrations: owner types whose objects Kueue (here kq)
  // manages itself, so a Job they control is left to them. kq's only
  // integration is batch/v1 Job.
  std::vector<OwnerKind> enabled_integrations = {{"batch/v1", "Job"}};
  // Integrations Kueue knows but that are not enabled: the owner walk goes
  // through them without treating them as managed (apps/v1 ReplicaSet is
  // always known, as in Kueue).
  std::vector<OwnerKind> known_integrations;
  // Reads owners during the walk. Required as soon as a Job has a
  // controlling owner of a known type; without it such a Job is refused
  // (Kueue refuses when it cannot read the owner).
  OwnerGetter get_owner;

  // Kueue's SkipAncestorCheckForDeletedWorkloads feature gate (beta, on):
  // the webhook does not suspend, nor walk the owners of, an object that is
  // already being deleted.
  bool skip_ancestor_check_for_deleted_workloads = true;
};

// Kueue jobframework FindAncestorJobManagedByKueue: walks the Job's
// controller owner references up while the owners are of known types and
// returns the top-most ancestor of an enabled integration that is managed
// (has the queue-name label, or manage_jobs_without_queue_name), or nullopt.
// The walk stops (keeping what it found) at an owner of an unknown type or
// whose uid differs from the reference's.
// Errors: NOT_FOUND "workload owner not found" (or get_owner's own error)
// when an owner cannot be read; FAILED_PRECONDITION "cyclic ownership" when
// the chain loops; FAILED_PRECONDITION "managed owner chain limit reached"
// beyond kManagedOwnersChainLimit ancestors.
absl::StatusOr<std::optional<json>> FindAncestorJobManagedByKueue(
    const json& job, const JobWebhookOptions& options);

// Kueue IntegrationManager.WorkloadShouldBeSuspended: whether a new Job is
// suspended by default. With `deleting_object_tolerance` (the webhook's
// call), an object being deleted is never suspended when
// skip_ancestor_check_for_deleted_workloads is set. Errors come from the
// owner walk and from namespace_managed.
absl::StatusOr<bool> WorkloadShouldBeSuspended(const json& job,
                                               const JobWebhookOptions& options,
                                               bool deleting_object_tolerance);

// Kueue JobWebhook.Default: returns the defaulted copy of `job` (a batch/v1
// Job as JSON). INVALID_ARGUMENT when the fields Kueue reads have the wrong
// JSON types; otherwise the lookup errors above.
absl::StatusOr<json> DefaultJob(const json& job,
                                const JobWebhookOptions& options);

// Serves one admission.k8s.io/v1 (or v1beta1) AdmissionReview request for
// batch/v1 Jobs the way controller-runtime's defaulting webhook does and
// returns the AdmissionReview to send back: same apiVersion and kind,
// response.uid = request.uid, and
//   - a defaulted Job: allowed, patchType "JSONPatch", patch = base64 of the
//     RFC 6902 operations turning request.object into the defaulted Job;
//   - nothing to change: allowed, no patch;
//   - DELETE: allowed, status code 200 (defaulting skips deletions);
//   - request.object missing or not a Job: not allowed, status code 400 with
//     the reason;
//   - a lookup failed: not allowed, status 404 (owner not found), 503
//     (UNAVAILABLE) or 403 with the message.
// INVALID_ARGUMENT only when `admission_review` is not an AdmissionReview
// carrying a request at all (not an object, another kind, no request
// object), since then no response can be addressed to it.
absl::StatusOr<json> MutateJob(const json& admission_review,
                               const JobWebhookOptions& options);

}  // namespace kq::shim::webhook
