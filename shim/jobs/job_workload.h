#pragma once

// The pure half of Kueue's job integration for batch/v1 Jobs (Kueue's
// pkg/controller/jobs/job, pkg/podset and the parts of
// pkg/controller/jobframework that read or change a Job): which Workload a
// Job becomes, what an admission injects into its pod template, what a stop
// restores, and the predicates the reconciler branches on. Jobs are the
// API server's JSON; nothing here does I/O, so every rule is unit-tested.
//
// Where kq has to remember something Kueue keeps elsewhere, it is written on
// the Job itself so that a restarted shim finds it:
//   - kq.dev/original-pod-scheduling (Job annotation): the pod template's
//     labels, annotations, nodeSelector, tolerations and schedulingGates and
//     the pod count as they were before StartJob injected the admission.
//     Kueue restores these from its Workload's pod set; kq's Workload lives
//     in kqd, and the Job may outlive it, so the Job carries them.
//   - kueue.x-k8s.io/stopping (Job annotation, Kueue's): set with
//     suspend=true while a stop is in progress, removed once the template is
//     restored. Kueue's IsSuspended() reads a Job carrying it as not yet
//     suspended.
// Workloads carry kq.dev/job-name and kq.dev/job-uid annotations (and
// Kueue's kueue.x-k8s.io/job-uid label) so that a Workload maps back to the
// Job incarnation that created it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"
#include "nlohmann/json.hpp"

namespace kq::shim::jobs {

using json = nlohmann::json;

// Kueue's names (pkg/controller/constants, pkg/constants, apis/kueue).
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
inline constexpr char kPodSetLabel[] = "kueue.x-k8s.io/podset";
inline constexpr char kLocalQueueLabel[] = "kueue.x-k8s.io/local-queue-name";
inline constexpr char kClusterQueueLabel[] =
    "kueue.x-k8s.io/cluster-queue-name";
inline constexpr char kWorkloadAnnotation[] = "kueue.x-k8s.io/workload";
inline constexpr char kStoppingAnnotation[] = "kueue.x-k8s.io/stopping";
inline constexpr char kJobMinParallelismAnnotation[] =
    "kueue.x-k8s.io/job-min-parallelism";
inline constexpr char kJobCompletionsEqualParallelismAnnotation[] =
    "kueue.x-k8s.io/job-completions-equal-parallelism";
inline constexpr char kProvReqAnnotationPrefix[] = "provreq.kueue.x-k8s.io/";
// Kueue's DefaultPodSetName.
inline constexpr char kDefaultPodSetName[] = "main";

// kq's own.
inline constexpr char kJobNameAnnotation[] = "kq.dev/job-name";
inline constexpr char kJobUidAnnotation[] = "kq.dev/job-uid";
inline constexpr char kOriginalPodSchedulingAnnotation[] =
    "kq.dev/original-pod-scheduling";

// Kueue's GetWorkloadNameForJob: "job-<name>-<hash>", where <hash> is the
// first 5 hex digits of SHA-1("Job\nbatch\n<name>\n<uid>"), and "job-<name>"
// is cut to 247 characters so the whole name fits Kubernetes' 253 (Kueue's
// default; its ShortWorkloadNames gate, off by default, would cut to 63).
// The UID in the hash gives a Job recreated under the same name a Workload
// of its own: kqd keeps finished Workloads' names taken.
std::string WorkloadNameForJob(absl::string_view job_name,
                               absl::string_view job_uid);

// The Job's identity.
struct JobKey {
  std::string namespace_name;
  std::string name;
  bool operator<(const JobKey& o) const {
    return std::tie(namespace_name, name) < std::tie(o.namespace_name, o.name);
  }
  bool operator==(const JobKey& o) const {
    return namespace_name == o.namespace_name && name == o.name;
  }
  // "namespace/name".
  std::string String() const;
};

JobKey KeyOfJob(const json& job);
std::string UidOfJob(const json& job);

// Which Job incarnation a Workload was made for, from the annotations
// WorkloadForJob writes; nullopt for a Workload the shim did not create.
struct JobOwner {
  JobKey key;
  std::string uid;
};
std::optional<JobOwner> OwnerOfWorkload(const v1::Workload& wl);

// ---- Predicates (Kueue's Job methods) ------------------------------------

// Kueue's IsSuspended: spec.suspend is true and no stop is in progress
// (kueue.x-k8s.io/stopping is not "true").
bool IsSuspended(const json& job);
// spec.suspend is true, whatever the stopping annotation says.
bool SuspendRequested(const json& job);
// A stop is in progress: suspend was set and the template is not restored
// yet.
bool IsStopping(const json& job);
// The Job carries the pod scheduling StartJob saved (an admission is, or
// was, injected into its template).
bool HasOriginalPodScheduling(const json& job);
// status.active (0 when absent).
int64_t ActivePods(const json& job);
// Kueue's IsActive: status.active != 0.
bool IsActive(const json& job);

// Kueue's Finished(): the first Complete or Failed condition with status
// True.
struct JobFinish {
  bool finished = false;
  // False for Failed.
  bool succeeded = true;
  std::string message;
};
JobFinish Finished(const json& job);

// Kueue's podsCount: parallelism (1 when unset), capped by completions.
int32_t PodsCount(const json& job);

// Kueue's ReclaimablePods for a batch/v1 Job: pods that finished and will
// not run again, so their quota can go (at most one entry, pod set
// "main"). Empty when there is nothing to reclaim.
std::vector<v1::ReclaimablePod> ReclaimablePods(const json& job);

// Kueue's terminalIndexesCount: the indexes of an Indexed Job below
// `completions` that completed or failed for good, counted once.
int32_t TerminalIndexesCount(absl::string_view completed_indexes,
                             absl::string_view failed_indexes,
                             int32_t completions);

// Kueue's cleanLabels: drops the labels the Job controller manages
// (job-name, controller-uid, batch.kubernetes.io/controller-uid) from a pod
// template, keeping batch.kubernetes.io/job-name.
void CleanLabels(json& pod_template);

// ---- PodSetInfo (Kueue's pkg/podset) -------------------------------------

// What an admission (or a restore) sets on a pod set's pod template.
// Tolerations and scheduling gates are core/v1 JSON objects, kept whole.
struct PodSetInfo {
  std::string name;
  int32_t count = 0;
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> node_selector;
  json tolerations = json::array();
  json scheduling_gates = json::array();

  // Kueue's PodSetInfo.Merge: FailedPrecondition "invalid admission check
  // PodSetUpdate: conflict for <field>: conflict for key=K, value1=V1,
  // value2=V2" when a key is set to two values (this one is value1); on
  // success adds `other`'s maps and its tolerations and gates not present
  // yet (tolerations compare as Kueue's tolerations.Equal: an empty operator
  // is "Equal", tolerationSeconds ignored).
  absl::Status Merge(const PodSetInfo& other);
  // Kueue's AddOrUpdateLabel.
  void AddOrUpdateLabel(const std::string& key, const std::string& value);
};

// Kueue's FromUpdate.
PodSetInfo FromUpdate(const v1::PodSetUpdate& update);
// Kueue's FromPodSet, from a pod template (a PodTemplateSpec as JSON).
PodSetInfo FromPodTemplate(const json& pod_template, absl::string_view name,
                           int32_t count);

// Kueue's podset.Merge: merges `info` into the template's metadata and
// spec. The template is unchanged when it fails (FailedPrecondition, as
// PodSetInfo::Merge).
absl::Status MergeIntoTemplate(json& pod_template, const PodSetInfo& info);
// Kueue's RestorePodSpec: sets the template's annotations, labels,
// nodeSelector, tolerations and schedulingGates to `info`'s; returns
// whether anything changed. Empty values remove the field.
bool RestorePodSpec(json& pod_template, const PodSetInfo& info);

// Kueue's FromAssignment: the admitted count (the assignment's, else
// `default_count`) and, once per assigned flavor, its nodeLabels (as
// nodeSelector, later flavors overwriting) and tolerations, taken from
// `placement` (kqd's PodSetPlacement for the pod set; may be null). NotFound
// when an assigned flavor has no placement.
absl::StatusOr<PodSetInfo> FromAssignment(
    const v1::PodSetAssignment& assignment, int32_t default_count,
    const v1::PodSetPlacement* placement);

// Kueue's getPodSetsInfoFromStatus with its default feature gates: per
// admitted pod set, the flavors' nodeLabels (as nodeSelector) and
// tolerations from `placements` (kqd's answer for the admission), the
// kueue.x-k8s.io/podset label, the local-queue-name and cluster-queue-name
// labels (AssignQueueLabelsForPods; the latter only for a DNS-1123 label
// name), the kueue.x-k8s.io/workload annotation (TopologyAwareScheduling),
// then each admission check's podSetUpdates for the pod set, merged in
// check order. Count is the assignment's count (partial admission) or the
// pod set's. Empty when the workload has no admission. NotFound when an
// assigned flavor has no placement; FailedPrecondition "in admission check
// \"X\": ..." for conflicting updates (Kueue finishes the workload then).
absl::StatusOr<std::vector<PodSetInfo>> PodSetsInfoFromStatus(
    const v1::Workload& wl,
    const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>& placements);

// The message of Kueue's "Started" event.
std::string AdmittedMessage(const v1::Workload& wl);
// Kueue's recordAdmissionCheckUpdate message: "check: message" of every
// Pending admission check with a message, joined by "; "; empty for none.
std::string AdmissionCheckMessage(const v1::Workload& wl);

// ---- Job changes (Kueue's Job.RunWithPodSetsInfo / RestorePodSetsInfo) ---

// Sets spec.suspend=false, then for a Job with
// kueue.x-k8s.io/job-min-parallelism sets parallelism to the admitted count
// (and completions too with job-completions-equal-parallelism=true), then
// merges the info into the pod template. FailedPrecondition "invalid
// podset infos: expecting 1 podset, got N" unless exactly one info, or the
// merge conflict. On error the Job may be partly changed, as in Kueue; the
// caller discards it.
absl::Status RunWithPodSetsInfo(json& job,
                                const std::vector<PodSetInfo>& infos);
// Restores the pod template (and parallelism of a partially admitted Job)
// from infos[0], keeping the Job controller's managed labels found in the
// template. Returns whether anything changed; false for no infos.
bool RestorePodSetsInfo(json& job, const std::vector<PodSetInfo>& infos);

// ---- What the shim writes -------------------------------------------------

// The Workload Kueue's reconciler would create for a labelled Job
// (manifest::ParseManifests on the JSON, then Kueue's ConstructWorkload
// metadata): named WorkloadNameForJob; labels only kueue.x-k8s.io/job-uid
// (when the UID is a valid label value); annotations the Job's
// provreq.kueue.x-k8s.io/ ones plus kq.dev/job-name and kq.dev/job-uid; the
// pod set built from the Job's original template (before any admission was
// injected) with the Job controller's labels cleaned. InvalidArgument for a
// Job without a UID or one the manifest reader refuses; FailedPrecondition
// for a Job without the queue-name label.
absl::StatusOr<v1::Workload> WorkloadForJob(const json& job);

// The Job to write when `wl` is admitted: the original pod scheduling saved
// in kq.dev/original-pod-scheduling (restoring first if a previous
// admission left it there), then RunWithPodSetsInfo with
// PodSetsInfoFromStatus(wl, placements). Errors as those two;
// FailedPrecondition ones are permanent (Kueue: workload finished with
// FailedToStart).
absl::StatusOr<json> StartJob(
    const json& job, const v1::Workload& wl,
    const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>& placements);

// Step one of Kueue's Job.Stop: spec.suspend=true and
// kueue.x-k8s.io/stopping="true".
json SuspendJob(const json& job);

// Step two, once no pod is active: spec.suspend=true, the pod template (and
// parallelism) restored from kq.dev/original-pod-scheduling, which is
// removed with kueue.x-k8s.io/stopping. A Job without the saved original
// keeps its template (Kueue: "unable to restore pod templates").
// InvalidArgument when the saved annotation is not valid JSON.
absl::StatusOr<json> RestoreJob(const json& job);

}  // namespace kq::shim::jobs
