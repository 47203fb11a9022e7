#include "server/store/memory_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

#include "base/status_macros.h"

namespace kq::store {

MemoryStore::MemoryStore(size_t event_retention)
    : event_retention_(event_retention) {}

absl::StatusOr<LoadedState> MemoryStore::Load() {
  LoadedState state;
  state.revision = revision_;
  state.objects.reserve(objects_.size());
  for (const auto& [key, object] : objects_) state.objects.push_back(object);
  for (const auto& [key, workload] : workloads_) {
    if (StateOf(workload) != WorkloadState::kFinished) {
      state.active_workloads.push_back(workload);
    }
  }
  return state;
}

absl::Status MemoryStore::Commit(const WriteBatch& batch) {
  if (batch.revision <= revision_) {
    return absl::FailedPreconditionError(
        absl::StrCat("batch revision ", batch.revision,
                     " is not greater than the store's revision ", revision_));
  }
  KQ_RETURN_IF_ERROR(batch.CheckShape());
  // Nothing below can fail, so the batch applies entirely or (above) not at
  // all.
  for (const ConfigObject& object : batch.upserted_objects) {
    objects_.insert_or_assign(KeyOf(object), object);
  }
  for (const ObjectKey& key : batch.deleted_objects) objects_.erase(key);
  for (const Workload& workload : batch.upserted_workloads) {
    workloads_.insert_or_assign(
        NamespacedName(workload.meta.namespace_name, workload.meta.name),
        workload);
  }
  for (const NamespacedName& key : batch.deleted_workloads) {
    auto it = workloads_.find(key);
    if (it == workloads_.end()) continue;
    templates_.erase(it->second.meta.uid.str());
    workloads_.erase(it);
  }
  for (const PodTemplate& t : batch.added_templates) {
    templates_[t.workload_uid][t.pod_set] = t.template_json;
  }
  for (const Event& event : batch.AllEvents()) {
    Event stored = event;
    stored.revision = batch.revision;
    events_.push_back(std::move(stored));
  }
  revision_ = batch.revision;
  PruneEvents();
  return absl::OkStatus();
}

void MemoryStore::PruneEvents() {
  if (events_.size() <= event_retention_) return;
  // Drop the excess, and with it the rest of the revision the excess ends
  // in: a half-kept revision would make resuming from before it lose events.
  // The newest revision is always kept whole, even when it alone exceeds
  // the retention, so a reader can resume from the revision before it.
  const size_t excess = events_.size() - event_retention_;
  const int64_t cutoff =
      std::min(events_[excess - 1].revision, events_.back().revision - 1);
  while (!events_.empty() && events_.front().revision <= cutoff) {
    events_.pop_front();
  }
}

absl::StatusOr<std::optional<Workload>> MemoryStore::GetWorkload(
    const NamespacedName& key) {
  auto it = workloads_.find(key);
  if (it == workloads_.end()) return std::nullopt;
  Workload workload = it->second;
  KQ_RETURN_IF_ERROR(AttachPodTemplates(workload));
  return workload;
}

absl::StatusOr<std::vector<Workload>> MemoryStore::ListFinishedWorkloads(
    const std::string& namespace_name) {
  std::vector<Workload> out;
  for (const auto& [key, workload] : workloads_) {
    if (!namespace_name.empty() && key.first != namespace_name) continue;
    if (StateOf(workload) == WorkloadState::kFinished) {
      out.push_back(workload);
      KQ_RETURN_IF_ERROR(AttachPodTemplates(out.back()));
    }
  }
  return out;
}

absl::StatusOr<std::vector<Event>> MemoryStore::ReadEvents(
    int64_t after_revision, size_t limit) {
  if (limit == 0) return std::vector<Event>();
  auto begin = std::upper_bound(
      events_.begin(), events_.end(), after_revision,
      [](int64_t revision, const Event& e) { return revision < e.revision; });
  auto end = begin + std::min<size_t>(limit, events_.end() - begin);
  if (end != events_.end() && end != begin &&
      end->revision == (end - 1)->revision) {
    // The limit splits a revision.
    const int64_t split = end->revision;
    if (begin->revision == split) {
      while (end != events_.end() && end->revision == split) ++end;
    } else {
      while ((end - 1)->revision == split) --end;
    }
  }
  std::vector<Event> out(begin, end);
  KQ_RETURN_IF_ERROR(AttachEventTemplates(out));
  return out;
}

absl::StatusOr<std::vector<PodTemplate>> MemoryStore::ReadPodTemplates(
    const NamespacedName& key, const std::string& workload_uid) {
  std::vector<PodTemplate> out;
  auto it = templates_.find(workload_uid);
  if (it == templates_.end()) return out;
  for (const auto& [pod_set, text] : it->second) {
    out.push_back({key, workload_uid, pod_set, text});
  }
  return out;
}

absl::StatusOr<int64_t> MemoryStore::OldestEventRevision() {
  return events_.empty() ? 0 : events_.front().revision;
}

}  // namespace kq::store
