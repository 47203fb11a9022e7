#include "server/core/objects.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace kq {

const char* KindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kNamespace:
      return "Namespace";
    case ObjectKind::kResourceFlavor:
      return "ResourceFlavor";
    case ObjectKind::kClusterQueue:
      return "ClusterQueue";
    case ObjectKind::kCohort:
      return "Cohort";
    case ObjectKind::kLocalQueue:
      return "LocalQueue";
    case ObjectKind::kWorkloadPriorityClass:
      return "WorkloadPriorityClass";
    case ObjectKind::kAdmissionCheck:
      return "AdmissionCheck";
    case ObjectKind::kProvisioningRequestConfig:
      return "ProvisioningRequestConfig";
    case ObjectKind::kMultiKueueConfig:
      return "MultiKueueConfig";
    case ObjectKind::kMultiKueueCluster:
      return "MultiKueueCluster";
    case ObjectKind::kWorkload:
      return "Workload";
  }
  return "Unknown";
}

bool ParseKind(const std::string& text, ObjectKind* kind) {
  struct Alias {
    const char* name;
    ObjectKind kind;
  };
  // Kueue's short names (KUEUE.md 1.0) plus kubectl's singular/plural forms.
  static constexpr Alias kAliases[] = {
      {"namespace", ObjectKind::kNamespace},
      {"namespaces", ObjectKind::kNamespace},
      {"ns", ObjectKind::kNamespace},
      {"resourceflavor", ObjectKind::kResourceFlavor},
      {"resourceflavors", ObjectKind::kResourceFlavor},
      {"rf", ObjectKind::kResourceFlavor},
      {"flavor", ObjectKind::kResourceFlavor},
      {"flavors", ObjectKind::kResourceFlavor},
      {"clusterqueue", ObjectKind::kClusterQueue},
      {"clusterqueues", ObjectKind::kClusterQueue},
      {"cq", ObjectKind::kClusterQueue},
      {"cohort", ObjectKind::kCohort},
      {"cohorts", ObjectKind::kCohort},
      {"co", ObjectKind::kCohort},
      {"localqueue", ObjectKind::kLocalQueue},
      {"localqueues", ObjectKind::kLocalQueue},
      {"lq", ObjectKind::kLocalQueue},
      {"queue", ObjectKind::kLocalQueue},
      {"queues", ObjectKind::kLocalQueue},
      {"workloadpriorityclass", ObjectKind::kWorkloadPriorityClass},
      {"workloadpriorityclasses", ObjectKind::kWorkloadPriorityClass},
      {"wpc", ObjectKind::kWorkloadPriorityClass},
      {"admissioncheck", ObjectKind::kAdmissionCheck},
      {"admissionchecks", ObjectKind::kAdmissionCheck},
      {"ac", ObjectKind::kAdmissionCheck},
      {"provisioningrequestconfig", ObjectKind::kProvisioningRequestConfig},
      {"provisioningrequestconfigs", ObjectKind::kProvisioningRequestConfig},
      {"prc", ObjectKind::kProvisioningRequestConfig},
      {"multikueueconfig", ObjectKind::kMultiKueueConfig},
      {"multikueueconfigs", ObjectKind::kMultiKueueConfig},
      {"mkconf", ObjectKind::kMultiKueueConfig},
      {"multikueuecluster", ObjectKind::kMultiKueueCluster},
      {"multikueueclusters", ObjectKind::kMultiKueueCluster},
      {"mkc", ObjectKind::kMultiKueueCluster},
      {"workload", ObjectKind::kWorkload},
      {"workloads", ObjectKind::kWorkload},
      {"wl", ObjectKind::kWorkload},
      {"kwl", ObjectKind::kWorkload},
      {"kueueworkload", ObjectKind::kWorkload},
      {"kueueworkloads", ObjectKind::kWorkload},
  };
  std::string lower = absl::AsciiStrToLower(text);
  for (const Alias& alias : kAliases) {
    if (lower == alias.name) {
      *kind = alias.kind;
      return true;
    }
  }
  return false;
}

bool IsNamespaced(ObjectKind kind) {
  return kind == ObjectKind::kLocalQueue || kind == ObjectKind::kWorkload;
}

const Condition* FindConditionTurnedTrue(const Conditions& conditions,
                                         const std::string& type,
                                         absl::Time at) {
  const Condition* c = FindCondition(conditions, type);
  if (c == nullptr || c->status != kConditionTrue ||
      c->last_transition_time != at) {
    return nullptr;
  }
  return c;
}

const Condition* FindCondition(const Conditions& conditions,
                               const std::string& type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool IsConditionTrue(const Conditions& conditions, const std::string& type) {
  const Condition* c = FindCondition(conditions, type);
  return c != nullptr && c->status == "True";
}

void SetCondition(Conditions* conditions, Condition condition) {
  for (Condition& c : *conditions) {
    if (c.type == condition.type) {
      if (c.status == condition.status) {
        condition.last_transition_time = c.last_transition_time;
      }
      c = std::move(condition);
      return;
    }
  }
  conditions->push_back(std::move(condition));
}

bool SelectorMatches(const LabelSelector& selector, const Labels& labels) {
  for (const auto& [key, value] : selector.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const LabelSelectorRequirement& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    bool has = it != labels.end();
    bool in_values = has && std::find(req.values.begin(), req.values.end(),
                                      it->second) != req.values.end();
    if (req.op == "In") {
      if (!in_values) return false;
    } else if (req.op == "NotIn") {
      if (in_values) return false;
    } else if (req.op == "Exists") {
      if (!has) return false;
    } else if (req.op == "DoesNotExist") {
      if (has) return false;
    } else {
      return false;  // validation refuses unknown operators
    }
  }
  return true;
}

ObjectKind KindOf(const ConfigObject& object) {
  static constexpr ObjectKind kKinds[] = {
      ObjectKind::kNamespace,        ObjectKind::kResourceFlavor,
      ObjectKind::kClusterQueue,     ObjectKind::kCohort,
      ObjectKind::kLocalQueue,       ObjectKind::kWorkloadPriorityClass,
      ObjectKind::kAdmissionCheck,   ObjectKind::kProvisioningRequestConfig,
      ObjectKind::kMultiKueueConfig, ObjectKind::kMultiKueueCluster};
  static_assert(std::size(kKinds) == std::variant_size_v<ConfigObject>);
  return kKinds[object.index()];
}

const ObjectMeta& MetaOf(const ConfigObject& object) {
  return std::visit([](const auto& o) -> const ObjectMeta& { return o.meta; },
                    object);
}

ObjectMeta& MutableMetaOf(ConfigObject& object) {
  return std::visit([](auto& o) -> ObjectMeta& { return o.meta; }, object);
}

ObjectKey KeyOf(const ConfigObject& object) {
  const ObjectMeta& meta = MetaOf(object);
  return ObjectKey{KindOf(object), meta.namespace_name, meta.name};
}

NamespacedName KeyOf(const Workload& workload) {
  return {workload.meta.namespace_name, workload.meta.name};
}

std::string Describe(const ObjectKey& key) {
  if (key.namespace_name.empty()) {
    return absl::StrCat(KindName(key.kind), " \"", key.name, "\"");
  }
  return absl::StrCat(KindName(key.kind), " \"", key.namespace_name, "/",
                      key.name, "\"");
}

std::string Describe(const NamespacedName& workload) {
  return absl::StrCat("Workload \"", workload.first, "/", workload.second,
                      "\"");
}

absl::Status About(const std::string& who, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(who, ": ", status.message()));
}

absl::Time QueueOrderTimestamp(const Workload& workload) {
  const Condition* evicted =
      FindCondition(workload.conditions, kConditionEvicted);
  if (evicted != nullptr && evicted->status == "True" &&
      (evicted->reason == "PodsReadyTimeout" ||
       evicted->reason == "AdmissionCheck")) {
    return evicted->last_transition_time;
  }
  return workload.meta.creation_timestamp;
}

WorkloadState StateOf(const Workload& wl) {
  if (IsConditionTrue(wl.conditions, kConditionFinished)) {
    return WorkloadState::kFinished;
  }
  if (IsConditionTrue(wl.conditions, kConditionAdmitted)) {
    return WorkloadState::kAdmitted;
  }
  if (IsConditionTrue(wl.conditions, kConditionQuotaReserved)) {
    return WorkloadState::kQuotaReserved;
  }
  return WorkloadState::kPending;
}

std::optional<int32_t> RequeueCount(const Workload& wl) {
  return wl.requeue_state ? wl.requeue_state->count : std::nullopt;
}

std::optional<absl::Time> RequeueAt(const Workload& wl) {
  return wl.requeue_state ? wl.requeue_state->requeue_at : std::nullopt;
}

namespace {

// Drops a requeue state left with neither field.
void TidyRequeueState(Workload& wl) {
  if (wl.requeue_state && !wl.requeue_state->count.has_value() &&
      !wl.requeue_state->requeue_at.has_value()) {
    wl.requeue_state.reset();
  }
}

}  // namespace

void SetRequeueCount(Workload& wl, std::optional<int32_t> count) {
  if (!wl.requeue_state) wl.requeue_state.emplace();
  wl.requeue_state->count = count;
  TidyRequeueState(wl);
}

void SetRequeueAt(Workload& wl, std::optional<absl::Time> at) {
  if (!wl.requeue_state) wl.requeue_state.emplace();
  wl.requeue_state->requeue_at = at;
  TidyRequeueState(wl);
}

std::map<std::string, int32_t> PodSetsCountsAfterReclaim(const Workload& wl) {
  std::map<std::string, int32_t> counts;
  for (const PodSet& ps : wl.pod_sets) {
    auto reclaimable = wl.reclaimable_pods.find(ps.name);
    int32_t reclaimed =
        reclaimable == wl.reclaimable_pods.end()
            ? 0
            : std::max(0, std::min(reclaimable->second, ps.count));
    counts[ps.name] = ps.count - reclaimed;
  }
  return counts;
}

bool HoldsQuota(const Workload& wl) {
  return wl.admission.has_value() &&
         IsConditionTrue(wl.conditions, kConditionQuotaReserved);
}

bool IsEvicting(const Workload& wl) {
  return HoldsQuota(wl) && IsConditionTrue(wl.conditions, kConditionEvicted);
}

const char* StateName(WorkloadState state) {
  switch (state) {
    case WorkloadState::kPending:
      return "Pending";
    case WorkloadState::kQuotaReserved:
      return "QuotaReserved";
    case WorkloadState::kAdmitted:
      return "Admitted";
    case WorkloadState::kFinished:
      return "Finished";
  }
  return "Unknown";
}

const char* PriorityClassSourceName(PriorityClassSource source) {
  switch (source) {
    case PriorityClassSource::kNone:
      return "";
    case PriorityClassSource::kWorkloadPriorityClass:
      return "kueue.x-k8s.io/workloadpriorityclass";
    case PriorityClassSource::kPodPriorityClass:
      return "scheduling.k8s.io/priorityclass";
  }
  return "";
}

bool ParsePriorityClassSource(absl::string_view text,
                              PriorityClassSource* source) {
  for (PriorityClassSource s :
       {PriorityClassSource::kNone, PriorityClassSource::kWorkloadPriorityClass,
        PriorityClassSource::kPodPriorityClass}) {
    if (text == PriorityClassSourceName(s)) {
      *source = s;
      return true;
    }
  }
  return false;
}

}  // namespace kq
