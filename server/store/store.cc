#include "server/store/store.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace kq::store {

std::vector<PodTemplate> DetachPodTemplates(Workload& workload) {
  std::vector<PodTemplate> out;
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    PodSet& ps = workload.pod_sets[i];
    if (ps.template_json.empty()) continue;
    out.push_back({KeyOf(workload), workload.meta.uid.str(),
                   static_cast<int32_t>(i), ps.template_json.Release()});
    ps.template_json.clear();
    ps.template_on_disk = true;
  }
  return out;
}

bool NeedsPodTemplates(const Workload& workload) {
  for (const PodSet& ps : workload.pod_sets) {
    if (ps.template_on_disk && ps.template_json.empty()) return true;
  }
  return false;
}

absl::Status FillPodTemplates(Workload& workload,
                              std::vector<PodTemplate> templates) {
  for (PodTemplate& t : templates) {
    if (t.pod_set < 0 ||
        static_cast<size_t>(t.pod_set) >= workload.pod_sets.size()) {
      continue;
    }
    PodSet& ps = workload.pod_sets[t.pod_set];
    if (ps.template_on_disk) ps.template_json = std::move(t.template_json);
  }
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    const PodSet& ps = workload.pod_sets[i];
    if (ps.template_on_disk && ps.template_json.empty()) {
      return absl::InternalError(absl::StrCat(
          "the store holds no template for spec.podSets[", i, "] of workload ",
          workload.meta.namespace_name.str(), "/", workload.meta.name));
    }
  }
  return absl::OkStatus();
}

std::vector<Event> WriteBatch::AllEvents() const {
  std::vector<Event> out = events;
  for (size_t i = 0;
       i < upserted_workload_events.size() && i < upserted_workloads.size();
       ++i) {
    out.push_back(
        {revision, upserted_workload_events[i], upserted_workloads[i]});
  }
  return out;
}

absl::Status WriteBatch::CheckShape() const {
  if (!upserted_workload_events.empty() &&
      upserted_workload_events.size() != upserted_workloads.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "upserted_workload_events: ", upserted_workload_events.size(), " for ",
        upserted_workloads.size(),
        " upserted workloads; one per workload, or none"));
  }
  return absl::OkStatus();
}

absl::Status Store::AttachEventTemplates(std::vector<Event>& events) {
  absl::flat_hash_map<std::string, std::vector<PodTemplate>> read;
  for (Event& event : events) {
    auto* workload = std::get_if<Workload>(&event.object);
    if (workload == nullptr || !NeedsPodTemplates(*workload)) continue;
    std::string uid = workload->meta.uid.str();
    auto it = read.find(uid);
    if (it == read.end()) {
      absl::StatusOr<std::vector<PodTemplate>> templates =
          ReadPodTemplates(KeyOf(*workload), uid);
      if (!templates.ok()) return templates.status();
      it = read.emplace(std::move(uid), *std::move(templates)).first;
    }
    // None left: the workload was deleted since.
    FillPodTemplates(*workload, it->second).IgnoreError();
  }
  return absl::OkStatus();
}

absl::Status Store::AttachPodTemplates(Workload& workload) {
  if (!NeedsPodTemplates(workload)) return absl::OkStatus();
  absl::StatusOr<std::vector<PodTemplate>> templates =
      ReadPodTemplates(KeyOf(workload), workload.meta.uid.str());
  if (!templates.ok()) return templates.status();
  return FillPodTemplates(workload, *std::move(templates));
}

}  // namespace kq::store
