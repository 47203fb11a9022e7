#pragma once

// kq's domain types: Kueue's API objects as plain C++ values, with
// quantities parsed once. No I/O, no protos; conversion lives at the edges
// (server/codec). All types are thread-compatible values.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

#include "server/container/boxed.h"
#include "server/container/compact_vector.h"
#include "server/container/flat_map.h"
#include "server/container/interned_string.h"
#include "server/core/conditions.h"
#include "server/core/quantity.h"
#include "server/core/uid.h"

namespace kq {

// Kinds of configuration objects, with Kueue's kind names.
enum class ObjectKind {
  kNamespace,
  kResourceFlavor,
  kClusterQueue,
  kCohort,
  kLocalQueue,
  kWorkloadPriorityClass,
  kAdmissionCheck,
  kProvisioningRequestConfig,
  kMultiKueueConfig,
  kMultiKueueCluster,
  kWorkload,
};

// Kueue's kind name ("ClusterQueue").
const char* KindName(ObjectKind kind);
// Parses a kind name as kubectl does: the kind, its plural, lower case, or a
// short name ("cq", "clusterqueues"). Returns false when unknown.
bool ParseKind(const std::string& text, ObjectKind* kind);
bool IsNamespaced(ObjectKind kind);

// Most objects have no labels, annotations or node selector, and kqd holds
// every pending workload in memory: an empty one costs a pointer.
using Labels = BoxedMap<std::string, std::string>;

struct ObjectMeta {
  std::string name;
  // Empty for cluster-scoped objects. Interned: the many workloads of a
  // namespace keep its name once.
  InternedString namespace_name;
  Uid uid;
  int64_t revision = 0;
  absl::Time creation_timestamp = absl::UnixEpoch();
  Labels labels;
  Labels annotations;
  // Prefix for a server-generated name, used when `name` is empty.
  BoxedString generate_name;

  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  absl::Time last_transition_time = absl::UnixEpoch();

  friend bool operator==(const Condition&, const Condition&) = default;
};

// An object's status.conditions: a workload keeps them in 8 bytes.
using Conditions = CompactVector<Condition>;

// Finds a condition by type, or nullptr.
const Condition* FindCondition(const Conditions& conditions,
                               const std::string& type);
bool IsConditionTrue(const Conditions& conditions, const std::string& type);
// The condition of `type` when it is True and turned so at `at`, else null:
// what a batch stamped with `at` did (the engine stamps every change of a
// batch with the batch's time), read by the metrics and the workload log.
const Condition* FindConditionTurnedTrue(const Conditions& conditions,
                                         const std::string& type,
                                         absl::Time at);
// Sets a condition; last_transition_time changes only when status does.
void SetCondition(Conditions* conditions, Condition condition);

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key;
  std::string op;  // "Equal" or "Exists"; empty means Equal
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct LabelSelector {
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// Whether `labels` satisfy `selector` (Kubernetes semantics).
bool SelectorMatches(const LabelSelector& selector, const Labels& labels);

struct Namespace {
  ObjectMeta meta;
  friend bool operator==(const Namespace&, const Namespace&) = default;
};

struct ResourceFlavor {
  ObjectMeta meta;
  Labels node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;
  std::string topology_name;
  friend bool operator==(const ResourceFlavor&,
                         const ResourceFlavor&) = default;
};

struct ResourceQuota {
  std::string name;
  Quantity nominal_quota;
  std::optional<Quantity> borrowing_limit;
  std::optional<Quantity> lending_limit;
  friend bool operator==(const ResourceQuota&, const ResourceQuota&) = default;
};

struct FlavorQuotas {
  std::string name;
  std::vector<ResourceQuota> resources;
  friend bool operator==(const FlavorQuotas&, const FlavorQuotas&) = default;
};

struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;
  friend bool operator==(const ResourceGroup&, const ResourceGroup&) = default;
};

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };
enum class StopPolicy { kNone, kHold, kHoldAndDrain };

// Flavor fungibility policies (Kueue's FlavorFungibilityPolicy).
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };

struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  std::string
      preference;  // "", BorrowingOverPreemption, PreemptionOverBorrowing
  friend bool operator==(const FlavorFungibility&,
                         const FlavorFungibility&) = default;
};

// Kueue's PreemptionPolicy values, as ClusterQueuePreemption spells them.
// Here rather than in preemption/, whose predicate reads them, because the
// scheduler and the codec name them too.
inline constexpr char kPolicyNever[] = "Never";
inline constexpr char kPolicyLowerPriority[] = "LowerPriority";
inline constexpr char kPolicyLowerOrNewerEqualPriority[] =
    "LowerOrNewerEqualPriority";
inline constexpr char kPolicyAny[] = "Any";

struct ClusterQueuePreemption {
  std::string reclaim_within_cohort = kPolicyNever;
  std::string borrow_within_cohort_policy = kPolicyNever;
  std::optional<int32_t> borrow_within_cohort_max_priority_threshold;
  std::string within_cluster_queue = kPolicyNever;
  friend bool operator==(const ClusterQueuePreemption&,
                         const ClusterQueuePreemption&) = default;
};

struct AdmissionCheckStrategyRule {
  std::string name;
  std::vector<std::string> on_flavors;
  friend bool operator==(const AdmissionCheckStrategyRule&,
                         const AdmissionCheckStrategyRule&) = default;
};

struct ClusterQueue {
  ObjectMeta meta;
  std::vector<ResourceGroup> resource_groups;
  std::string cohort_name;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  // Absent selects no namespace; an empty selector selects all.
  std::optional<LabelSelector> namespace_selector;
  FlavorFungibility flavor_fungibility;
  ClusterQueuePreemption preemption;
  std::vector<AdmissionCheckStrategyRule> admission_checks;
  StopPolicy stop_policy = StopPolicy::kNone;
  std::optional<Quantity> fair_sharing_weight;
  friend bool operator==(const ClusterQueue&, const ClusterQueue&) = default;
};

struct Cohort {
  ObjectMeta meta;
  std::string parent_name;
  std::vector<ResourceGroup> resource_groups;
  std::optional<Quantity> fair_sharing_weight;
  friend bool operator==(const Cohort&, const Cohort&) = default;
};

struct LocalQueue {
  ObjectMeta meta;
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
  std::optional<Quantity> fair_sharing_weight;
  friend bool operator==(const LocalQueue&, const LocalQueue&) = default;
};

struct WorkloadPriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  std::string description;
  friend bool operator==(const WorkloadPriorityClass&,
                         const WorkloadPriorityClass&) = default;
};

struct AdmissionCheck {
  ObjectMeta meta;
  std::string controller_name;
  std::string parameters_api_group;
  std::string parameters_kind;
  std::string parameters_name;
  friend bool operator==(const AdmissionCheck&,
                         const AdmissionCheck&) = default;
};

// The controller name of Kueue's provisioning admission check, whose
// parameters are a ProvisioningRequestConfig.
inline constexpr char kProvisioningRequestControllerName[] =
    "kueue.x-k8s.io/provisioning-request";

// Kueue's ProvisioningRequestRetryStrategy, with the CRD's defaults filled
// in: a field left out of a manifest reads as its default, as the API
// server's defaulting makes it in Kueue.
struct ProvisioningRequestRetryStrategy {
  int32_t backoff_limit_count = 3;
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 1800;
  friend bool operator==(const ProvisioningRequestRetryStrategy&,
                         const ProvisioningRequestRetryStrategy&) = default;
};

// One spec.podSetUpdates.nodeSelector entry: the admitted pods get node
// selector `key` with the value of the ProvisioningRequest's
// status.provisioningClassDetails[value_from_provisioning_class_detail].
struct ProvisioningRequestPodSetUpdatesNodeSelector {
  std::string key;
  std::string value_from_provisioning_class_detail;
  friend bool operator==(const ProvisioningRequestPodSetUpdatesNodeSelector&,
                         const ProvisioningRequestPodSetUpdatesNodeSelector&) =
      default;
};

// Kueue's ProvisioningRequestConfig (cluster-scoped): the parameters of an
// AdmissionCheck whose controller is kProvisioningRequestControllerName.
// kqd stores and validates it and marks checks that reference a missing
// one inactive; kq-k8s-shim reads it to create ProvisioningRequests. It
// does not take part in scheduling.
struct ProvisioningRequestConfig {
  ObjectMeta meta;
  std::string provisioning_class_name;
  Labels parameters;
  // Empty: every resource is managed.
  std::vector<std::string> managed_resources;
  ProvisioningRequestRetryStrategy retry_strategy;
  std::vector<ProvisioningRequestPodSetUpdatesNodeSelector>
      pod_set_updates_node_selector;
  // "", IdenticalPodTemplates or IdenticalWorkloadSchedulingRequirements.
  std::string pod_set_merge_policy;
  friend bool operator==(const ProvisioningRequestConfig&,
                         const ProvisioningRequestConfig&) = default;
};

// The controller name of Kueue's MultiKueue admission check, whose
// parameters are a MultiKueueConfig.
inline constexpr char kMultiKueueControllerName[] = "kueue.x-k8s.io/multikueue";
// Set on every copy a MultiKueue manager makes on a worker, to the manager's
// Configuration multiKueue.origin; garbage collection keys on it.
inline constexpr char kMultiKueueOriginLabel[] =
    "kueue.x-k8s.io/multikueue-origin";
// Kueue's built-in dispatchers (Configuration multiKueue.dispatcherName);
// any other name is an external dispatcher.
inline constexpr char kMultiKueueDispatcherAllAtOnce[] =
    "kueue.x-k8s.io/multikueue-dispatcher-all-at-once";
inline constexpr char kMultiKueueDispatcherIncremental[] =
    "kueue.x-k8s.io/multikueue-dispatcher-incremental";
// MultiKueueConfig.spec.quotaManagement and MultiKueueCluster
// clusterSource.kubeConfig.locationType values.
inline constexpr char kQuotaManagementManual[] = "Manual";
inline constexpr char kQuotaManagementAutomated[] = "Automated";
inline constexpr char kLocationTypeSecret[] = "Secret";
inline constexpr char kLocationTypePath[] = "Path";

// Why a MultiKueueCluster whose kubeConfig is a Secret never connects: the
// message of its Active=False (BadKubeConfig) condition, with Kueue's
// "load client config failed: " prefix, and of the warning when it is
// applied.
inline constexpr char kMultiKueueSecretMessage[] =
    "load client config failed: kq does not read Kubernetes Secrets; set "
    "spec.clusterSource.kubeConfig.locationType to Path and location to the "
    "absolute path of a kq contexts file on kqd's machine (naming the "
    "worker's server, with tls-ca, cert and key, or token-file as needed)";

// Kueue's MultiKueueConfig (cluster-scoped): the parameters of an
// AdmissionCheck whose controller is kMultiKueueControllerName, naming the
// MultiKueueClusters its workloads are dispatched to. The order of
// `clusters` matters: the Incremental dispatcher nominates in this order.
struct MultiKueueConfig {
  ObjectMeta meta;
  std::vector<std::string> clusters;
  std::string quota_management = kQuotaManagementManual;
  friend bool operator==(const MultiKueueConfig&,
                         const MultiKueueConfig&) = default;
};

// Kueue's MultiKueueCluster (cluster-scoped): how a manager reaches one
// worker. Exactly one source is set: a kubeConfig (`location_type` and
// `location`) or a clusterProfileRef (`cluster_profile_name`). kq reads a
// Path location as a kq contexts file (kq/client/context_file.h); it reads
// no Kubernetes Secrets. Its status (the Active condition) is not part of
// the object: the federation runtime reports it to AdmissionState.
struct MultiKueueCluster {
  ObjectMeta meta;
  std::string location_type = kLocationTypeSecret;  // clusterSource.kubeConfig
  std::string location;
  std::string cluster_profile_name;  // clusterSource.clusterProfileRef.name
  friend bool operator==(const MultiKueueCluster&,
                         const MultiKueueCluster&) = default;
};

// ---------------------------------------------------------------------------
// Workload

struct NodeSelectorTerm {
  std::vector<LabelSelectorRequirement> match_expressions;
  friend bool operator==(const NodeSelectorTerm&,
                         const NodeSelectorTerm&) = default;
};

// Requests by resource name, ordered so that iteration is deterministic.
// A pod set requests a few resources, and kqd holds every pending one.
using ResourceList = FlatMap<std::string, Quantity>;

struct PodSet {
  // Interned: most workloads name their pod sets alike ("main").
  InternedString name;
  int32_t count = 1;
  std::optional<int32_t> min_count;
  // The pod template's text is kept on disk apart from the workload
  // (store::PodTemplate), not in memory: kqd's state leaves template_json
  // empty, and the engine reads the text back for every workload it
  // answers with or publishes. (Here, beside the other small fields, so
  // that a pod set takes 72 bytes, and with its CompactVector's header an
  // 80-byte block: tests/server/core/sizes_test.cc.)
  bool template_on_disk = false;
  ResourceList requests;  // of one pod
  Labels node_selector;
  BoxedVector<Toleration> tolerations;
  BoxedVector<NodeSelectorTerm> required_node_affinity;
  // The pod template as JSON text; opaque to admission. Empty (8 bytes)
  // in kqd's state, which keeps it on disk.
  BoxedString template_json;
  // A digest of the template's scheduling-relevant pod spec shape
  // (SpecShapeDigest, core/spec_shape.h), made when kqd received the template
  // and kept with the workload, as the text is not; 0 when not known (a
  // template stored before kqd kept digests). Part of the workload's scheduling
  // equivalence (queue::SchedulingHash).
  uint64_t spec_shape = 0;
  friend bool operator==(const PodSet&, const PodSet&) = default;
};

struct PodSetAssignment {
  std::string name;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  ResourceList resource_usage;                 // for all `count` pods
  int32_t count = 0;
  friend bool operator==(const PodSetAssignment&,
                         const PodSetAssignment&) = default;
};

struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_set_assignments;
  friend bool operator==(const Admission&, const Admission&) = default;
};

// Kueue's PodSetUpdate: what an admission check's controller adds to the
// pods of one pod set when the workload starts (labels, annotations and
// node selector merged into the template, tolerations appended).
struct PodSetUpdate {
  std::string name;  // the pod set's
  Labels labels;
  Labels annotations;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  friend bool operator==(const PodSetUpdate&, const PodSetUpdate&) = default;
};

struct AdmissionCheckState {
  std::string name;
  std::string state = kCheckStatePending;
  absl::Time last_transition_time = absl::UnixEpoch();
  std::string message;
  // Set by the check's controller with its state; cleared when the check is
  // reset to Pending on eviction.
  std::vector<PodSetUpdate> pod_set_updates;
  friend bool operator==(const AdmissionCheckState&,
                         const AdmissionCheckState&) = default;
};

// Kueue's ReclaimablePod: `count` pods of pod set `name` no longer need
// their resources (they completed), as a job integration reports them.
struct ReclaimablePod {
  std::string name;
  int32_t count = 0;
  friend bool operator==(const ReclaimablePod&,
                         const ReclaimablePod&) = default;
};

// The client running an admitted workload (the runner handshake): one per
// workload, holding a lease it renews with Heartbeat.
struct Runner {
  std::string id;
  absl::Time lease_expire_time;
  friend bool operator==(const Runner&, const Runner&) = default;
};

// What a MultiKueue worker knows of a copy it holds of a manager's workload
// (kq federation; Kueue keeps this in the copy's origin label and in the
// manager's memory). Set on the worker only.
struct RemoteCopyStatus {
  // The manager's multiKueue.origin (also the copy's
  // kueue.x-k8s.io/multikueue-origin label).
  std::string origin;
  // The manager workload's uid: a workload deleted and created again under
  // its name on the manager is another workload.
  std::string origin_uid;
  // The manager's dispatch attempt this copy belongs to. A request of an
  // older epoch is stale and changes nothing.
  int64_t epoch = 0;
  // The manager chose this copy: its relay runner may hold it and the
  // workload runs. An unbound copy only competes for quota; no runner may
  // attach to it, so a copy that did not win can never start.
  bool bound = false;
  // Bound in the manager's lease mode (multiKueue fencing: Lease, a kq
  // extension): once the manager's relay lease lapses the worker stops the
  // copy itself, so a partition longer than the lease cannot leave it
  // running while the manager dispatches it elsewhere.
  bool fenced = false;
  friend bool operator==(const RemoteCopyStatus&,
                         const RemoteCopyStatus&) = default;
};

// The MultiKueue state of a manager's workload: Kueue's
// status.nominatedClusterNames and status.clusterName, and kq's own
// dispatch bookkeeping, stored with the workload so that a manager killed at
// any point resumes from what it decided (federation.md 5.4).
struct MultiKueueStatus {
  // The workers being tried now; cleared once cluster_name is set.
  std::vector<std::string> nominated_cluster_names;
  // The worker whose copy won; immutable once set, cleared by eviction.
  std::string cluster_name;
  // Raised each time a dispatch starts; the copies carry it, and a copy of
  // an older epoch is stale (never bound, deleted on sight).
  int64_t epoch = 0;
  // When the Incremental dispatcher's current round began (Kueue keeps it
  // in memory only).
  std::optional<absl::Time> round_start;
  // The winning worker's admission (its flavors), copied when the check
  // turns Ready: a runner on the manager runs with the worker's flavors.
  std::optional<Admission> worker_admission;
  friend bool operator==(const MultiKueueStatus&,
                         const MultiKueueStatus&) = default;
};

// Kueue's spec.priorityClassSource (an enum in Kueue's CRD): what
// priorityClassName names.
enum class PriorityClassSource : uint8_t {
  kNone,                   // ""
  kWorkloadPriorityClass,  // "kueue.x-k8s.io/workloadpriorityclass"
  kPodPriorityClass,       // "scheduling.k8s.io/priorityclass"
};
// The API's value ("" for kNone).
const char* PriorityClassSourceName(PriorityClassSource source);
// Parses an API value; false when it is none of the three.
bool ParsePriorityClassSource(absl::string_view text,
                              PriorityClassSource* source);

// Kueue's status.requeueState: how many times the workload was requeued,
// and the time before which it may not be (an admission check's retry).
struct RequeueState {
  std::optional<int32_t> count;
  std::optional<absl::Time> requeue_at;
  friend bool operator==(const RequeueState&, const RequeueState&) = default;
};

struct Workload {
  ObjectMeta meta;
  // Interned, as the namespace: a LocalQueue's workloads keep its name once.
  InternedString queue_name;
  // In 8 bytes each, as the conditions (CompactVector): a Workload of 224
  // bytes takes, in its WorkloadSet node, a 256-byte block.
  CompactVector<PodSet> pod_sets;
  BoxedString priority_class_name;
  int32_t priority = 0;
  bool active = true;
  PriorityClassSource priority_class_source = PriorityClassSource::kNone;
  std::optional<int32_t> maximum_execution_time_seconds;

  Boxed<Admission> admission;
  Conditions conditions;
  BoxedVector<AdmissionCheckState> admission_checks;
  // status.requeueState; null while it has neither field (most workloads).
  Boxed<RequeueState> requeue_state;
  // Attached while a runner holds a lease on the admitted workload.
  Boxed<Runner> runner;
  // Set while the workload is evicted but still holds its quota, waiting
  // for its runner to confirm it stopped: the quota is released then, when
  // the runner's lease lapses, or at this time, whichever comes first.
  Boxed<absl::Time> stop_deadline;
  // status.reclaimablePods: pod set name -> pods whose resources are no
  // longer needed. They leave the quota a pending workload asks for and
  // the quota an admitted one holds (PodSetsCountsAfterReclaim).
  BoxedMap<std::string, int32_t> reclaimable_pods;
  // On a MultiKueue worker: the manager's copy this workload is.
  Boxed<RemoteCopyStatus> remote;
  // On a MultiKueue manager: the dispatch state of a workload whose
  // ClusterQueue has a MultiKueue admission check.
  Boxed<MultiKueueStatus> multikueue;

  friend bool operator==(const Workload&, const Workload&) = default;
};

// Kueue's podSetsCountsAfterReclaim (ReclaimablePods gate, beta and on by
// default, which kq always follows): per pod set, its count minus its
// reclaimable pods, never below 0 (a stale reclaimable count may exceed a
// pod set's count; a negative one counts as 0).
std::map<std::string, int32_t> PodSetsCountsAfterReclaim(const Workload& wl);

// status.requeueState's fields. Setting both unset drops the state.
std::optional<int32_t> RequeueCount(const Workload& wl);
std::optional<absl::Time> RequeueAt(const Workload& wl);
void SetRequeueCount(Workload& wl, std::optional<int32_t> count);
void SetRequeueAt(Workload& wl, std::optional<absl::Time> at);

// The annotation whose int32 value Kueue adds to a workload's priority
// (the PriorityBoost gate; see preemption::PriorityBoost).
inline constexpr char kPriorityBoostAnnotation[] =
    "kueue.x-k8s.io/priority-boost";

// Kueue's workload.Ordering.GetQueueOrderTimestamp (requeuingStrategy
// timestamp Eviction, its default): the eviction time for a workload evicted
// by PodsReadyTimeout or an AdmissionCheck, its creation time otherwise.
absl::Time QueueOrderTimestamp(const Workload& workload);

// Lifecycle of a workload, from workload.Status in Kueue: finished beats
// admitted beats quota-reserved beats pending.
enum class WorkloadState { kPending, kQuotaReserved, kAdmitted, kFinished };
WorkloadState StateOf(const Workload& wl);
// Whether the workload holds a quota reservation (Kueue's
// HasQuotaReservation): an admission and QuotaReserved=True.
bool HoldsQuota(const Workload& wl);
// Whether the workload was evicted but still holds its quota (its runner
// has not confirmed the stop yet).
bool IsEvicting(const Workload& wl);
const char* StateName(WorkloadState state);  // "Pending", "Admitted", ...

// Key of a namespaced object: (namespace, name).
using NamespacedName = std::pair<std::string, std::string>;

// Any configuration object (everything but Workload).
using ConfigObject = std::variant<Namespace, ResourceFlavor, ClusterQueue,
                                  Cohort, LocalQueue, WorkloadPriorityClass,
                                  AdmissionCheck, ProvisioningRequestConfig,
                                  MultiKueueConfig, MultiKueueCluster>;

ObjectKind KindOf(const ConfigObject& object);
const ObjectMeta& MetaOf(const ConfigObject& object);
ObjectMeta& MutableMetaOf(ConfigObject& object);

// Identity of a configuration object.
struct ObjectKey {
  ObjectKind kind = ObjectKind::kNamespace;
  std::string namespace_name;  // empty for cluster-scoped kinds
  std::string name;
  friend auto operator<=>(const ObjectKey&, const ObjectKey&) = default;
};
ObjectKey KeyOf(const ConfigObject& object);
NamespacedName KeyOf(const Workload& workload);

// Orders workloads by their key, (namespace, name). Transparent, so that a
// NamespacedName finds one in a WorkloadSet.
struct WorkloadKeyLess {
  using is_transparent = void;
  bool operator()(const Workload& a, const Workload& b) const {
    return Less(a.meta.namespace_name, a.meta.name, b.meta.namespace_name,
                b.meta.name);
  }
  bool operator()(const Workload& a, const NamespacedName& b) const {
    return Less(a.meta.namespace_name, a.meta.name, b.first, b.second);
  }
  bool operator()(const NamespacedName& a, const Workload& b) const {
    return Less(a.first, a.second, b.meta.namespace_name, b.meta.name);
  }

 private:
  static bool Less(const std::string& a_namespace, const std::string& a_name,
                   const std::string& b_namespace, const std::string& b_name) {
    const int by_namespace = a_namespace.compare(b_namespace);
    return by_namespace != 0 ? by_namespace < 0 : a_name < b_name;
  }
};

// Workloads in key order, each its own key. kqd holds every pending
// workload, and a std::map keyed by NamespacedName kept both names twice:
// with its two names (64 bytes) its node took a size class more than this
// one's (32 + a Workload, 256 bytes: sizes_test.cc). An element's name must
// not change while it is held; the rest of it may (see AdmissionState's
// Mutable).
using WorkloadSet = std::set<Workload, WorkloadKeyLess>;

// How errors name objects: `ClusterQueue "cq"`, `LocalQueue "ns/lq"`,
// `Workload "ns/name"`.
std::string Describe(const ObjectKey& key);
std::string Describe(const NamespacedName& workload);

// Prefixes an error's message with the object it is about ("<who>: "),
// keeping its code.
absl::Status About(const std::string& who, const absl::Status& status);

}  // namespace kq
