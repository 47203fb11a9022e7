#include "server/store/store.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace kq::store {

std::vector<PodTemplate> DetachPodTemplates(Workload& workload) {
  std::vector<PodTemplate> out;
  for (size_t i = 0; i < workload.pod_sets.size(); ++i) {
    PodSet& ps = workload.pod_sets[i];
    if (ps.template_json.empty()) continue;
    out.push_back({workload.meta.uid, static_cast<int32_t>(i),
                   std::move(ps.template_json)});
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
          workload.meta.namespace_name, "/", workload.meta.name));
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

absl::Status Store::AttachPodTemplates(Workload& workload) {
  if (!NeedsPodTemplates(workload)) return absl::OkStatus();
  absl::StatusOr<std::vector<PodTemplate>> templates =
      ReadPodTemplates(workload.meta.uid);
  if (!templates.ok()) return templates.status();
  return FillPodTemplates(workload, *std::move(templates));
}

}  // namespace kq::store
