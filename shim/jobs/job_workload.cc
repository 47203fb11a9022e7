#include "shim/jobs/job_workload.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "manifest/manifest.h"
#include "shim/common/object_helpers.h"

namespace kq::shim::jobs {
namespace {

// Kueue's workload_names.go, with the ShortWorkloadNames gate off.
constexpr size_t kHashLength = 5;
constexpr size_t kMaxWorkloadNameLength = 253;
constexpr size_t kMaxPrefixLength = kMaxWorkloadNameLength - 1 - kHashLength;

// Labels the batch Job controller manages (Kueue's managedLabels).
constexpr const char* kManagedLabels[] = {"job-name", "controller-uid",
                                          "batch.kubernetes.io/job-name",
                                          "batch.kubernetes.io/controller-uid"};
constexpr char kJobNameLabel[] = "batch.kubernetes.io/job-name";

using StringMap = std::map<std::string, std::string>;

// `object[key]` when `object` is an object holding `key`, else nullptr.

const json* Path(const json& object, std::initializer_list<const char*> keys) {
  const json* at = &object;
  for (const char* key : keys) {
    at = Field(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

std::string StringAt(const json& object,
                     std::initializer_list<const char*> keys) {
  const json* at = Path(object, keys);
  return at != nullptr && at->is_string() ? at->get<std::string>() : "";
}

std::optional<int64_t> IntAt(const json& object,
                             std::initializer_list<const char*> keys) {
  const json* at = Path(object, keys);
  if (at == nullptr || !at->is_number()) return std::nullopt;
  return at->get<int64_t>();
}

StringMap ToStringMap(const json* object) {
  StringMap out;
  if (object == nullptr || !object->is_object()) return out;
  for (auto it = object->begin(); it != object->end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

json ToJsonObject(const StringMap& map) {
  json out = json::object();
  for (const auto& [k, v] : map) out[k] = v;
  return out;
}

// Sets `object[key]`, or removes it when `value` is empty: Kubernetes omits
// empty maps and lists (omitempty), so both read back the same.
void SetOrErase(json& object, const char* key, const json& value) {
  if (value.empty()) {
    object.erase(key);
  } else {
    object[key] = value;
  }
}

json& EnsureObject(json& parent, const char* key) {
  json& child = parent[key];
  if (!child.is_object()) child = json::object();
  return child;
}

// A toleration with only its non-empty fields, for exact comparisons
// (Go's struct equality: an absent field equals its zero value).
json NormalizeToleration(const json& t) {
  json out = json::object();
  for (const char* key : {"key", "operator", "value", "effect"}) {
    std::string v = StringAt(t, {key});
    if (!v.empty()) out[key] = v;
  }
  if (const json* seconds = Field(t, "tolerationSeconds");
      seconds != nullptr && !seconds->is_null()) {
    out["tolerationSeconds"] = *seconds;
  }
  return out;
}

json NormalizeTolerations(const json& list) {
  json out = json::array();
  if (!list.is_array()) return out;
  for (const json& t : list) out.push_back(NormalizeToleration(t));
  return out;
}

// Kueue's tolerations.Equal (core/v1 MatchToleration with an empty operator
// read as "Equal"): key, operator, value and effect; not tolerationSeconds.
bool TolerationsMatch(const json& a, const json& b) {
  auto op = [](const json& t) {
    std::string o = StringAt(t, {"operator"});
    return o.empty() ? std::string("Equal") : o;
  };
  return StringAt(a, {"key"}) == StringAt(b, {"key"}) &&
         StringAt(a, {"effect"}) == StringAt(b, {"effect"}) && op(a) == op(b) &&
         StringAt(a, {"value"}) == StringAt(b, {"value"});
}

// Kueue's utilmaps.HaveConflict(a, b), keys in order so the message is
// stable.
std::optional<std::string> Conflict(const StringMap& a, const StringMap& b) {
  for (const auto& [k, av] : a) {
    auto it = b.find(k);
    if (it != b.end() && it->second != av) {
      return absl::StrCat("conflict for key=", k, ", value1=", av,
                          ", value2=", it->second);
    }
  }
  return std::nullopt;
}

absl::Status BadPodSetsUpdate(absl::string_view field,
                              absl::string_view conflict) {
  return absl::FailedPreconditionError(
      absl::StrCat("invalid admission check PodSetUpdate: conflict for ", field,
                   ": ", conflict));
}

// Kueue's content.IsLabelValue.
bool IsLabelValue(absl::string_view v) {
  if (v.size() > 63) return false;
  if (v.empty()) return true;
  auto alnum = [](char c) { return absl::ascii_isalnum(c); };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [&](char c) {
    return alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// Kubernetes' IsDNS1123Label.
bool IsDns1123Label(absl::string_view v) {
  if (v.empty() || v.size() > 63) return false;
  auto lower_alnum = [](char c) {
    return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z');
  };
  if (!lower_alnum(v.front()) || !lower_alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [&](char c) { return lower_alnum(c) || c == '-'; });
}

// Kueue's minPodsCount: the job-min-parallelism annotation, when it parses.
std::optional<int32_t> MinPodsCount(const json& job) {
  std::string text =
      StringAt(job, {"metadata", "annotations", kJobMinParallelismAnnotation});
  int32_t value = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &value)) return std::nullopt;
  return value;
}

// Go's strconv.ParseBool.
std::optional<bool> ParseGoBool(absl::string_view text) {
  for (absl::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == t) return true;
  }
  for (absl::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == f) return false;
  }
  return std::nullopt;
}

// Kueue's syncCompletionWithParallelism.
bool SyncCompletionWithParallelism(const json& job) {
  std::optional<bool> value =
      ParseGoBool(StringAt(job, {"metadata", "annotations",
                                 kJobCompletionsEqualParallelismAnnotation}));
  return value.value_or(false);
}

void SetParallelism(json& job, int32_t count) {
  json& spec = EnsureObject(job, "spec");
  spec["parallelism"] = count;
  if (SyncCompletionWithParallelism(job)) spec["completions"] = count;
}

json PodSetInfoToJson(const PodSetInfo& info) {
  json out = json::object();
  out["count"] = info.count;
  SetOrErase(out, "annotations", ToJsonObject(info.annotations));
  SetOrErase(out, "labels", ToJsonObject(info.labels));
  SetOrErase(out, "nodeSelector", ToJsonObject(info.node_selector));
  SetOrErase(out, "tolerations", info.tolerations);
  SetOrErase(out, "schedulingGates", info.scheduling_gates);
  return out;
}

absl::StatusOr<PodSetInfo> PodSetInfoFromJson(const json& in) {
  if (!in.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kOriginalPodSchedulingAnnotation, ": not an object"));
  }
  PodSetInfo info;
  info.name = kDefaultPodSetName;
  info.count = static_cast<int32_t>(IntAt(in, {"count"}).value_or(0));
  info.annotations = ToStringMap(Field(in, "annotations"));
  info.labels = ToStringMap(Field(in, "labels"));
  info.node_selector = ToStringMap(Field(in, "nodeSelector"));
  if (const json* t = Field(in, "tolerations"); t && t->is_array()) {
    info.tolerations = *t;
  }
  if (const json* g = Field(in, "schedulingGates"); g && g->is_array()) {
    info.scheduling_gates = *g;
  }
  return info;
}

// The pod scheduling StartJob saved on the Job, if any.
absl::StatusOr<std::optional<PodSetInfo>> SavedOriginal(const json& job) {
  const json* saved =
      Path(job, {"metadata", "annotations", kOriginalPodSchedulingAnnotation});
  if (saved == nullptr || !saved->is_string()) return std::nullopt;
  json parsed = json::parse(saved->get<std::string>(), nullptr, false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kOriginalPodSchedulingAnnotation, ": not valid JSON"));
  }
  absl::StatusOr<PodSetInfo> info = PodSetInfoFromJson(parsed);
  if (!info.ok()) return info.status();
  return std::optional<PodSetInfo>(*std::move(info));
}

json& PodTemplateOf(json& job) {
  return EnsureObject(EnsureObject(job, "spec"), "template");
}

// Removes an annotation, and the annotations map once empty (Kubernetes
// omits empty maps).
void EraseAnnotation(json& job, const char* key) {
  if (!job.is_object()) return;
  auto meta = job.find("metadata");
  if (meta == job.end() || !meta->is_object()) return;
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return;
  annotations->erase(key);
  if (annotations->empty()) meta->erase("annotations");
}

// Sets pod_template[section][key] (section "metadata" or "spec"), or
// removes the key when `value` is empty, creating the section only to set.
void SetTemplateField(json& pod_template, const char* section, const char* key,
                      const json& value) {
  if (value.empty()) {
    auto it = pod_template.find(section);
    if (it == pod_template.end() || !it->is_object()) return;
    // A section emptied here goes too, as Kubernetes would omit it.
    if (it->erase(key) > 0 && it->empty()) pod_template.erase(it);
    return;
  }
  EnsureObject(pod_template, section)[key] = value;
}

void SetAnnotation(json& job, const char* key, const std::string& value) {
  EnsureObject(EnsureObject(job, "metadata"), "annotations")[key] = value;
}

const v1::PodSet* FindPodSet(const v1::Workload& wl, const std::string& name) {
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    if (ps.name() == name) return &ps;
  }
  return nullptr;
}

}  // namespace

std::string WorkloadNameForJob(absl::string_view job_name,
                               absl::string_view job_uid) {
  std::string prefix = absl::StrCat("job-", job_name);
  if (prefix.size() > kMaxPrefixLength) prefix.resize(kMaxPrefixLength);
  std::string hash =
      Sha1Hex(absl::StrCat("Job\nbatch\n", job_name, "\n", job_uid));
  return absl::StrCat(prefix, "-", hash.substr(0, kHashLength));
}

std::string JobKey::String() const {
  return absl::StrCat(namespace_name, "/", name);
}

JobKey KeyOfJob(const json& job) {
  return {StringAt(job, {"metadata", "namespace"}),
          StringAt(job, {"metadata", "name"})};
}

std::string UidOfJob(const json& job) {
  return StringAt(job, {"metadata", "uid"});
}

std::optional<JobOwner> OwnerOfWorkload(const v1::Workload& wl) {
  const auto& annotations = wl.metadata().annotations();
  auto name = annotations.find(kJobNameAnnotation);
  auto uid = annotations.find(kJobUidAnnotation);
  if (name == annotations.end() || uid == annotations.end()) {
    return std::nullopt;
  }
  return JobOwner{{wl.metadata().namespace_(), name->second}, uid->second};
}

bool SuspendRequested(const json& job) {
  const json* suspend = Path(job, {"spec", "suspend"});
  return suspend != nullptr && suspend->is_boolean() && suspend->get<bool>();
}

bool IsStopping(const json& job) {
  return StringAt(job, {"metadata", "annotations", kStoppingAnnotation}) ==
         "true";
}

bool IsSuspended(const json& job) {
  return SuspendRequested(job) && !IsStopping(job);
}

bool HasOriginalPodScheduling(const json& job) {
  return Path(job, {"metadata", "annotations",
                    kOriginalPodSchedulingAnnotation}) != nullptr;
}

int64_t ActivePods(const json& job) {
  return IntAt(job, {"status", "active"}).value_or(0);
}

bool IsActive(const json& job) { return ActivePods(job) != 0; }

JobFinish Finished(const json& job) {
  const json* conditions = Path(job, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return {};
  for (const json& c : *conditions) {
    std::string type = StringAt(c, {"type"});
    if ((type == "Complete" || type == "Failed") &&
        StringAt(c, {"status"}) == "True") {
      return {true, type != "Failed", StringAt(c, {"message"})};
    }
  }
  return {};
}

int32_t PodsCount(const json& job) {
  int64_t count = IntAt(job, {"spec", "parallelism"}).value_or(1);
  std::optional<int64_t> completions = IntAt(job, {"spec", "completions"});
  if (completions.has_value() && *completions < count) count = *completions;
  return static_cast<int32_t>(count);
}

int32_t TerminalIndexesCount(absl::string_view completed_indexes,
                             absl::string_view failed_indexes,
                             int32_t completions) {
  if (completions <= 0) return 0;
  const int64_t limit = completions;
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (absl::string_view indexes : {completed_indexes, failed_indexes}) {
    if (indexes.empty()) continue;
    for (absl::string_view interval : absl::StrSplit(indexes, ',')) {
      // Kueue's parseIndexRange: "3" or "3-5"; malformed or descending
      // intervals are skipped.
      std::pair<absl::string_view, absl::string_view> parts =
          absl::StrSplit(interval, absl::MaxSplits('-', 1));
      int64_t first = 0;
      if (!absl::SimpleAtoi(parts.first, &first)) continue;
      int64_t last = first;
      if (interval.find('-') != absl::string_view::npos &&
          !absl::SimpleAtoi(parts.second, &last)) {
        continue;
      }
      if (last < first) continue;
      last = std::min(last, limit - 1);
      if (first <= last) intervals.emplace_back(first, last);
    }
  }
  // Completed and failed sets may overlap: count their union.
  std::sort(intervals.begin(), intervals.end());
  int64_t count = 0;
  int64_t last_counted = -1;
  for (const auto& [first, last] : intervals) {
    int64_t first_uncounted = std::max(first, last_counted + 1);
    if (first_uncounted > last) continue;
    count += last - first_uncounted + 1;
    last_counted = last;
  }
  return static_cast<int32_t>(count);
}

std::vector<v1::ReclaimablePod> ReclaimablePods(const json& job) {
  const int64_t parallelism = IntAt(job, {"spec", "parallelism"}).value_or(1);
  const int64_t completions =
      IntAt(job, {"spec", "completions"}).value_or(parallelism);
  int64_t terminal = IntAt(job, {"status", "succeeded"}).value_or(0);
  if (StringAt(job, {"spec", "completionMode"}) == "Indexed") {
    terminal =
        TerminalIndexesCount(StringAt(job, {"status", "completedIndexes"}),
                             StringAt(job, {"status", "failedIndexes"}),
                             static_cast<int32_t>(completions));
  }
  // A single-pod Job or one with no terminal pods has nothing to reclaim;
  // nor does one whose remaining work still fills every parallel slot.
  int64_t reclaimable = 0;
  if (parallelism > 1 && terminal > 0) {
    int64_t remaining = std::max<int64_t>(completions - terminal, 0);
    if (remaining < parallelism) reclaimable = parallelism - remaining;
  }
  if (reclaimable == 0) return {};
  v1::ReclaimablePod pod;
  pod.set_name(kDefaultPodSetName);
  pod.set_count(static_cast<int32_t>(reclaimable));
  return {pod};
}

void CleanLabels(json& pod_template) {
  if (!pod_template.is_object()) return;
  auto meta = pod_template.find("metadata");
  if (meta == pod_template.end() || !meta->is_object()) return;
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return;
  for (const char* label : kManagedLabels) {
    if (std::string(label) == kJobNameLabel) continue;
    labels->erase(label);
  }
}

// ---- PodSetInfo ------------------------------------------------------------

absl::Status PodSetInfo::Merge(const PodSetInfo& other) {
  if (auto c = Conflict(annotations, other.annotations)) {
    return BadPodSetsUpdate("annotations", *c);
  }
  if (auto c = Conflict(labels, other.labels)) {
    return BadPodSetsUpdate("labels", *c);
  }
  if (auto c = Conflict(node_selector, other.node_selector)) {
    return BadPodSetsUpdate("nodeSelector", *c);
  }
  for (const auto& [k, v] : other.annotations) annotations[k] = v;
  for (const auto& [k, v] : other.labels) labels[k] = v;
  for (const auto& [k, v] : other.node_selector) node_selector[k] = v;
  if (!tolerations.is_array()) tolerations = json::array();
  if (other.tolerations.is_array()) {
    for (const json& t : other.tolerations) {
      bool present =
          std::any_of(tolerations.begin(), tolerations.end(),
                      [&](const json& e) { return TolerationsMatch(e, t); });
      if (!present) tolerations.push_back(t);
    }
  }
  if (!scheduling_gates.is_array()) scheduling_gates = json::array();
  if (other.scheduling_gates.is_array()) {
    for (const json& g : other.scheduling_gates) {
      bool present = std::any_of(
          scheduling_gates.begin(), scheduling_gates.end(), [&](const json& e) {
            return StringAt(e, {"name"}) == StringAt(g, {"name"});
          });
      if (!present) scheduling_gates.push_back(g);
    }
  }
  return absl::OkStatus();
}

void PodSetInfo::AddOrUpdateLabel(const std::string& key,
                                  const std::string& value) {
  labels[key] = value;
}

PodSetInfo FromUpdate(const v1::PodSetUpdate& update) {
  PodSetInfo info;
  info.annotations = {update.annotations().begin(), update.annotations().end()};
  info.labels = {update.labels().begin(), update.labels().end()};
  info.node_selector = {update.node_selector().begin(),
                        update.node_selector().end()};
  for (const v1::Toleration& t : update.tolerations()) {
    info.tolerations.push_back(TolerationToJson(t));
  }
  return info;
}

PodSetInfo FromPodTemplate(const json& pod_template, absl::string_view name,
                           int32_t count) {
  PodSetInfo info;
  info.name = std::string(name);
  info.count = count;
  info.annotations =
      ToStringMap(Path(pod_template, {"metadata", "annotations"}));
  info.labels = ToStringMap(Path(pod_template, {"metadata", "labels"}));
  info.node_selector =
      ToStringMap(Path(pod_template, {"spec", "nodeSelector"}));
  if (const json* t = Path(pod_template, {"spec", "tolerations"});
      t != nullptr && t->is_array()) {
    info.tolerations = *t;
  }
  if (const json* g = Path(pod_template, {"spec", "schedulingGates"});
      g != nullptr && g->is_array()) {
    info.scheduling_gates = *g;
  }
  return info;
}

absl::Status MergeIntoTemplate(json& pod_template, const PodSetInfo& info) {
  PodSetInfo merged = FromPodTemplate(pod_template, info.name, info.count);
  absl::Status status = merged.Merge(info);
  if (!status.ok()) return status;
  if (!pod_template.is_object()) pod_template = json::object();
  SetTemplateField(pod_template, "metadata", "annotations",
                   ToJsonObject(merged.annotations));
  SetTemplateField(pod_template, "metadata", "labels",
                   ToJsonObject(merged.labels));
  SetTemplateField(pod_template, "spec", "nodeSelector",
                   ToJsonObject(merged.node_selector));
  SetTemplateField(pod_template, "spec", "tolerations", merged.tolerations);
  SetTemplateField(pod_template, "spec", "schedulingGates",
                   merged.scheduling_gates);
  return absl::OkStatus();
}

bool RestorePodSpec(json& pod_template, const PodSetInfo& info) {
  if (!pod_template.is_object()) pod_template = json::object();
  const PodSetInfo current =
      FromPodTemplate(pod_template, info.name, info.count);
  bool changed = false;
  if (current.annotations != info.annotations) {
    SetTemplateField(pod_template, "metadata", "annotations",
                     ToJsonObject(info.annotations));
    changed = true;
  }
  if (current.labels != info.labels) {
    SetTemplateField(pod_template, "metadata", "labels",
                     ToJsonObject(info.labels));
    changed = true;
  }
  if (current.node_selector != info.node_selector) {
    SetTemplateField(pod_template, "spec", "nodeSelector",
                     ToJsonObject(info.node_selector));
    changed = true;
  }
  if (NormalizeTolerations(current.tolerations) !=
      NormalizeTolerations(info.tolerations)) {
    SetTemplateField(pod_template, "spec", "tolerations", info.tolerations);
    changed = true;
  }
  if (current.scheduling_gates != info.scheduling_gates) {
    SetTemplateField(pod_template, "spec", "schedulingGates",
                     info.scheduling_gates);
    changed = true;
  }
  return changed;
}

absl::StatusOr<PodSetInfo> FromAssignment(
    const v1::PodSetAssignment& assignment, int32_t default_count,
    const v1::PodSetPlacement* placement) {
  PodSetInfo info;
  info.name = assignment.name();
  info.count = assignment.count() > 0 ? assignment.count() : default_count;
  std::set<std::string> assigned;
  for (const auto& [resource, flavor] : assignment.flavors()) {
    assigned.insert(flavor);
  }
  std::set<std::string> processed;
  if (placement != nullptr) {
    for (const v1::FlavorPlacement& flavor : placement->flavors()) {
      if (assigned.count(flavor.flavor()) == 0 ||
          !processed.insert(flavor.flavor()).second) {
        continue;
      }
      for (const auto& [k, v] : flavor.node_labels()) {
        info.node_selector[k] = v;
      }
      for (const v1::Toleration& t : flavor.tolerations()) {
        info.tolerations.push_back(TolerationToJson(t));
      }
    }
  }
  for (const std::string& flavor : assigned) {
    if (processed.count(flavor) == 0) {
      return absl::NotFoundError(absl::StrCat(
          "resourceflavors.kueue.x-k8s.io \"", flavor, "\" not found"));
    }
  }
  return info;
}

std::string AdmittedMessage(const v1::Workload& wl) {
  return absl::StrCat("Admitted by clusterQueue ",
                      wl.status().admission().cluster_queue());
}

std::string AdmissionCheckMessage(const v1::Workload& wl) {
  std::string message;
  for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
    if (check.state() != "Pending" || check.message().empty()) continue;
    if (!message.empty()) message += "; ";
    absl::StrAppend(&message, check.name(), ": ", check.message());
  }
  return message;
}

absl::StatusOr<std::vector<PodSetInfo>> PodSetsInfoFromStatus(
    const v1::Workload& wl,
    const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>& placements) {
  std::vector<PodSetInfo> infos;
  if (!wl.status().has_admission()) return infos;
  const v1::Admission& admission = wl.status().admission();
  for (const v1::PodSetAssignment& assignment :
       admission.pod_set_assignments()) {
    // 1. The flavors.
    const v1::PodSet* pod_set = FindPodSet(wl, assignment.name());
    const v1::PodSetPlacement* placement = nullptr;
    for (const v1::PodSetPlacement& p : placements) {
      if (p.pod_set() == assignment.name()) placement = &p;
    }
    absl::StatusOr<PodSetInfo> from_assignment = FromAssignment(
        assignment, pod_set != nullptr ? pod_set->count() : 0, placement);
    if (!from_assignment.ok()) return from_assignment.status();
    PodSetInfo info = *std::move(from_assignment);
    // 2. What Kueue adds with its default feature gates.
    info.annotations[kWorkloadAnnotation] = wl.metadata().name();
    info.labels[kPodSetLabel] = assignment.name();
    info.labels[kLocalQueueLabel] = wl.spec().queue_name();
    if (IsDns1123Label(admission.cluster_queue())) {
      info.labels[kClusterQueueLabel] = admission.cluster_queue();
    }
    // 3. The admission checks' podSetUpdates, in check order; the first
    //    update naming the pod set counts.
    for (const v1::AdmissionCheckState& check :
         wl.status().admission_checks()) {
      for (const v1::PodSetUpdate& update : check.pod_set_updates()) {
        if (update.name() != info.name) continue;
        absl::Status merged = info.Merge(FromUpdate(update));
        if (!merged.ok()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "in admission check \"", check.name(), "\": ", merged.message()));
        }
        break;
      }
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

absl::Status RunWithPodSetsInfo(json& job,
                                const std::vector<PodSetInfo>& infos) {
  EnsureObject(job, "spec")["suspend"] = false;
  if (infos.size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "invalid podset infos: expecting 1 podset, got ", infos.size()));
  }
  const PodSetInfo& info = infos[0];
  if (MinPodsCount(job).has_value()) SetParallelism(job, info.count);
  return MergeIntoTemplate(PodTemplateOf(job), info);
}

bool RestorePodSetsInfo(json& job, const std::vector<PodSetInfo>& infos) {
  if (infos.empty()) return false;
  bool changed = false;
  // A partially admitted Job gets its parallelism back.
  if (MinPodsCount(job).has_value() &&
      IntAt(job, {"spec", "parallelism"}).value_or(0) != infos[0].count) {
    changed = true;
    SetParallelism(job, infos[0].count);
  }
  PodSetInfo info = infos[0];
  json& pod_template = PodTemplateOf(job);
  StringMap current_labels =
      ToStringMap(Path(pod_template, {"metadata", "labels"}));
  for (const char* label : kManagedLabels) {
    auto it = current_labels.find(label);
    if (it != current_labels.end()) info.AddOrUpdateLabel(label, it->second);
  }
  return RestorePodSpec(pod_template, info) || changed;
}

// ---- What the shim writes --------------------------------------------------

absl::StatusOr<v1::Workload> WorkloadForJob(const json& job) {
  const JobKey key = KeyOfJob(job);
  const std::string uid = UidOfJob(job);
  if (uid.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Job ", key.String(), " has no metadata.uid"));
  }
  // The Workload describes the Job as its owner wrote it: an admission
  // injected by StartJob is taken out first.
  json original = job;
  absl::StatusOr<std::optional<PodSetInfo>> saved = SavedOriginal(job);
  if (!saved.ok()) return saved.status();
  if (saved->has_value()) RestorePodSetsInfo(original, {**saved});
  if (json* spec = original.is_object() && original.contains("spec")
                       ? &original["spec"]
                       : nullptr;
      spec != nullptr && spec->is_object() && spec->contains("template")) {
    CleanLabels((*spec)["template"]);
  }

  absl::StatusOr<std::vector<manifest::Document>> docs =
      manifest::ParseManifests(original.dump());
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Job ", key.String(), ": expected one document"));
  }
  manifest::Document& doc = docs->front();
  if (!doc.status.ok()) return doc.status;
  if (!doc.workload.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Job ", key.String(), ": not a batch/v1 Job"));
  }
  v1::Workload wl = *std::move(doc.workload);

  // Kueue's NewWorkload + ConstructWorkload metadata.
  v1::ObjectMeta* meta = wl.mutable_metadata();
  meta->set_name(WorkloadNameForJob(key.name, uid));
  meta->clear_generate_name();
  meta->clear_uid();
  meta->clear_revision();
  meta->clear_labels();
  meta->clear_annotations();
  if (IsLabelValue(uid)) (*meta->mutable_labels())[kJobUidLabel] = uid;
  for (const auto& [k, v] :
       ToStringMap(Path(job, {"metadata", "annotations"}))) {
    if (absl::StartsWith(k, kProvReqAnnotationPrefix)) {
      (*meta->mutable_annotations())[k] = v;
    }
  }
  (*meta->mutable_annotations())[kJobNameAnnotation] = key.name;
  (*meta->mutable_annotations())[kJobUidAnnotation] = uid;
  return wl;
}

absl::StatusOr<json> StartJob(
    const json& job, const v1::Workload& wl,
    const google::protobuf::RepeatedPtrField<v1::PodSetPlacement>& placements) {
  json out = job;
  // A previous admission may still be in the template (the shim stopped
  // between a start and the matching restore): undo it before saving.
  absl::StatusOr<std::optional<PodSetInfo>> saved = SavedOriginal(job);
  if (!saved.ok()) return saved.status();
  if (saved->has_value()) RestorePodSetsInfo(out, {**saved});
  PodSetInfo original =
      FromPodTemplate(PodTemplateOf(out), kDefaultPodSetName, PodsCount(out));
  SetAnnotation(out, kOriginalPodSchedulingAnnotation,
                PodSetInfoToJson(original).dump());

  absl::StatusOr<std::vector<PodSetInfo>> infos =
      PodSetsInfoFromStatus(wl, placements);
  if (!infos.ok()) return infos.status();
  absl::Status run = RunWithPodSetsInfo(out, *infos);
  if (!run.ok()) return run;
  return out;
}

json SuspendJob(const json& job) {
  json out = job;
  EnsureObject(out, "spec")["suspend"] = true;
  SetAnnotation(out, kStoppingAnnotation, "true");
  return out;
}

absl::StatusOr<json> RestoreJob(const json& job) {
  json out = job;
  EnsureObject(out, "spec")["suspend"] = true;
  absl::StatusOr<std::optional<PodSetInfo>> saved = SavedOriginal(job);
  if (!saved.ok()) return saved.status();
  if (saved->has_value()) RestorePodSetsInfo(out, {**saved});
  EraseAnnotation(out, kOriginalPodSchedulingAnnotation);
  EraseAnnotation(out, kStoppingAnnotation);
  return out;
}

}  // namespace kq::shim::jobs
