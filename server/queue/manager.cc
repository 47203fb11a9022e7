#include "server/queue/manager.h"

#include <tuple>

namespace kq::queue {
namespace {

std::vector<NamespacedName> Workloads(const std::set<QueueKey>& keys) {
  std::vector<NamespacedName> out;
  out.reserve(keys.size());
  for (const QueueKey& k : keys) out.push_back(k.workload);
  return out;
}

}  // namespace

bool operator<(const QueueKey& a, const QueueKey& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
  return std::tie(a.uid, a.workload) < std::tie(b.uid, b.workload);
}

QueueKey KeyFor(const Workload& workload) {
  return QueueKey{workload.priority,
                  QueueOrderTimestamp(workload),
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

bool Manager::IsImmediate(QueueingStrategy strategy, RequeueReason reason) {
  if (strategy == QueueingStrategy::kStrictFIFO) {
    return reason != RequeueReason::kNamespaceMismatch;
  }
  return reason == RequeueReason::kFailedAfterNomination ||
         reason == RequeueReason::kPendingPreemption ||
         reason == RequeueReason::kPreemptionFailed;
}

bool Manager::RequeueIfNotPresent(const std::string& cluster_queue,
                                  const QueueKey& key, RequeueReason reason,
                                  bool pending_flavors) {
  auto held = where_.find(key.workload);
  if (held != where_.end() && held->second.cluster_queue != cluster_queue) {
    Remove(key.workload);
    held = where_.end();
  }
  Pending& pending = queues_[cluster_queue];
  // Kueue's requeueIfNotPresent (backoff is not modelled yet: every requeue
  // is past its backoff).
  if (IsImmediate(pending.strategy, reason) ||
      pending.queue_inadmissible_cycle >= pending.pop_cycle ||
      pending_flavors) {
    if (held == where_.end()) {
      pending.active.insert(key);
      where_[key.workload] = Location{cluster_queue, key, false};
      return true;
    }
    if (!held->second.inadmissible) return false;
    // Back to the heap with the key it was parked with, as Kueue moves the
    // stored entry.
    pending.inadmissible.erase(held->second.key);
    pending.active.insert(held->second.key);
    held->second.inadmissible = false;
    return true;
  }
  if (held != where_.end()) return false;
  pending.inadmissible.insert(key);
  where_[key.workload] = Location{cluster_queue, key, true};
  return true;
}

bool Manager::Requeue(const std::string& cluster_queue, const QueueKey& key,
                      RequeueReason reason, bool pending_flavors) {
  return RequeueIfNotPresent(cluster_queue, key, reason, pending_flavors) &&
         IsInadmissible(key.workload);
}

int Manager::QueueInadmissible(const std::vector<std::string>& cluster_queues,
                               const EligibleFn& eligible) {
  int moved = 0;
  for (const std::string& name : cluster_queues) {
    auto it = queues_.find(name);
    if (it == queues_.end()) continue;
    Pending& pending = it->second;
    pending.queue_inadmissible_cycle = pending.pop_cycle;
    for (auto k = pending.inadmissible.begin();
         k != pending.inadmissible.end();) {
      if (eligible && !eligible(name, *k)) {
        ++k;
        continue;
      }
      pending.active.insert(*k);
      where_[k->workload].inadmissible = false;
      k = pending.inadmissible.erase(k);
      ++moved;
    }
  }
  return moved;
}

int Manager::QueueAllInadmissible(const EligibleFn& eligible) {
  std::vector<std::string> names;
  for (const auto& [name, pending] : queues_) names.push_back(name);
  return QueueInadmissible(names, eligible);
}

int32_t Manager::PendingCount(const std::string& cluster_queue) const {
  return PendingActive(cluster_queue) + PendingInadmissible(cluster_queue);
}

int32_t Manager::PendingActive(const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return 0;
  return static_cast<int32_t>(it->second.active.size());
}

int32_t Manager::PendingInadmissible(const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return 0;
  return static_cast<int32_t>(it->second.inadmissible.size());
}

std::vector<NamespacedName> Manager::ActiveWorkloads(
    const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return {};
  return Workloads(it->second.active);
}

std::vector<NamespacedName> Manager::InadmissibleWorkloads(
    const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return {};
  return Workloads(it->second.inadmissible);
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

bool Manager::IsInadmissible(const NamespacedName& workload) const {
  auto it = where_.find(workload);
  return it != where_.end() && it->second.inadmissible;
}

bool Manager::HasActive() const {
  for (const auto& [name, pending] : queues_) {
    if (!pending.active.empty()) return true;
  }
  return false;
}

}  // namespace kq::queue
