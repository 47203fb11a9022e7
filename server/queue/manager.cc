#include "server/queue/manager.h"

#include <tuple>

namespace kq::queue {

bool operator<(const QueueKey& a, const QueueKey& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
  return std::tie(a.uid, a.workload) < std::tie(b.uid, b.workload);
}

QueueKey KeyFor(const Workload& workload) {
  return QueueKey{workload.priority,
                  workload.meta.creation_timestamp,
                  workload.meta.uid,
                  {workload.meta.namespace_name, workload.meta.name}};
}

void Manager::UpsertClusterQueue(const std::string& name,
                                 QueueingStrategy strategy) {
  queues_[name].strategy = strategy;
}

std::vector<NamespacedName> Manager::DeleteClusterQueue(
    const std::string& name) {
  std::vector<NamespacedName> held;
  auto it = queues_.find(name);
  if (it == queues_.end()) return held;
  for (const QueueKey& k : it->second.active) held.push_back(k.workload);
  for (const QueueKey& k : it->second.inadmissible) held.push_back(k.workload);
  for (const NamespacedName& w : held) where_.erase(w);
  queues_.erase(it);
  return held;
}

void Manager::Push(const std::string& cluster_queue, const QueueKey& key) {
  Remove(key.workload);
  queues_[cluster_queue].active.insert(key);
  where_[key.workload] = Location{cluster_queue, key, false};
}

void Manager::Remove(const NamespacedName& workload) {
  auto it = where_.find(workload);
  if (it == where_.end()) return;
  auto q = queues_.find(it->second.cluster_queue);
  if (q != queues_.end()) {
    (it->second.inadmissible ? q->second.inadmissible : q->second.active)
        .erase(it->second.key);
  }
  where_.erase(it);
}

bool Manager::Requeue(const std::string& cluster_queue, const QueueKey& key,
                      RequeueReason reason) {
  Pending& pending = queues_[cluster_queue];
  bool immediate = pending.strategy == QueueingStrategy::kStrictFIFO
                       ? reason != RequeueReason::kNamespaceMismatch
                       : reason == RequeueReason::kFailedAfterNomination;
  Remove(key.workload);
  (immediate ? pending.active : pending.inadmissible).insert(key);
  where_[key.workload] = Location{cluster_queue, key, !immediate};
  return !immediate;
}

bool Manager::QueueInadmissible(
    const std::vector<std::string>& cluster_queues) {
  bool moved = false;
  for (const std::string& name : cluster_queues) {
    auto it = queues_.find(name);
    if (it == queues_.end()) continue;
    Pending& pending = it->second;
    for (const QueueKey& key : pending.inadmissible) {
      pending.active.insert(key);
      where_[key.workload].inadmissible = false;
      moved = true;
    }
    pending.inadmissible.clear();
  }
  return moved;
}

bool Manager::QueueAllInadmissible() {
  std::vector<std::string> names;
  for (const auto& [name, pending] : queues_) names.push_back(name);
  return QueueInadmissible(names);
}

int32_t Manager::PendingCount(const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return 0;
  return static_cast<int32_t>(it->second.active.size() +
                              it->second.inadmissible.size());
}

std::optional<int64_t> Manager::PositionOf(
    const NamespacedName& workload) const {
  auto it = where_.find(workload);
  if (it == where_.end()) return std::nullopt;
  const Pending& pending = queues_.at(it->second.cluster_queue);
  int64_t position = 0;
  for (const auto* set : {&pending.active, &pending.inadmissible}) {
    for (const QueueKey& k : *set) {
      if (k < it->second.key) ++position;
    }
  }
  return position;
}

const std::string* Manager::ClusterQueueOf(
    const NamespacedName& workload) const {
  auto it = where_.find(workload);
  return it == where_.end() ? nullptr : &it->second.cluster_queue;
}

bool Manager::HasActive() const {
  for (const auto& [name, pending] : queues_) {
    if (!pending.active.empty()) return true;
  }
  return false;
}

}  // namespace kq::queue
