#pragma once

// What an AdmissionState changed since it was last asked: the changes the
// engine stores and tells watchers of after each batch.

#include <map>

#include "server/core/objects.h"

namespace kq::admission {

enum class Change { kAdded, kModified, kDeleted };

struct Changes {
  std::map<ObjectKey, Change> objects;
  // The last state of objects deleted (for their DELETED events).
  std::map<ObjectKey, ConfigObject> deleted_objects;
  std::map<NamespacedName, Change> workloads;
  // Workloads that finished; no longer among the state's workloads.
  std::map<NamespacedName, Workload> finished_workloads;
  // The last state of workloads deleted (kDeleted; a MultiKueue copy the
  // manager removed), whose rows go with their DELETED events.
  std::map<NamespacedName, Workload> deleted_workloads;

  bool empty() const { return objects.empty() && workloads.empty(); }
};

class WorkloadTable;

// Thread-compatible.
class ChangeLog {
 public:
  // A change of an object; created and deleted in one batch is none.
  void MarkObject(const ObjectKey& key, Change change);
  // The deletion of an object, `last` as it was then.
  void MarkDeleted(const ObjectKey& key, ConfigObject last);
  void MarkWorkload(const NamespacedName& key, Change change);
  // A change of `key`'s QuotaReserved=False condition alone; `before` is
  // that condition before the change (nullptr: none).
  void MarkPendingCondition(const NamespacedName& key, const Condition* before);
  // `workload` finished and left the state.
  void MarkFinished(const NamespacedName& key, Workload workload);
  // `workload` left the state and its row goes.
  void MarkWorkloadDeleted(const NamespacedName& key, Workload workload);

  // What changed so far; may list a workload that Take() drops (one whose
  // pending condition changed and changed back).
  const Changes& pending() const { return changes_; }
  const Workload* FindFinished(const NamespacedName& key) const;
  // Returns and forgets what changed, reading the workloads' conditions now
  // from `workloads`.
  Changes Take(const WorkloadTable& workloads);
  void Clear();

 private:
  void Record(const NamespacedName& key, Change change);

  Changes changes_;
  // Workloads whose only change is their QuotaReserved condition (set to
  // False with a reason and message), with the condition as it was before.
  // Passes often turn a head's message and back within one batch ("no
  // longer fits after processing another workload", then "insufficient
  // unused quota"); a condition that ends as it began is no change, and
  // neither the store nor the watchers are told of it.
  std::map<NamespacedName, Condition> pending_condition_before_;
};

}  // namespace kq::admission
