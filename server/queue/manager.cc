#include "server/queue/manager.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

#include "server/common/check.h"
#include "server/queue/scheduling_hash.h"

namespace kq::queue {

bool operator<(const QueueKey& a, const QueueKey& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  const int64_t a_ns = absl::ToUnixNanos(a.timestamp);
  const int64_t b_ns = absl::ToUnixNanos(b.timestamp);
  if (a_ns != b_ns) return a_ns < b_ns;
  return std::tie(a.uid, a.workload) < std::tie(b.uid, b.workload);
}

QueueKey KeyFor(const Workload& workload) {
  return QueueKey{workload.priority,
                  QueueOrderTimestamp(workload),
                  workload.meta.uid,
                  {workload.meta.namespace_name, workload.meta.name},
                  &workload};
}

bool Manager::SlotLess::operator()(const Slot& a, const Slot& b) const {
  // QueueKey's order, its first fields read from the slots; ties (rare)
  // are broken by the entries.
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp_ns != b.timestamp_ns) return a.timestamp_ns < b.timestamp_ns;
  if (a.entry == b.entry) return false;
  return Before(*a.entry, *b.entry);
}

bool Manager::Before(const Entry& a, const Entry& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp_ns != b.timestamp_ns) return a.timestamp_ns < b.timestamp_ns;
  return std::tie(a.uid(), a.namespace_name(), a.name()) <
         std::tie(b.uid(), b.namespace_name(), b.name());
}

namespace {

// A workload name's hash, the same whether the name is a key or read from
// an entry.
size_t HashOfName(absl::string_view namespace_name, absl::string_view name) {
  return absl::Hash<std::pair<absl::string_view, absl::string_view>>()(
      {namespace_name, name});
}

}  // namespace

size_t Manager::EntryHash::operator()(const NamespacedName& workload) const {
  return HashOfName(workload.first, workload.second);
}

size_t Manager::EntryHash::operator()(
    const std::unique_ptr<Entry>& entry) const {
  return HashOfName(entry->namespace_name(), entry->name());
}

Manager::Pending& Manager::QueueNamed(const std::string& cluster_queue) {
  auto [it, made] = queues_.try_emplace(cluster_queue);
  if (made) it->second.name = &it->first;
  return it->second;
}

Manager::Entry& Manager::MakeEntry(const QueueKey& key) {
  auto entry = std::make_unique<Entry>();
  SetKey(*entry, key);
  return **where_.insert(std::move(entry)).first;
}

void Manager::SetKey(Entry& entry, const QueueKey& key) {
  entry.priority = key.priority;
  entry.timestamp_ns = absl::ToUnixNanos(key.timestamp);
  // The name stays what where_ found the entry by: a key is set again only
  // for the same workload.
  if (key.object != nullptr) {
    entry.object = key.object;
    entry.owned.reset();
  } else {
    entry.owned =
        std::make_unique<const OwnedKey>(OwnedKey{key.workload, key.uid});
    entry.object = nullptr;
  }
  entry.scheduling_hash =
      key.object == nullptr ? 0 : SchedulingHash(*key.object);
}

bool Manager::HasKey(const Entry& entry, const QueueKey& key) {
  return entry.priority == key.priority &&
         entry.timestamp_ns == absl::ToUnixNanos(key.timestamp) &&
         entry.object == key.object && entry.uid() == key.uid;
}

void Manager::Park(Entry& entry) {
  ++park_version_;
  entry.set_place(Place::kInadmissible);
  KQ_CHECK(entry.pending->inadmissible.size() < Entry::kMaxParked)
      << "a ClusterQueue parks more workloads than an Entry can index";
  entry.parked_index =
      static_cast<uint32_t>(entry.pending->inadmissible.size());
  entry.pending->inadmissible.push_back(&entry);
}

void Manager::Unpark(Entry& entry) {
  std::vector<Entry*>& parked = entry.pending->inadmissible;
  Entry* last = parked.back();
  parked[entry.parked_index] = last;
  last->parked_index = entry.parked_index;
  parked.pop_back();
}

void Manager::UpsertClusterQueue(const std::string& name,
                                 QueueingStrategy strategy) {
  QueueNamed(name).strategy = strategy;
}

std::vector<NamespacedName> Manager::DeleteClusterQueue(
    const std::string& name) {
  std::vector<NamespacedName> held;
  auto it = queues_.find(name);
  if (it == queues_.end()) return held;
  it->second.active.ForEach(
      [&](const Slot& slot) { held.push_back(slot.entry->workload()); });
  for (const Entry* e : it->second.inadmissible) {
    held.push_back(e->workload());
  }
  for (const NamespacedName& w : held) where_.erase(w);
  // Heads popped from it are no longer held by anything either.
  for (const NamespacedName& w : popped_) {
    auto e = where_.find(w);
    if (e != where_.end() && (*e)->pending == &it->second) where_.erase(e);
  }
  queues_.erase(it);
  return held;
}

void Manager::Push(const std::string& cluster_queue, const QueueKey& key) {
  auto held = where_.find(key.workload);
  const bool was_active =
      held != where_.end() && (*held)->place() == Place::kActive;
  Remove(key.workload);
  Pending& pending = QueueNamed(cluster_queue);
  Entry& entry = MakeEntry(key);
  entry.pending = &pending;
  // Kueue's AddOrUpdate: a workload not active already whose equivalent
  // was parked (BestEffortFIFO) is parked without a try.
  if (!was_active && pending.strategy == QueueingStrategy::kBestEffortFIFO &&
      IsBulkMoved(pending, entry.scheduling_hash)) {
    Park(entry);
    return;
  }
  entry.set_place(Place::kActive);
  InsertActive(pending, entry);
  pending.nothing_live = false;
}

void Manager::BulkMove(Pending& pending, uint64_t hash) {
  // Lazily: the heap's workloads of this shape stay where they are and
  // count as parked (IsParked) until QueueInadmissible forgets the shape,
  // so that neither this nor moving them all back costs a step per
  // workload; PopHeads passes over them.
  if (!pending.bulk_moved.insert(hash).second) return;
  pending.bulk_moved_in_heap += pending.active.CountOf(hash);
}

void Manager::InsertActive(Pending& pending, Entry& entry) {
  pending.active.Insert(SlotOf(entry));
  if (IsBulkMoved(pending, entry.scheduling_hash)) {
    ++pending.bulk_moved_in_heap;
  }
}

void Manager::EraseActive(Pending& pending, const Slot& slot) {
  const uint64_t hash = slot.scheduling_hash;
  if (pending.active.Erase(slot) && IsBulkMoved(pending, hash)) {
    --pending.bulk_moved_in_heap;
  }
}

void Manager::Heap::Insert(const Slot& slot) {
  SlotSet& slots = by_hash_[slot.scheduling_hash];
  if (slots.empty() || SlotLess()(slot, *slots.begin())) {
    if (!slots.empty()) firsts_.erase(*slots.begin());
    firsts_.insert(slot);
  }
  slots.insert(slot);
  ++size_;
}

bool Manager::Heap::Erase(const Slot& slot) {
  auto slots = by_hash_.find(slot.scheduling_hash);
  if (slots == by_hash_.end()) return false;
  auto it = slots->second.find(slot);
  if (it == slots->second.end()) return false;
  const bool first = it == slots->second.begin();
  slots->second.erase(it);
  --size_;
  if (first) {
    firsts_.erase(slot);
    if (!slots->second.empty()) firsts_.insert(*slots->second.begin());
  }
  if (slots->second.empty()) by_hash_.erase(slots);
  return true;
}

int32_t Manager::Heap::CountOf(uint64_t hash) const {
  auto slots = by_hash_.find(hash);
  return slots == by_hash_.end() ? 0
                                 : static_cast<int32_t>(slots->second.size());
}

bool Manager::IsParked(const Entry& entry) {
  if (entry.place() == Place::kInadmissible) return true;
  return entry.place() == Place::kActive &&
         IsBulkMoved(*entry.pending, entry.scheduling_hash);
}

void Manager::Remove(const NamespacedName& workload) {
  auto it = where_.find(workload);
  if (it == where_.end()) return;
  Entry& entry = **it;
  if (entry.place() == Place::kActive) {
    EraseActive(*entry.pending, SlotOf(entry));
  }
  if (entry.place() == Place::kInadmissible) Unpark(entry);
  where_.erase(it);
}

const Manager::Entry* Manager::Held(const NamespacedName& workload) const {
  auto it = where_.find(workload);
  if (it == where_.end() || (*it)->place() == Place::kPopped) return nullptr;
  return it->get();
}

void Manager::DropPopped() {
  for (const NamespacedName& w : popped_) {
    auto it = where_.find(w);
    if (it != where_.end() && (*it)->place() == Place::kPopped) {
      where_.erase(it);
    }
  }
  popped_.clear();
}

bool Manager::IsImmediate(QueueingStrategy strategy, RequeueReason reason) {
  if (strategy == QueueingStrategy::kStrictFIFO) {
    return reason != RequeueReason::kNamespaceMismatch;
  }
  return reason == RequeueReason::kFailedAfterNomination ||
         reason == RequeueReason::kPendingPreemption ||
         reason == RequeueReason::kPreemptionFailed;
}

Manager::Requeued Manager::RequeueEntry(const std::string& cluster_queue,
                                        const QueueKey& key,
                                        RequeueReason reason,
                                        bool pending_flavors) {
  auto held = where_.find(key.workload);
  if (held != where_.end() && *(*held)->pending->name != cluster_queue) {
    Remove(key.workload);
    held = where_.end();
  }
  // A held entry knows its queue (every pass requeues each head it popped):
  // no walk of queues_ by name.
  Pending& pending =
      held != where_.end() ? *(*held)->pending : QueueNamed(cluster_queue);
  // Kueue's requeueIfNotPresent (backoff is not modelled yet: every requeue
  // is past its backoff).
  const bool to_active =
      IsImmediate(pending.strategy, reason) ||
      pending.queue_inadmissible_cycle >= pending.pop_cycle || pending_flavors;
  if (held == where_.end() || (*held)->place() == Place::kPopped) {
    Entry& entry = held == where_.end() ? MakeEntry(key) : **held;
    if (!HasKey(entry, key)) SetKey(entry, key);
    entry.pending = &pending;
    if (!to_active) {
      Park(entry);
      if (pending.strategy == QueueingStrategy::kBestEffortFIFO &&
          (reason == RequeueReason::kNoFit ||
           reason == RequeueReason::kPreemptionNoCandidates)) {
        if (entry.scheduling_hash != 0)
          BulkMove(pending, entry.scheduling_hash);
      }
      return Requeued::kInadmissible;
    }
    entry.set_place(Place::kActive);
    InsertActive(pending, entry);
    pending.nothing_live = false;
    return Requeued::kActive;
  }
  Entry& entry = **held;
  // A workload in the heap stays there, also one parked by its hash (which
  // Kueue would move back to its heap here); kqd only requeues the heads it
  // popped, which never are.
  if (!to_active || entry.place() == Place::kActive) return Requeued::kNowhere;
  // Back to the heap with the key it was parked with, as Kueue moves the
  // stored entry.
  Unpark(entry);
  entry.set_place(Place::kActive);
  InsertActive(pending, entry);
  pending.nothing_live = false;
  return Requeued::kActive;
}

bool Manager::RequeueIfNotPresent(const std::string& cluster_queue,
                                  const QueueKey& key, RequeueReason reason,
                                  bool pending_flavors) {
  return RequeueEntry(cluster_queue, key, reason, pending_flavors) !=
         Requeued::kNowhere;
}

bool Manager::Requeue(const std::string& cluster_queue, const QueueKey& key,
                      RequeueReason reason, bool pending_flavors) {
  return RequeueEntry(cluster_queue, key, reason, pending_flavors) ==
         Requeued::kInadmissible;
}

int Manager::QueueInadmissible(const std::vector<std::string>& cluster_queues,
                               const EligibleFn& eligible) {
  int moved = 0;
  for (const std::string& name : cluster_queues) {
    auto it = queues_.find(name);
    if (it == queues_.end()) continue;
    Pending& pending = it->second;
    pending.queue_inadmissible_cycle = pending.pop_cycle;
    // Those parked with an equivalent are back in the heap once their
    // shapes are forgotten.
    moved += BulkMovedCount(pending);
    pending.bulk_moved.clear();
    pending.bulk_moved_in_heap = 0;
    pending.nothing_live = false;
    std::vector<Entry*> kept;
    for (Entry* entry : pending.inadmissible) {
      if (eligible && !eligible(name, entry->workload())) {
        entry->parked_index = static_cast<uint32_t>(kept.size());
        kept.push_back(entry);
        continue;
      }
      entry->set_place(Place::kActive);
      InsertActive(pending, *entry);
      ++moved;
    }
    pending.inadmissible = std::move(kept);
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
  const Pending& pending = it->second;
  return static_cast<int32_t>(pending.active.size()) - BulkMovedCount(pending);
}

int32_t Manager::PendingInadmissible(const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return 0;
  const Pending& pending = it->second;
  return static_cast<int32_t>(pending.inadmissible.size()) +
         BulkMovedCount(pending);
}

std::vector<NamespacedName> Manager::WorkloadsOf(
    const std::vector<const Entry*>& entries) {
  std::vector<NamespacedName> out;
  out.reserve(entries.size());
  for (const Entry* e : entries) out.push_back(e->workload());
  return out;
}

std::vector<NamespacedName> Manager::ActiveWorkloads(
    const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return {};
  std::vector<const Entry*> entries;
  entries.reserve(it->second.active.size());
  it->second.active.ForEach([&](const Slot& slot) {
    if (!IsBulkMoved(it->second, slot.scheduling_hash)) {
      entries.push_back(slot.entry);
    }
  });
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return Before(*a, *b); });
  return WorkloadsOf(entries);
}

std::vector<NamespacedName> Manager::InadmissibleWorkloads(
    const std::string& cluster_queue) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return {};
  // Parked in no order, and those parked with an equivalent (still in the
  // heap).
  std::vector<const Entry*> entries(it->second.inadmissible.begin(),
                                    it->second.inadmissible.end());
  it->second.active.ForEach([&](const Slot& slot) {
    if (IsBulkMoved(it->second, slot.scheduling_hash)) {
      entries.push_back(slot.entry);
    }
  });
  std::sort(entries.begin(), entries.end(),
            [](const Entry* a, const Entry* b) { return Before(*a, *b); });
  return WorkloadsOf(entries);
}

std::vector<NamespacedName> Manager::PendingWorkloads(
    const std::string& cluster_queue, size_t max) const {
  auto it = queues_.find(cluster_queue);
  if (it == queues_.end()) return {};
  const Pending& pending = it->second;
  std::vector<const Entry*> entries(pending.inadmissible.begin(),
                                    pending.inadmissible.end());
  entries.reserve(entries.size() + pending.active.size());
  pending.active.ForEach(
      [&](const Slot& slot) { entries.push_back(slot.entry); });
  auto before = [](const Entry* a, const Entry* b) { return Before(*a, *b); };
  // A page near the front of a deep queue needs only its first entries in
  // order, not all of them.
  if (max < entries.size()) {
    std::partial_sort(entries.begin(), entries.begin() + max, entries.end(),
                      before);
    entries.resize(max);
  } else {
    std::sort(entries.begin(), entries.end(), before);
  }
  return WorkloadsOf(entries);
}

std::optional<int64_t> Manager::PositionOf(
    const NamespacedName& workload) const {
  const Entry* entry = Held(workload);
  if (entry == nullptr) return std::nullopt;
  int64_t position = 0;
  entry->pending->active.ForEach([&](const Slot& slot) {
    if (Before(*slot.entry, *entry)) ++position;
  });
  for (const Entry* e : entry->pending->inadmissible) {
    if (Before(*e, *entry)) ++position;
  }
  return position;
}

const std::string* Manager::ClusterQueueOf(
    const NamespacedName& workload) const {
  const Entry* entry = Held(workload);
  return entry == nullptr ? nullptr : entry->pending->name;
}

bool Manager::IsInadmissible(const NamespacedName& workload) const {
  const Entry* entry = Held(workload);
  return entry != nullptr && IsParked(*entry);
}

Manager::Queued Manager::WhereQueued(const NamespacedName& workload) const {
  const Entry* entry = Held(workload);
  if (entry == nullptr) return Queued::kNo;
  return IsParked(*entry) ? Queued::kInadmissible : Queued::kActive;
}

bool Manager::HasActive() const {
  for (const auto& [name, pending] : queues_) {
    if (static_cast<int32_t>(pending.active.size()) > BulkMovedCount(pending)) {
      return true;
    }
  }
  return false;
}

}  // namespace kq::queue
