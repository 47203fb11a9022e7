#pragma once

// The pure half of Kueue's ProvisioningRequest admission check controller
// (pkg/controller/admissionchecks/provisioning: controller.go,
// provisioning.go, constants.go, and pkg/workload's admission check
// backoff): object names, the PodTemplates and ProvisioningRequests a
// workload gets, and how a request's conditions become the check's state.
// Workloads are kqd's protos, Kubernetes objects the API server's JSON;
// nothing here does I/O.
//
// What kq keeps where Kueue keeps it elsewhere:
//   - Owner references: a kq Workload is not a Kubernetes object, so every
//     ProvisioningRequest and PodTemplate the shim creates carries the
//     workload's namespace, name and UID in kq.dev/workload-namespace,
//     kq.dev/workload-name and kq.dev/workload-uid (Kueue's owner
//     reference to the Workload, which its requests index is keyed on).
//     PodTemplates also name their request in kq.dev/provisioning-request
//     and are owned by it (ownerReferences, as Kueue sets them), so the
//     Kubernetes garbage collector removes them with it.
//   - The check's retryCount: kq's AdmissionCheckState has no retryCount,
//     so the request whose failure (or expired booking) a Retry was
//     reported for is kept, marked kq.dev/retry-reported="true", as the
//     record of that retry: the newest such record of a check is its
//     retryCount (its attempt). Kueue deletes every request on eviction
//     (CleanupProvisioningRequestsOnEviction, on by default) and names the
//     next attempt retryCount+1; kq deletes every request but that record,
//     which holds no capacity (it failed or its booking expired), and names
//     the next attempt the same way.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

namespace kq::shim::provisioning {

using json = nlohmann::json;

// Kueue's names.
inline constexpr char kControllerName[] = "kueue.x-k8s.io/provisioning-request";
inline constexpr char kConfigApiGroup[] = "kueue.x-k8s.io";
inline constexpr char kConfigKind[] = "ProvisioningRequestConfig";
inline constexpr char kCheckInactiveMessage[] = "the check is not active";
inline constexpr char kNoRequestNeeded[] =
    "the provisioning request is not needed";
inline constexpr char kManagedLabel[] = "kueue.x-k8s.io/managed";
inline constexpr char kManagedLabelValue[] = "true";
inline constexpr char kProvReqAnnotationPrefix[] = "provreq.kueue.x-k8s.io/";
inline constexpr char kIdenticalPodTemplates[] = "IdenticalPodTemplates";
inline constexpr char kIdenticalWorkloadSchedulingRequirements[] =
    "IdenticalWorkloadSchedulingRequirements";
// The autoscaler's (autoscaling.x-k8s.io/v1).
inline constexpr char kConsumeProvisioningRequestAnnotation[] =
    "autoscaling.x-k8s.io/consume-provisioning-request";
inline constexpr char kProvisioningClassAnnotation[] =
    "autoscaling.x-k8s.io/provisioning-class-name";
inline constexpr char kConditionProvisioned[] = "Provisioned";
inline constexpr char kConditionAccepted[] = "Accepted";
inline constexpr char kConditionFailed[] = "Failed";
inline constexpr char kConditionBookingExpired[] = "BookingExpired";
inline constexpr char kConditionCapacityRevoked[] = "CapacityRevoked";

// kq's own (see the file comment).
inline constexpr char kWorkloadNamespaceAnnotation[] =
    "kq.dev/workload-namespace";
inline constexpr char kWorkloadNameAnnotation[] = "kq.dev/workload-name";
inline constexpr char kWorkloadUidAnnotation[] = "kq.dev/workload-uid";
inline constexpr char kRequestAnnotation[] = "kq.dev/provisioning-request";
inline constexpr char kRetryReportedAnnotation[] = "kq.dev/retry-reported";

// ---- Names (provisioning.go, controller.go) ------------------------------

// Kueue's limitObjectName: names over 247 characters are cut to 247 and
// get "-" and the first 5 hex digits of the full name's SHA-1.
std::string LimitObjectName(absl::string_view full_name);
// "<workload>-<check>-<attempt>", limited.
std::string ProvisioningRequestName(absl::string_view workload,
                                    absl::string_view check, int32_t attempt);
// "ppt-<request>-<pod set>", limited.
std::string PodTemplateName(absl::string_view request,
                            absl::string_view pod_set);
// Kueue's matchesWorkloadAndCheck: the name is the (limited)
// "<workload>-<check>-" prefix followed by digits only.
bool MatchesWorkloadAndCheck(absl::string_view request_name,
                             absl::string_view workload,
                             absl::string_view check);
// Kueue's getAttempt: the digits after the prefix; 1 (Kueue logs an error)
// when the name does not match or the number does not parse.
int32_t GetAttempt(absl::string_view request_name, absl::string_view workload,
                   absl::string_view check);

// ---- Objects' fields ------------------------------------------------------

std::string NameOf(const json& object);
std::string NamespaceOf(const json& object);
std::string UidOf(const json& object);
// metadata.annotations[key], "" when absent.
std::string AnnotationOf(const json& object, absl::string_view key);

// The workload an object was created for (its kq.dev/workload-*
// annotations); nullopt for objects without them.
struct WorkloadRef {
  std::string namespace_name;
  std::string name;
  std::string uid;
};
std::optional<WorkloadRef> OwnerOf(const json& object);

// status.conditions[type=`type`] of a ProvisioningRequest, or null.
const json* FindCondition(const json& request, absl::string_view type);
// Kueue's isProvisioned, isAccepted, isFailed, isBookingExpired,
// isCapacityRevoked: the condition has status "True".
bool IsConditionTrue(const json& request, absl::string_view type);
// The condition's message ("" when absent).
std::string ConditionMessage(const json& request, absl::string_view type);

// ---- Configuration --------------------------------------------------------

// Kueue's ConfigFromRef validation: parameters present, naming a
// kueue.x-k8s.io ProvisioningRequestConfig. InvalidArgument ("bad
// parameters reference: ...") otherwise; the name on success.
absl::StatusOr<std::string> ConfigNameOf(const v1::AdmissionCheck& check);

// The retry strategy with Kueue's CRD defaults for absent fields (3, 60 s,
// 1800 s).
struct RetryStrategy {
  int32_t backoff_limit_count = 3;
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 1800;
};
RetryStrategy RetryStrategyOf(const v1::ProvisioningRequestConfig& config);

// Kueue's UpdateAdmissionCheckRequeueState: the wait before the
// `retry_count`+1-th requeue, wait.Backoff's step retry_count+1: the base
// first, then base * 2^retry_count seconds at most `max` (no cap when `max`
// is 0), without the sub-second jitter its truncation drops.
int32_t RequeueAfterSeconds(int32_t retry_count, int32_t base_seconds,
                            int32_t max_seconds);

// ---- Pod sets (controller.go) ---------------------------------------------

// The pod set's template (Kubernetes PodTemplateSpec JSON). A pod set
// submitted without one (kq's own clients) gets one container "main" with
// the pod set's requests, nodeSelector and tolerations, so that the
// PodTemplate the autoscaler reads asks for what kqd charges quota for.
json PodSetTemplate(const v1::PodSet& pod_set);
// Kueue's podUses: a container or init container requests or limits one of
// `resources`.
bool PodUses(const json& pod_spec, const std::set<std::string>& resources);

// Kueue's reqIsNeeded: a pod set with pods that uses a managed resource
// (any, when none are listed) is admitted with at least one pod.
// FailedPrecondition "inconsistent podSet assignments: missing assignment
// for PodSet \"<name>\"" when such a pod set has no assignment. kq's
// PodSetAssignment.count is always the admitted count (Kueue's
// ptr.Deref(psa.Count, ps.Count) never falls back).
absl::StatusOr<bool> ReqIsNeeded(const v1::Workload& wl,
                                 const v1::ProvisioningRequestConfig& config);

// Kueue's requiredPodSets: the pod sets with pods using a managed resource.
std::vector<std::string> RequiredPodSets(
    const v1::Workload& wl, const std::vector<std::string>& managed);

// Kueue's MergedPodSet. The pointers point into the workload given to
// MergePodSets.
struct MergedPodSet {
  std::string name;
  const v1::PodSet* pod_set = nullptr;
  const v1::PodSetAssignment* assignment = nullptr;
  int32_t count = 0;
};
// Kueue's mergePodSets: the required pod sets with their admitted counts
// (pod sets admitted with none left out), those the config's
// podSetMergePolicy finds alike merged into the first one.
// FailedPrecondition "inconsistent podSet assignments" when a required pod
// set has no assignment.
absl::StatusOr<std::vector<MergedPodSet>> MergePodSets(
    const v1::Workload& wl, const v1::ProvisioningRequestConfigSpec& spec);
// Kueue's canMergePodSets for one policy ("" never merges).
bool CanMergePodSets(const v1::PodSet& a, const v1::PodSet& b,
                     absl::string_view policy);

// ---- The objects the shim creates -----------------------------------------

// Kueue's createPodTemplate: a v1 PodTemplate `name` in the workload's
// namespace, labelled kueue.x-k8s.io/managed=true, annotated with the
// workload (and `request`), whose template is the pod set's with the
// assigned flavors' nodeLabels (nodeSelector) and tolerations merged in
// (Kueue's podset.FromAssignment + Merge, flavors from kqd's `placement`)
// and limits copied to missing requests (UseLimitsAsMissingRequestsInPod).
// NotFound when an assigned flavor has no placement; FailedPrecondition
// when a flavor's nodeLabels conflict with the template's nodeSelector.
absl::StatusOr<json> BuildPodTemplate(const v1::Workload& wl,
                                      absl::string_view name,
                                      absl::string_view request,
                                      const MergedPodSet& pod_set,
                                      const v1::PodSetPlacement* placement);

// One entry of a request's spec.podSets.
struct RequestPodSet {
  std::string pod_template;
  int32_t count = 0;
};
// The autoscaling.x-k8s.io/v1 ProvisioningRequest Kueue creates: labelled
// kueue.x-k8s.io/managed=true, annotated with the workload;
// spec.provisioningClassName and spec.parameters from the config, the
// workload's provreq.kueue.x-k8s.io/<param> annotations added as
// parameters (Kueue's passProvReqParams), and `pod_sets`.
json BuildProvisioningRequest(const v1::Workload& wl, absl::string_view name,
                              const v1::ProvisioningRequestConfig& config,
                              const std::vector<RequestPodSet>& pod_sets);

// Kueue's provReqSyncedWithConfig: same class, and every parameter of the
// config present with the same value.
bool ProvReqSyncedWithConfig(const json& request,
                             const v1::ProvisioningRequestConfig& config);

// Whether the request is a retry record (kq.dev/retry-reported="true").
bool IsRetryRecord(const json& request);

// Kueue's activeOrLastPRForChecks for one check: among `requests` of the
// workload, the one of the highest attempt that matches the workload and
// check and is in sync with the config; retry records are history, not
// attempts in flight, and are skipped. Null when none.
const json* ActiveOrLastRequest(const std::vector<json>& requests,
                                absl::string_view workload,
                                absl::string_view check,
                                const v1::ProvisioningRequestConfig& config);

// Kueue's podSetUpdates for a Provisioned request: per request pod set,
// the workload pod set whose PodTemplate name it references gets the
// consume-provisioning-request and provisioning-class-name annotations,
// and the config's nodeSelector updates valued from
// status.provisioningClassDetails (details absent are skipped).
std::vector<v1::PodSetUpdate> PodSetUpdates(
    const v1::Workload& wl, const json& request,
    const v1::ProvisioningRequestConfig& config);

// ---- Check state (syncCheckStates) ----------------------------------------

struct CheckUpdate {
  // The check as Kueue would write it.
  v1::AdmissionCheckState state;
  // With state Retry: Kueue's requeueAfterSeconds.
  std::optional<int32_t> requeue_after_seconds;
  // Kueue's `updated`: the check is written.
  bool updated = false;
};

// Kueue's syncCheckStates for one check of a workload holding quota:
//   - no config (`config` null): Pending, "the check is not active";
//   - no request needed: Ready, "the provisioning request is not needed";
//   - no request (`request` null): unchanged;
//   - Failed: while attempt <= backoffLimitCount, "Retrying after failure:
//     <message>" and, when the attempt is newer than `retry_count`, Retry
//     with RequeueAfterSeconds(retry_count); past the limit, Rejected with
//     the condition's message;
//   - CapacityRevoked while the workload is active and unfinished:
//     Rejected with its message;
//   - BookingExpired before the workload is Admitted: as Failed, "Retrying
//     after booking expired: <message>"; after admission: unchanged;
//   - Provisioned: Ready (once) with PodSetUpdates and the condition's
//     message;
//   - Accepted: with a Provisioned condition, its message (the ETA), Pending;
//   - otherwise: Pending, no message.
// `retry_count` is Kueue's check retryCount (see the file comment).
CheckUpdate SyncCheckState(const v1::Workload& wl,
                           const v1::AdmissionCheckState& current,
                           const v1::ProvisioningRequestConfig* config,
                           bool request_needed, const json* request,
                           int32_t retry_count);

// Kueue's updateCheckMessage and updateCheckState: set, and report a
// change.
bool UpdateCheckMessage(v1::AdmissionCheckState& state,
                        absl::string_view message);
bool UpdateCheckState(v1::AdmissionCheckState& state, absl::string_view value);

}  // namespace kq::shim::provisioning
