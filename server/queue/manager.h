#pragma once

// Pending workloads per ClusterQueue, as Kueue's pkg/cache/queue: an
// ordered active heap and an inadmissible set per ClusterQueue. Both
// StrictFIFO and BestEffortFIFO order by priority, then queue-order
// timestamp, then UID; they differ in where a head that could not be
// admitted goes (Requeue).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"

#include "server/core/objects.h"

namespace kq::queue {

// A workload's place in its ClusterQueue's order.
struct QueueKey {
  int32_t priority = 0;
  absl::Time timestamp;
  Uid uid;
  NamespacedName workload;
  // The workload KeyFor() made the key from, which must stay in place, with
  // this uid and name, while its key is queued: the manager reads them from
  // it. Null when the key was made otherwise (the manager keeps a copy of
  // uid and workload then). Not part of the order.
  const Workload* object = nullptr;

  // Kueue's baseCompareFunc: higher priority, then earlier timestamp (to
  // the nanosecond, a Go time.Time's resolution), then UID; the workload
  // key makes the order total.
  friend bool operator<(const QueueKey& a, const QueueKey& b);
  // No operator==: a defaulted one would also compare `object` and the exact
  // absl::Time, and so disagree with the order above.
};

// Builds the queue key of a pending workload. The timestamp is Kueue's
// queue-order timestamp (workload.Ordering.GetQueueOrderTimestamp) with
// Kueue's defaults (requeuingStrategy.timestamp Eviction,
// PrioritySortingWithinCohort on): the time of the Evicted condition when
// the workload was evicted for PodsReadyTimeout or by an AdmissionCheck,
// the creation time otherwise.
QueueKey KeyFor(const Workload& workload);

// Pending workloads of every ClusterQueue. Thread-compatible: owned by the
// engine thread.
class Manager {
 public:
  Manager() = default;
  // Entries point into the queues: moving keeps them, copying would not.
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;
  Manager(Manager&&) = default;
  Manager& operator=(Manager&&) = default;
  // Why a head was not admitted, as Kueue's RequeueReason; decides where
  // it goes back to (see Requeue).
  enum class RequeueReason {
    // Any other reason (Kueue's empty reason).
    kGeneric,
    // The flavor assigner found no fit, not even with preemption.
    kNoFit,
    // The workload's namespace does not match the ClusterQueue's selector.
    kNamespaceMismatch,
    // It fit when nominated but no longer did once earlier entries of the
    // same cycle were admitted.
    kFailedAfterNomination,
    // It issued preemptions and waits for the victims to go.
    kPendingPreemption,
    // Preemption targets were found but evicting them failed.
    kPreemptionFailed,
    // It needs preemption and no candidate set frees enough quota.
    kPreemptionNoCandidates,
  };

  // Decides which inadmissible workloads QueueInadmissible may move back,
  // e.g. only those whose namespace still matches the ClusterQueue's
  // selector (Kueue re-checks it).
  using EligibleFn = std::function<bool(const std::string& cluster_queue,
                                        const NamespacedName& workload)>;

  // Creates or updates the queue of a ClusterQueue.
  void UpsertClusterQueue(const std::string& name, QueueingStrategy strategy);
  // Deletes a ClusterQueue's queue and returns the workloads it held.
  std::vector<NamespacedName> DeleteClusterQueue(const std::string& name);

  // Adds a pending workload to `cluster_queue`'s active heap, replacing any
  // previous entry of the same workload (in any queue).
  void Push(const std::string& cluster_queue, const QueueKey& key);
  // Removes a workload from whatever queue holds it. No-op if none does.
  void Remove(const NamespacedName& workload);

  // A head popped from a ClusterQueue.
  struct Head {
    std::string cluster_queue;
    NamespacedName workload;
    // Its key's object (see QueueKey).
    const Workload* object = nullptr;
  };
  // Pops the head of every ClusterQueue accepted by `is_active`, in name
  // order (Kueue: one head per active ClusterQueue per cycle). A popped
  // workload is held by no queue until it is requeued.
  template <typename Pred>
  std::vector<Head> PopHeads(Pred is_active);

  // Kueue's ClusterQueue.RequeueIfNotPresent: puts a workload that could not
  // be admitted back into `cluster_queue`, unless it is already there.
  // It goes back to the active heap when the requeue is "immediate" or when
  // QueueInadmissible ran for this ClusterQueue since its last pop (quota may
  // have been freed while it was being scheduled); otherwise it is parked
  // as inadmissible. Immediate: StrictFIFO, any reason but
  // kNamespaceMismatch (the head keeps blocking the queue); BestEffortFIFO,
  // kFailedAfterNomination, kPendingPreemption and kPreemptionFailed.
  // An immediate requeue of a workload parked in this ClusterQueue moves it
  // back to the heap. A workload held by another ClusterQueue is first
  // removed from there. `pending_flavors`: its flavor scan stopped before
  // the last flavor (it goes back to the heap to try the next ones).
  // Returns whether the workload was inserted or moved.
  bool RequeueIfNotPresent(const std::string& cluster_queue,
                           const QueueKey& key, RequeueReason reason,
                           bool pending_flavors = false);
  // RequeueIfNotPresent for a popped head. Returns true when the head was
  // parked as inadmissible (the next workload becomes the head).
  bool Requeue(const std::string& cluster_queue, const QueueKey& key,
               RequeueReason reason, bool pending_flavors = false);

  // Moves every inadmissible workload of the given ClusterQueues accepted
  // by `eligible` (all when null) back to their heaps: quota was freed or
  // configuration changed. Callers pass a whole cohort tree
  // (cache::Cache::ClusterQueuesInTree). Returns how many moved.
  int QueueInadmissible(const std::vector<std::string>& cluster_queues,
                        const EligibleFn& eligible = nullptr);
  int QueueAllInadmissible(const EligibleFn& eligible = nullptr);

  // Counts for status: active plus inadmissible.
  int32_t PendingCount(const std::string& cluster_queue) const;
  // The two parts of PendingCount (Kueue's pending_workloads metric with
  // status "active" and "inadmissible").
  int32_t PendingActive(const std::string& cluster_queue) const;
  int32_t PendingInadmissible(const std::string& cluster_queue) const;
  // The workloads of a ClusterQueue's heap and of its inadmissible set, each
  // in queue order (Kueue's Dump and DumpInadmissible).
  std::vector<NamespacedName> ActiveWorkloads(
      const std::string& cluster_queue) const;
  std::vector<NamespacedName> InadmissibleWorkloads(
      const std::string& cluster_queue) const;
  // Kueue's ClusterQueue.Snapshot, what its visibility API lists: the first
  // `max` pending workloads of a ClusterQueue, heap and inadmissible set
  // together (those parked with an equivalent included), in queue order,
  // so that each one's index is its PositionOf(). Empty for an unknown
  // ClusterQueue.
  std::vector<NamespacedName> PendingWorkloads(const std::string& cluster_queue,
                                               size_t max = SIZE_MAX) const;
  // 0-based position of a workload in its ClusterQueue's order (active and
  // inadmissible together, as Kueue's visibility API), or nullopt.
  std::optional<int64_t> PositionOf(const NamespacedName& workload) const;
  // The ClusterQueue holding a workload, or nullptr.
  const std::string* ClusterQueueOf(const NamespacedName& workload) const;
  bool Contains(const NamespacedName& workload) const {
    return Held(workload) != nullptr;
  }
  // Whether a workload is parked as inadmissible.
  bool IsInadmissible(const NamespacedName& workload) const;
  // Contains and IsInadmissible in one lookup (the metrics' walk of every
  // pending workload).
  enum class Queued { kNo, kActive, kInadmissible };
  Queued WhereQueued(const NamespacedName& workload) const;
  bool HasActive() const;
  // Moves whenever a workload may have been parked since (a pop or a park):
  // while it stands still, a second QueueInadmissible of the same queues
  // moves nothing.
  uint64_t park_version() const { return park_version_; }

 private:
  // One per workload a queue holds (or popped and not yet requeued).
  struct Entry;
  // An entry's place in a heap: the order's leading fields are copied in,
  // so most comparisons read no entry. 32 bytes, with the timestamp in
  // whole nanoseconds as the Entry's.
  struct Slot {
    int64_t timestamp_ns;
    Entry* entry;
    // The entry's scheduling hash: which of the heap's sets holds the slot,
    // and whether a bulk move parked it. Not part of the order.
    uint64_t scheduling_hash;
    int32_t priority;
  };
  static_assert(sizeof(Slot) <= 32, "a heap Slot grew past 32 bytes");
  struct SlotLess {
    bool operator()(const Slot& a, const Slot& b) const;
  };
  using SlotSet = absl::btree_set<Slot, SlotLess>;
  // A ClusterQueue's heap, kept as one ordered set per scheduling hash plus
  // the first slot of each. Most of a busy heap can be parked by its hash
  // (bulk moves) while staying in it; the first slot not parked is then
  // found by looking at one slot per shape, not by walking the parked ones.
  class Heap {
   public:
    void Insert(const Slot& slot);
    // False when `slot` is not in the heap.
    bool Erase(const Slot& slot);
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    // How many slots have scheduling hash `hash`.
    int32_t CountOf(uint64_t hash) const;
    // The first slot, in queue order, whose hash `parked` rejects, or null.
    template <typename Parked>
    const Slot* FirstNot(Parked parked) const {
      for (const Slot& slot : firsts_) {
        if (!parked(slot.scheduling_hash)) return &slot;
      }
      return nullptr;
    }
    // Calls `fn` with every slot, in no particular order.
    template <typename Fn>
    void ForEach(Fn fn) const {
      for (const auto& [hash, slots] : by_hash_) {
        for (const Slot& slot : slots) fn(slot);
      }
    }

   private:
    absl::flat_hash_map<uint64_t, SlotSet> by_hash_;
    // The first slot of each set of by_hash_.
    SlotSet firsts_;
    size_t size_ = 0;
  };
  struct Pending {
    // Its key in queues_ (std::map elements do not move).
    const std::string* name = nullptr;
    QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
    Heap active;
    // Parked entries in no order (each knows its index): parking and
    // removal cost O(1); the rare ordered listing sorts.
    std::vector<Entry*> inadmissible;
    // Kueue's popCycle and queueInadmissibleCycle: a requeue goes to the
    // heap when QueueInadmissible ran at or after the last pop.
    int64_t pop_cycle = 0;
    int64_t queue_inadmissible_cycle = -1;
    // Kueue's hashToBulkMoveReason (BestEffortFIFO): the scheduling hashes
    // whose workloads were parked together after one of them was parked as
    // NoFit or PreemptionNoCandidates; a workload with one of them arriving
    // later is parked at once. Cleared by QueueInadmissible. The heap's
    // workloads with these hashes stay in it but count as parked: PopHeads
    // passes over them, listings and counts show them parked.
    absl::flat_hash_set<uint64_t> bulk_moved;
    // How many of the heap's entries have a hash in bulk_moved, kept by
    // InsertActive, EraseActive and BulkMove: counts and the check for a
    // live heap read it instead of walking the heap.
    int32_t bulk_moved_in_heap = 0;
    // Set by PopHeads when every workload in the heap was parked by its
    // hash, so that the next passes do not walk them again; cleared when
    // the heap gains a workload or the hashes are forgotten (losing one or
    // parking more cannot make a parked heap live).
    bool nothing_live = false;
  };
  enum class Place : uint8_t { kActive, kInadmissible, kPopped };
  // The name and uid of a key that names no object (QueueKey::object).
  struct OwnedKey {
    NamespacedName workload;
    Uid uid;
  };
  struct Entry {
    // Its QueueKey. The workload's name and uid are read from its object,
    // not copied: the object's owner keeps it in place, named as it is, while
    // the key is queued (see QueueKey::object). A key without an object
    // brings its own copy.
    int32_t priority = 0;
    // Its index in pending->inadmissible while parked, and where it is
    // (a Place), in one word.
    uint32_t parked_index : 30 = 0;
    uint32_t place_bits : 2 = static_cast<uint32_t>(Place::kActive);
    // The key's timestamp in whole nanoseconds since the Unix epoch: the
    // resolution of Kueue's (a Go time.Time) and of every time kqd reads
    // or makes, in 8 bytes instead of an absl::Time's 16.
    int64_t timestamp_ns = 0;
    const Workload* object = nullptr;
    std::unique_ptr<const OwnedKey> owned;  // set when object is null
    // SchedulingHash(*object), made when the key is set (a pending
    // workload's shape changes only through a new key or a new push); 0
    // without an object.
    uint64_t scheduling_hash = 0;
    // The queue holding it, in queues_ (std::map elements do not move).
    Pending* pending = nullptr;

    const std::string& namespace_name() const {
      return object != nullptr ? object->meta.namespace_name.str()
                               : owned->workload.first;
    }
    const std::string& name() const {
      return object != nullptr ? object->meta.name : owned->workload.second;
    }
    const Uid& uid() const {
      return object != nullptr ? object->meta.uid : owned->uid;
    }
    NamespacedName workload() const { return {namespace_name(), name()}; }
    Place place() const { return static_cast<Place>(place_bits); }
    void set_place(Place place) { place_bits = static_cast<uint32_t>(place); }
    // More than memory holds: 2^30 entries of 48 bytes.
    static constexpr size_t kMaxParked = size_t{1} << 30;
  };
  // One per queued workload, in a 48-byte block of its own.
  static_assert(sizeof(Entry) <= 48, "an Entry grew past 48 bytes");
  // where_ finds an entry by its workload's name, which it reads from the
  // entry (so the name is not kept twice).
  struct EntryHash {
    using is_transparent = void;
    size_t operator()(const NamespacedName& workload) const;
    size_t operator()(const std::unique_ptr<Entry>& entry) const;
  };
  struct EntryEq {
    using is_transparent = void;
    bool operator()(const std::unique_ptr<Entry>& a,
                    const std::unique_ptr<Entry>& b) const {
      return a == b;
    }
    bool operator()(const std::unique_ptr<Entry>& a,
                    const NamespacedName& b) const {
      return a->name() == b.second && a->namespace_name() == b.first;
    }
    bool operator()(const NamespacedName& a,
                    const std::unique_ptr<Entry>& b) const {
      return (*this)(b, a);
    }
  };

  static Slot SlotOf(Entry& entry) {
    return Slot{entry.timestamp_ns, &entry, entry.scheduling_hash,
                entry.priority};
  }
  // QueueKey's order between entries.
  static bool Before(const Entry& a, const Entry& b);
  // The queue of `cluster_queue`, made if needed.
  Pending& QueueNamed(const std::string& cluster_queue);
  // A new entry of `key`'s workload, which where_ must not hold, with
  // `key` set.
  Entry& MakeEntry(const QueueKey& key);
  static void SetKey(Entry& entry, const QueueKey& key);
  static bool HasKey(const Entry& entry, const QueueKey& key);
  void Park(Entry& entry);
  static void Unpark(Entry& entry);
  // Kueue's handleInadmissibleHash: remembers `hash`; every active entry of
  // `pending` with that scheduling hash is parked from then on (IsParked).
  void BulkMove(Pending& pending, uint64_t hash);
  static bool IsBulkMoved(const Pending& pending, uint64_t hash) {
    return hash != 0 && !pending.bulk_moved.empty() &&
           pending.bulk_moved.contains(hash);
  }
  // Whether an entry is parked: in the inadmissible set, or in the heap
  // with a bulk-moved hash (Kueue moves those to its inadmissible set).
  static bool IsParked(const Entry& entry);
  // How many of the heap's entries are parked by their hash.
  static int32_t BulkMovedCount(const Pending& pending) {
    return pending.bulk_moved_in_heap;
  }
  // Every change of a heap goes through these, which keep
  // bulk_moved_in_heap.
  static void InsertActive(Pending& pending, Entry& entry);
  // No-op when `slot` is not in the heap.
  static void EraseActive(Pending& pending, const Slot& slot);
  // Where a requeue put a workload.
  enum class Requeued { kNowhere, kActive, kInadmissible };
  Requeued RequeueEntry(const std::string& cluster_queue, const QueueKey& key,
                        RequeueReason reason, bool pending_flavors);
  static bool IsImmediate(QueueingStrategy strategy, RequeueReason reason);
  // The entry of a workload some queue holds (not popped), or null.
  const Entry* Held(const NamespacedName& workload) const;
  // The workloads of `entries` (in queue order), in that order.
  static std::vector<NamespacedName> WorkloadsOf(
      const std::vector<const Entry*>& entries);
  // Forgets the heads popped by the last PopHeads and never requeued.
  void DropPopped();

  std::map<std::string, Pending> queues_;
  absl::flat_hash_set<std::unique_ptr<Entry>, EntryHash, EntryEq> where_;
  std::vector<NamespacedName> popped_;
  uint64_t park_version_ = 0;
};

template <typename Pred>
std::vector<Manager::Head> Manager::PopHeads(Pred is_active) {
  DropPopped();
  ++park_version_;
  std::vector<Head> heads;
  for (auto& [name, pending] : queues_) {
    if (pending.active.empty() || pending.nothing_live || !is_active(name)) {
      continue;
    }
    // The first workload not parked with an equivalent.
    const Slot* head = pending.active.FirstNot(
        [&](uint64_t hash) { return IsBulkMoved(pending, hash); });
    if (head == nullptr) {
      pending.nothing_live = true;
      continue;
    }
    ++pending.pop_cycle;
    Entry& entry = *head->entry;
    // A copy: `head` points into the heap that the erase changes.
    EraseActive(pending, Slot(*head));
    entry.set_place(Place::kPopped);
    heads.push_back({name, entry.workload(), entry.object});
    popped_.push_back(heads.back().workload);
  }
  return heads;
}

}  // namespace kq::queue
