#pragma once

// Pending workloads per ClusterQueue, as Kueue's pkg/cache/queue: an
// ordered active heap and an inadmissible set per ClusterQueue. Both
// StrictFIFO and BestEffortFIFO order by priority, then queue-order
// timestamp, then UID; they differ in where a head that could not be
// admitted goes (Requeue).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

#include "server/core/objects.h"

namespace kq::queue {

// A workload's place in its ClusterQueue's order.
struct QueueKey {
  int32_t priority = 0;
  absl::Time timestamp;
  std::string uid;
  NamespacedName workload;

  // Kueue's baseCompareFunc: higher priority, then earlier timestamp, then
  // UID; the workload key makes the order total.
  friend bool operator<(const QueueKey& a, const QueueKey& b);
  friend bool operator==(const QueueKey&, const QueueKey&) = default;
};

// Builds the queue key of a pending workload (queue-order timestamp: the
// creation time).
QueueKey KeyFor(const Workload& workload);

// Pending workloads of every ClusterQueue. Thread-compatible: owned by the
// engine thread.
class Manager {
 public:
  // Why a head was not admitted, as Kueue's RequeueReason; decides where
  // it goes back to.
  enum class RequeueReason {
    kGeneric,
    kNoFit,
    kNamespaceMismatch,
    kFailedAfterNomination,
  };

  // Creates or updates the queue of a ClusterQueue.
  void UpsertClusterQueue(const std::string& name, QueueingStrategy strategy);
  // Deletes a ClusterQueue's queue and returns the workloads it held.
  std::vector<NamespacedName> DeleteClusterQueue(const std::string& name);

  // Adds a pending workload to `cluster_queue`'s active heap, replacing any
  // previous entry of the same workload (in any queue).
  void Push(const std::string& cluster_queue, const QueueKey& key);
  // Removes a workload from whatever queue holds it. No-op if none does.
  void Remove(const NamespacedName& workload);

  // Pops the head of every ClusterQueue accepted by `is_active`, in name
  // order (Kueue: one head per active ClusterQueue per cycle).
  template <typename Pred>
  std::vector<std::pair<std::string, NamespacedName>> PopHeads(Pred is_active);

  // Puts a popped head back. StrictFIFO puts it back in the heap (it keeps
  // blocking the queue) except on namespace mismatch; BestEffortFIFO parks
  // it as inadmissible unless the reason is kFailedAfterNomination.
  // Returns true when the head was parked as inadmissible.
  bool Requeue(const std::string& cluster_queue, const QueueKey& key,
               RequeueReason reason);

  // Moves every inadmissible workload of the given ClusterQueues back to
  // their heaps (quota was freed or configuration changed). Returns true if
  // any moved.
  bool QueueInadmissible(const std::vector<std::string>& cluster_queues);
  bool QueueAllInadmissible();

  // Counts for status: active plus inadmissible.
  int32_t PendingCount(const std::string& cluster_queue) const;
  // 0-based position of a workload in its ClusterQueue's order (active and
  // inadmissible together, as Kueue's visibility API), or nullopt.
  std::optional<int64_t> PositionOf(const NamespacedName& workload) const;
  // The ClusterQueue holding a workload, or nullptr.
  const std::string* ClusterQueueOf(const NamespacedName& workload) const;
  bool Contains(const NamespacedName& workload) const {
    return where_.count(workload) > 0;
  }
  bool HasActive() const;

 private:
  struct Pending {
    QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
    std::set<QueueKey> active;
    std::set<QueueKey> inadmissible;
  };
  struct Location {
    std::string cluster_queue;
    QueueKey key;
    bool inadmissible = false;
  };

  std::map<std::string, Pending> queues_;
  std::map<NamespacedName, Location> where_;
};

template <typename Pred>
std::vector<std::pair<std::string, NamespacedName>> Manager::PopHeads(
    Pred is_active) {
  std::vector<std::pair<std::string, NamespacedName>> heads;
  for (auto& [name, pending] : queues_) {
    if (pending.active.empty() || !is_active(name)) continue;
    auto it = pending.active.begin();
    heads.emplace_back(name, it->workload);
    where_.erase(it->workload);
    pending.active.erase(it);
  }
  return heads;
}

}  // namespace kq::queue
