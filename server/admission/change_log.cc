#include "server/admission/change_log.h"

#include <utility>

#include "server/admission/workload_table.h"

namespace kq::admission {

void ChangeLog::MarkObject(const ObjectKey& key, Change change) {
  auto [it, inserted] = changes_.objects.emplace(key, change);
  if (inserted) return;
  if (it->second == Change::kAdded && change == Change::kDeleted) {
    // Created and deleted in one batch: nothing to store.
    changes_.objects.erase(it);
    changes_.deleted_objects.erase(key);
    return;
  }
  if (it->second != Change::kAdded) it->second = change;
}

void ChangeLog::MarkDeleted(const ObjectKey& key, ConfigObject last) {
  changes_.deleted_objects[key] = std::move(last);
  MarkObject(key, Change::kDeleted);
}

void ChangeLog::MarkWorkload(const NamespacedName& key, Change change) {
  if (!pending_condition_before_.empty()) pending_condition_before_.erase(key);
  Record(key, change);
}

void ChangeLog::MarkPendingCondition(const NamespacedName& key,
                                     const Condition* before) {
  // A first condition is kept as a change without a look back: that is
  // every workload's first pass, and a copy each would cost memory.
  if (before == nullptr) return MarkWorkload(key, Change::kModified);
  // Changed already in this batch: the first mark says what it was.
  if (!changes_.workloads.contains(key)) {
    pending_condition_before_.emplace(key, *before);
  }
  Record(key, Change::kModified);
}

void ChangeLog::MarkFinished(const NamespacedName& key, Workload workload) {
  changes_.finished_workloads[key] = std::move(workload);
  MarkWorkload(key, Change::kModified);
}

void ChangeLog::MarkWorkloadDeleted(const NamespacedName& key,
                                    Workload workload) {
  if (!pending_condition_before_.empty()) pending_condition_before_.erase(key);
  changes_.finished_workloads.erase(key);
  changes_.deleted_workloads[key] = std::move(workload);
  // Whatever happened to it before in the batch, its row goes.
  changes_.workloads[key] = Change::kDeleted;
}

const Workload* ChangeLog::FindFinished(const NamespacedName& key) const {
  auto it = changes_.finished_workloads.find(key);
  return it == changes_.finished_workloads.end() ? nullptr : &it->second;
}

Changes ChangeLog::Take(const WorkloadTable& workloads) {
  for (const auto& [key, before] : pending_condition_before_) {
    const Workload* wl = workloads.Find(key);
    if (wl == nullptr) continue;
    const Condition* now =
        FindCondition(wl->conditions, kConditionQuotaReserved);
    if (now != nullptr && *now == before) changes_.workloads.erase(key);
  }
  pending_condition_before_.clear();
  return std::exchange(changes_, Changes());
}

void ChangeLog::Clear() {
  changes_ = Changes();
  pending_condition_before_.clear();
}

void ChangeLog::Record(const NamespacedName& key, Change change) {
  auto [it, inserted] = changes_.workloads.emplace(key, change);
  // Created again after a deletion in the same batch: a new row replaces
  // the old.
  if (!inserted && it->second == Change::kDeleted) {
    changes_.deleted_workloads.erase(key);
    it->second = Change::kAdded;
    return;
  }
  if (!inserted && it->second != Change::kAdded) it->second = change;
}

}  // namespace kq::admission
